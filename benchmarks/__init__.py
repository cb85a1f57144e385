"""The benchmarks (``make bench``: ``python -m benchmarks.bench``) and the hardening stress run
(``make stress``: ``python -m benchmarks.stress``), run as modules from the repository root."""
