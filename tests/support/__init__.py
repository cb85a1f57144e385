"""What tests and benchmarks share beyond one folder: the ``kit serve`` launcher."""
