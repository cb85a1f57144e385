"""Notebook tests: ``kit regress``, the leak scanner, the template, the nbval sanitize rules.

Tests that start kernels carry the ``papermill`` mark, registered in ``tests/conftest.py``
(``-m "not papermill"`` skips them for a fast loop). Each module is one concern, so
``pytest -n 2 --dist loadscope`` spreads the kernel-starting modules over the workers.
"""
