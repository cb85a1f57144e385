"""Notebook tests: ``kit regress``, the leak scanner, the template, the nbval sanitize rules.

Tests that start kernels carry the ``papermill`` mark, registered in ``tests/conftest.py``
(``-m "not papermill"`` skips them for a fast loop). Each module is one concern, so
``pytest -n 2 --dist loadscope`` spreads the kernel-starting modules over the workers.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kit.notebook import COMPANION, expect_choices
from kit.notebook.basis import require_basis


@pytest.fixture
def judged() -> Iterator[None]:
    """Whatever a test sets of how checks are judged (profile, expected choices, the basis
    switch) is put back after it."""
    saved = COMPANION.judged()
    yield
    COMPANION.use(None)
    COMPANION.seen(*saved)
    expect_choices(None)
    require_basis(False)
