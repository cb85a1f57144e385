"""How the version's changes fared in a notebook: each change of the spec's list, the checks that
showed it here, and what came of them — the table notebook 10 ends with.

A check belongs to change N when its name starts with ``change N:`` (``check("change 2: a card
closes with a reason in its request body", spec="change.2")``); nothing else is kept by hand.
The changes come from their records (:func:`kit.register.spec`'s ``change``): a change the spec
says leaves the wire alone (``on_the_wire``, change.9) has nothing to check, and says so; a
change with a wire effect and no check is shown as not checked, never as passed.

Example::

    >>> from kit.notebook.outcome import MARKS, CheckOutcome
    >>> table = changes_checked([
    ...     CheckOutcome("change 2: a card closes with a reason", "passed", kind="spec", basis="change.2"),
    ...     CheckOutcome("change 2: the six reasons", "differs", "…", kind="choice", basis="A15"),
    ... ])
    >>> print(repr(table).splitlines()[2])
      change.2  ≠ differs (2 checks: 1 passed, 1 differs)
    >>> print(repr(table).splitlines()[9])
      change.9  — no wire effect (category.1)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from kit import _plural, register
from kit.notebook.companion import COMPANION
from kit.notebook.outcome import MARKS, CheckOutcome

__all__ = ["ChangeRow", "ChangesTable", "changes_checked"]

#: A check of change N: its name starts with ``change N:``.
_NAME = re.compile(r"^change (\d+): (.+)$")
#: The worst outcome first: a change's result is the worst of its checks' (skips apart).
_ORDER = ("failed", "differs", "passed")


@dataclass(frozen=True)
class ChangeRow:
    """One change: its id (``change.2``), the outcomes of its checks here, and the statements
    saying it has no effect on the wire (``("category.1",)``; empty for a change that has one)."""

    change: str
    checks: tuple[CheckOutcome, ...]
    no_wire: tuple[str, ...] = ()

    @property
    def result(self) -> str:
        """``✔ passed``, ``≠ differs`` (a choice check found another choice: a difference, not a
        failure), ``✘ failed``, ``⊘ skipped`` (every check skipped here), ``not checked here``, or
        ``— no wire effect (…)``."""
        if not self.checks:
            return f"— no wire effect ({', '.join(self.no_wire)})" if self.no_wire else "not checked here"
        counts = Counter(o.outcome for o in self.checks)
        worst = next((kind for kind in _ORDER if counts[kind]), "skipped")
        return f"{MARKS[worst]} {worst}"

    def counted(self) -> str:
        """How many checks, and how many of each outcome when they differ: ``2 checks: 1 passed,
        1 skipped``."""
        counts = Counter(o.outcome for o in self.checks)
        total = _plural.counted(len(self.checks), "check")
        if len(counts) < 2:
            return total
        return total + ": " + ", ".join(f"{counts[kind]} {kind}" for kind in MARKS if counts[kind])


def _shown(outcome: CheckOutcome) -> str:
    """A check as a row lists it: its mark, its name without ``change N:``, its basis."""
    match = _NAME.match(outcome.name)
    name = match.group(2) if match else outcome.name
    basis = f" ({outcome.basis})" if outcome.basis else ""
    return f"{MARKS[outcome.outcome]} {name}{basis}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


@dataclass(frozen=True)
class ChangesTable:
    """The changes, one :class:`ChangeRow` each in the spec's order: Markdown in Jupyter (each
    check by name, its outcome and basis), one line per change as text."""

    rows: tuple[ChangeRow, ...]

    def __repr__(self) -> str:
        lines = [f"the {len(self.rows)} changes and the checks that showed them here"]
        for row in self.rows:
            tail = f" ({row.counted()})" if row.checks else ""
            lines.append(f"  {row.change}  {row.result}{tail}")
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        lines = ["| change | its checks here (basis) | result |", "|---|---|---|"]
        for row in self.rows:
            checks = "<br>".join(_cell(_shown(o)) for o in row.checks) or "none"
            lines.append(f"| {row.change} | {checks} | {_cell(row.result)} |")
        return "\n".join(lines) + "\n"


def changes_checked(outcomes: Iterable[CheckOutcome] | None = None) -> ChangesTable:
    """Each change of the spec's list with the checks of ``outcomes`` (default: every check of
    this kernel, :func:`kit.notebook.results`) named ``change N: …``, and what came of them
    (see the module docstring).

    Raises:
        ValueError: a check named for a change the spec does not list (``change 10: …``).
    """
    records = register.fact("change")
    numbers = {int(c["id"].split(".")[1]) for c in records}
    by_change: dict[int, list[CheckOutcome]] = {}
    for outcome in COMPANION.results() if outcomes is None else outcomes:
        match = _NAME.match(outcome.name)
        if match is None:
            continue
        number = int(match.group(1))
        if number not in numbers:
            raise ValueError(f"check {outcome.name!r}: the spec lists no change {number}")
        by_change.setdefault(number, []).append(outcome)
    rows = []
    for record in records:
        number = int(record["id"].split(".")[1])
        no_wire = tuple(record["see"]) if record["on_the_wire"] else ()
        rows.append(ChangeRow(record["id"], tuple(by_change.get(number, ())), no_wire))
    return ChangesTable(tuple(rows))
