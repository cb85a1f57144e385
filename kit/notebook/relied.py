"""What a notebook relied on, from what it did: the register entries and the calls it shows.

:func:`entries_used` is the short table a notebook ends with: the register entries its calls,
checks and comparisons met in this kernel, in two groups. First what its checks rest on: every
choice check's basis (``choice="A15"``, a refusal's code), every value a check read with
:func:`kit.notebook.chosen` or :func:`kit.notebook.problem_code`, every entry a comparison named
(:func:`note`: 13's migration report names the entry giving each side of a difference). Then
what was only met in the answers: the ``svc-assumptions`` header of each answer the companion
saw (or :func:`note` was given, for a plain httpx client's calls), which Jupyter shows folded
into one line of ids. On a server that sends no ``svc-assumptions`` the first group alone is
shown. Its title counts what was used, never the register's size, so an entry added to the
register changes no stored output.

:func:`calls` is a client's call history as a notebook shows it: the partner API's calls, the
simulator's ``/_sim`` control calls left out (``api.history`` still holds every call).

Example::

    >>> table = used_table({"A04": {"answers"}, "A16": {"answers", "checks"}, "A01": {"answers"}})
    >>> head, *groups = repr(table).splitlines()
    >>> head.partition(" (")[0]
    '3 register entries this notebook relied on'
    >>> for line in groups:
    ...     print(line)
     what its checks rest on: 1
      A16  Card states and close errors
     met in the answers only (their svc-assumptions): 2
      A01  Partner token request
      A04  Session initialization data fields
    >>> table.ids
    ['A16', 'A01', 'A04']
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from kit import register
from kit._history import CONTROL_PREFIX, partner_calls
from kit._plural import counted
from kit.notebook.companion import COMPANION
from kit.notebook.register_view import RegisterTable

if TYPE_CHECKING:
    import pandas as pd

    from kit._client import Client

__all__ = [
    "ANSWERS",
    "CHECKS",
    "CONTROL_PREFIX",
    "UsedTable",
    "calls",
    "entries_used",
    "note",
    "used_ids",
    "used_table",
]

#: Where an entry was met: an answer's ``svc-assumptions`` header …
ANSWERS = "answers"
#: … or a check (its basis, a value it read) or a comparison that named it.
CHECKS = "checks"
#: The heading of each group of the closing table, in the order shown.
GROUPS = {CHECKS: "what its checks rest on", ANSWERS: "met in the answers only (their svc-assumptions)"}


def note(ids: Iterable[str], where: str = CHECKS) -> None:
    """Count register entries this kernel met outside its kit clients and checks: ``where`` is
    :data:`ANSWERS` for the ``svc-assumptions`` of an answer a plain httpx client received,
    :data:`CHECKS` for an entry a comparison named (the side of a difference it gives). Ids
    that are not register entries (blank, another server's words) are ignored.

    Raises:
        ValueError: ``where`` is neither.
    """
    if where not in GROUPS:
        raise ValueError(f"where is {ANSWERS!r} or {CHECKS!r}, not {where!r}")
    COMPANION.note(ids, where)


def used_ids() -> dict[str, set[str]]:
    """Each register entry this kernel met, with where: :data:`ANSWERS` (an answer's
    ``svc-assumptions``) and/or :data:`CHECKS` (a choice check's basis, a value it read, an
    entry a comparison named)."""
    known = {e["id"] for e in register.assumptions()}
    found: dict[str, set[str]] = {}

    def add(ids: Iterable[str], where: str) -> None:
        for entry in ids:
            entry = entry.strip()
            if entry in known:
                found.setdefault(entry, set()).add(where)

    for call in list(COMPANION.calls):
        if call.assumptions:
            add(call.assumptions.split(","), ANSWERS)
    add((o.basis for o in COMPANION.results() if o.kind == "choice"), CHECKS)
    add((entry for (entry, _key), _value in COMPANION.reads()), CHECKS)
    for entry, places in COMPANION.noted().items():
        for where in places:
            add([entry], where)
    return found


@dataclass(frozen=True, repr=False)  # the register table's text form
class UsedTable(RegisterTable):
    """The entries a notebook used, titled by what was used and shown in two groups (``groups``:
    :data:`GROUPS`' keys, each a run of ``entries``): what its checks rest on, then what was
    only met in the answers."""

    groups: Mapping[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    topic_width: ClassVar[int] = 48

    def _title(self) -> str:
        return f"{counted(len(self.entries), 'register entry', 'register entries')} this notebook relied on"

    def _body_lines(self) -> list[str]:
        lines = []
        for where, entries in self.groups.items():
            lines += [f" {GROUPS[where]}: {len(entries)}", *(self._line(e) for e in entries)]
        return lines

    def _body_html(self) -> str:
        """What the checks rest on as a table; what the answers alone carried folded into one
        line of ids (it opens to its own table), so that the table a notebook ends with stays
        short however many answers it read."""
        parts = []
        for where, run in self.groups.items():
            heading = f"{GROUPS[where]}: {len(run)}"
            if where == ANSWERS:
                ids = ", ".join(html.escape(e["id"]) for e in run)
                parts.append(
                    f"<details class='kit-answers'><summary>{html.escape(heading)}: {ids}</summary>"
                    f"{self._table_html(run, heading)}</details>"
                )
            else:
                parts.append(self._table_html(run, heading))
        return "".join(parts)


def used_table(used: Mapping[str, Iterable[str]], *, open: bool = True) -> UsedTable:
    """The closing table of the entries ``used`` (``{entry: where}``, as :func:`used_ids`): an
    entry any check named or read in the first group, the rest in the second, each group in
    register order. ``open``: whether the table starts unfolded."""
    groups: dict[str, list[dict[str, Any]]] = {where: [] for where in GROUPS}
    for entry in register.assumptions():
        if entry["id"] in used:
            groups[CHECKS if CHECKS in set(used[entry["id"]]) else ANSWERS].append(entry)
    shown = {where: tuple(entries) for where, entries in groups.items() if entries}
    entries = tuple(e for run in shown.values() for e in run)
    return UsedTable(entries, len(entries), open, shown)


def entries_used(*, open: bool = True) -> UsedTable:
    """The register entries this kernel's calls, checks and comparisons relied on
    (:func:`used_ids`), as the compact register table grouped as :func:`used_table` does: one
    line each, in Jupyter each opens to the spec's words, the choice in one sentence and a link to
    the whole entry in the contract. ``open``: whether the table starts unfolded."""
    return used_table(used_ids(), open=open)


def calls(api: Client, columns: Sequence[str] = ("method", "path", "status", "code")) -> pd.DataFrame:
    """``api.history``'s ``columns`` for the partner API's calls only (the simulator's control
    calls, under ``/_sim``, left out), numbered from 1 as the wire view numbers them
    (``api.wire()``'s ``call 7`` is row 7), empty cells as ``-``."""
    return partner_calls(api.history)[list(columns)].fillna("-")
