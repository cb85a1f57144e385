"""Notebook tests: ``kit regress``, the leak scanner, the template, the nbval sanitize rules.

Tests that start kernels carry the ``papermill`` mark, registered in ``tests/conftest.py``
(``-m "not papermill"`` skips them for a fast loop). Each module is one concern, so
``pytest -n 2 --dist loadscope`` spreads the kernel-starting modules over the workers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

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


@pytest.fixture(autouse=True)
def reports_follow_their_schemas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run a test makes in this process writes a ``junit.xml`` valid against the JUnit
    schema and a ``results.json`` valid against its own (checked as the run ends)."""
    from kit.regress import outputs
    from tests.notebooks.junit_check import valid_junit, valid_results

    finish = outputs.finish

    def checked(*args: Any, **kwargs: Any) -> Any:
        report = finish(*args, **kwargs)
        valid_junit(report.junit)
        valid_results(report.out_dir)
        return report

    monkeypatch.setattr(outputs, "finish", checked)
