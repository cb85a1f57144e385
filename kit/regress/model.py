"""What a regression run produces: a :class:`NotebookResult` per notebook, one
:class:`RegressReport`, and the :class:`RegressError` raised before any kernel starts.

Example::

    >>> from pathlib import Path
    >>> NotebookResult("00_quickstart.ipynb", "passed", 2.5, Path("out/regress")).ok
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kit.errors import KitError
from kit.regress.scanner import Finding

__all__ = ["NotebookResult", "RegressError", "RegressReport"]


class RegressError(KitError):
    """A regression run cannot start: a refused parameter, a missing variable, no notebook."""

    hint = "see `kit regress --help`"


@dataclass(frozen=True)
class NotebookResult:
    """The outcome of one notebook: ``passed``, ``failed`` (a cell raised) or ``leaked``.

    ``cell`` names the failing cell as in the executed notebook (counted from 1, with its
    execution count: ``cell 5 (In [3])``); ``error`` is ``"<ErrorName>: <short message>"`` with
    any leak redacted; ``details`` the traceback and findings (for JUnit); ``findings`` the leaks
    found in the executed notebook (which is then rewritten with the values redacted);
    ``notes`` what else deserves a look (papermill warnings, kernel stderr, stderr outputs);
    ``stderr`` what the kernel wrote to its stderr, redacted.
    """

    notebook: str
    status: str
    seconds: float
    output: Path
    cell: str | None = None
    error: str | None = None
    details: str = ""
    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()
    stderr: str = ""

    @property
    def ok(self) -> bool:
        """True when the notebook ran to the end and nothing leaked."""
        return self.status == "passed"

    @property
    def message(self) -> str:
        """One line for a report: ``cell 5 (In [3]): AssertionError: …`` (empty when passed)."""
        if self.ok:
            return ""
        return f"{self.cell}: {self.error}" if self.cell else str(self.error)


@dataclass(frozen=True)
class RegressReport:
    """What a run produced: one result per notebook, the report files, leaks in the reports."""

    results: tuple[NotebookResult, ...]
    out_dir: Path
    junit: Path
    summary_path: Path
    summary: str
    parameters: Mapping[str, Any] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()

    @property
    def ok(self) -> bool:
        """True when every notebook passed and no report file holds a leak."""
        return all(r.ok for r in self.results) and not self.findings

    @property
    def failed(self) -> tuple[NotebookResult, ...]:
        """The results that did not pass."""
        return tuple(r for r in self.results if not r.ok)
