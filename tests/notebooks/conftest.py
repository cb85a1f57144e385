"""Notebook tests: ``kit regress``, the leak scanner, the template, the nbval sanitize rules.

Tests that start kernels carry the ``papermill`` mark (``-m "not papermill"`` skips them for a
fast loop). Each module is one concern, so ``pytest -n 2 --dist loadscope`` spreads the
kernel-starting modules over the workers.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "papermill: starts Jupyter kernels through kit regress (about 2 s each)"
    )
