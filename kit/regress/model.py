"""What a regression run produces: a :class:`NotebookResult` per notebook (with its named
checks, :class:`CheckResult`, and the contract drift its kernel met), one :class:`RegressReport`
with the run's exit status, and the :class:`RegressError` raised before any kernel starts.

Exit status (:meth:`RegressReport.exit_code`): :data:`EXIT_OK` 0 every notebook passed and
nothing leaked; :data:`EXIT_FAILED` 1 a notebook failed or leaked; :data:`EXIT_USAGE` 2 the run
could not start; :data:`EXIT_DRIFT` 3 an answer differed from the contract (``data/openapi.json``)
— it wins over 1, since a drifting API is the likely cause of the failures it brings; with
``--allow-drift`` drift is only reported.

Drift is a departure from what the spec states. A departure from a register entry — a choice
check that **differs** (:mod:`kit.notebook`) or a contract row whose basis is an entry
(:attr:`kit._drift.Drift.differs`) — is a **difference**: reported apart, and it fails the run
(exit 1) only with ``--strict-choices``.

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

from kit._drift import Drift
from kit.errors import KitError
from kit.regress.scanner import Finding

__all__ = [
    "EXIT_DRIFT",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "Attempt",
    "CheckResult",
    "NotebookResult",
    "RegressError",
    "RegressReport",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_DRIFT = 0, 1, 2, 3


class RegressError(KitError):
    """A regression run cannot start: a refused parameter, a missing variable, no notebook."""

    hint = "see `kit regress --help`"


@dataclass(frozen=True)
class CheckResult:
    """One named check of a notebook (:mod:`kit.notebook`): ``passed``, ``failed``, ``skipped``
    or ``differs`` (``reason`` says why), in ``cell`` (``cell 7``, counted from 1); ``kind`` and
    ``basis`` what it rests on (``spec`` and a spec statement id, ``choice`` and an entry id);
    ``observed`` what a difference observed of the register's keys (:mod:`kit.notebook.observe`)."""

    name: str
    outcome: str
    reason: str = ""
    cell: str = ""
    kind: str = ""
    basis: str = ""
    observed: tuple[Mapping[str, Any], ...] = ()

    @property
    def entries(self) -> tuple[str, ...]:
        """The entries a difference departs from: those its observations name, else its basis."""
        return tuple(dict.fromkeys(str(o.get("entry")) for o in self.observed)) or (self.basis,)


@dataclass(frozen=True)
class Attempt:
    """An earlier run of a notebook that failed before a rerun (``--reruns``): its one-line
    ``message`` (``cell 5 (In [3]): AssertionError: …``), ``details`` (the traceback, redacted)
    and ``seconds``."""

    message: str
    details: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class NotebookResult:
    """The outcome of one notebook: ``passed``, ``failed`` (a cell raised), ``leaked``, or
    ``flaky`` (it failed, then passed on a rerun: ``attempts`` holds the failed runs).

    ``cell`` names the failing cell as in the executed notebook (counted from 1, with its
    execution count: ``cell 5 (In [3])``); ``error`` is ``"<ErrorName>: <short message>"`` with
    any leak redacted; ``details`` the traceback and findings (for JUnit); ``findings`` the leaks
    found in the executed notebook (which is then rewritten with the values redacted);
    ``notes`` what else deserves a look (papermill warnings, kernel stderr, stderr outputs);
    ``stderr`` what the kernel wrote to its stderr, redacted; ``checks`` its named checks in
    order; ``drift`` the contract drift its clients met (:mod:`kit._drift`).
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
    checks: tuple[CheckResult, ...] = ()
    drift: tuple[Drift, ...] = ()
    attempts: tuple[Attempt, ...] = ()

    @property
    def ok(self) -> bool:
        """True when the notebook ran to the end and nothing leaked (at once, or flaky: on a
        rerun)."""
        return self.status in ("passed", "flaky")

    def count(self, outcome: str) -> int:
        """How many of its checks ended ``outcome`` (passed, failed, skipped, differs)."""
        return sum(c.outcome == outcome for c in self.checks)

    @property
    def seed_drift(self) -> tuple[Drift, ...]:
        """Its drift that departs from the spec (the rest differs from a register entry)."""
        return tuple(d for d in self.drift if not d.differs)

    @property
    def differences(self) -> tuple[tuple[str, str, str, str], ...]:
        """Every departure from a register entry: ``(entry, what, where, how)`` — a check that
        differs (its name, cell, reason) or a contract row that differs (operation and field,
        expected and got)."""
        found = [
            (entry, f"check {c.name!r}", c.cell, c.reason)
            for c in self.checks
            if c.outcome == "differs"
            for entry in c.entries
        ]
        found += [
            (d.basis, f"contract {d.operation} {d.field}", "", f"expected {d.expected}, got {d.got}")
            for d in self.drift
            if d.differs
        ]
        return tuple(found)

    @property
    def message(self) -> str:
        """One line for a report: ``cell 5 (In [3]): AssertionError: …`` (empty when passed;
        the first failure when flaky)."""
        if self.status == "flaky":
            return self.attempts[0].message if self.attempts else ""
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
    allow_drift: bool = False
    strict_choices: bool = False

    @property
    def ok(self) -> bool:
        """True when every notebook passed and no report file holds a leak (and, with
        ``strict_choices``, nothing differed from the simulator's choices)."""
        strict = self.strict_choices and bool(self.differences)
        return all(r.ok for r in self.results) and not self.findings and not strict

    @property
    def failed(self) -> tuple[NotebookResult, ...]:
        """The results that did not pass."""
        return tuple(r for r in self.results if not r.ok)

    @property
    def drift(self) -> tuple[tuple[str, Drift], ...]:
        """Every departure from the spec in the contract check: (notebook, drift)."""
        return tuple((r.notebook, d) for r in self.results for d in r.seed_drift)

    @property
    def differences(self) -> tuple[tuple[str, tuple[str, str, str, str]], ...]:
        """Every departure from a register entry: (notebook, difference)."""
        return tuple((r.notebook, d) for r in self.results for d in r.differences)

    @property
    def exit_code(self) -> int:
        """The run's exit status (see the module docstring).

        Example::

            >>> report.exit_code                     # doctest: +SKIP
            3
        """
        if self.drift and not self.allow_drift:
            return EXIT_DRIFT
        return EXIT_OK if self.ok else EXIT_FAILED
