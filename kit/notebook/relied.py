"""What a notebook relied on, from what it did: the register entries and the calls it shows.

:func:`entries_used` is the short table a notebook ends with: the register entries its calls,
checks and comparisons met in this kernel — every ``svc-assumptions`` header of an answer the
companion saw, every choice check's basis (``choice="A15"``, a refusal's code), every value a
check read with :func:`kit.notebook.chosen` or :func:`kit.notebook.problem_code`. On a server
that sends no ``svc-assumptions`` the checks alone name them. Its title counts what was used,
never the register's size, so an entry added to the register changes no stored output.

:func:`calls` is a client's call history as a notebook shows it: the partner API's calls, the
simulator's ``/_sim`` control calls left out (``api.history`` still holds every call).

Example::

    >>> from kit.notebook import entries_used
    >>> entries_used().ids                                 # doctest: +SKIP
    ['A01', 'A02', 'A04', 'A45']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from kit import register
from kit._history import CONTROL_PREFIX, partner_calls
from kit.notebook.companion import COMPANION
from kit.notebook.register_view import RegisterTable

if TYPE_CHECKING:
    import pandas as pd

    from kit._client import Client

__all__ = ["CONTROL_PREFIX", "calls", "entries_used", "used_ids"]

#: Where each source of an entry is named in the table.
_CALL, _CHECK = "answers", "checks"


def used_ids() -> dict[str, set[str]]:
    """Each register entry this kernel met, with where: ``"answers"`` (an answer's
    ``svc-assumptions``) and/or ``"checks"`` (a choice check's basis, a value it read)."""
    known = {e["id"] for e in register.assumptions()}
    found: dict[str, set[str]] = {}

    def add(ids: Iterable[str], where: str) -> None:
        for entry in ids:
            entry = entry.strip()
            if entry in known:
                found.setdefault(entry, set()).add(where)

    for call in list(COMPANION.calls):
        if call.assumptions:
            add(call.assumptions.split(","), _CALL)
    add((o.basis for o in COMPANION.results() if o.kind == "choice"), _CHECK)
    add((entry for (entry, _key), _value in COMPANION.reads()), _CHECK)
    return found


class UsedTable(RegisterTable):
    """The entries a notebook used: the register table, titled by what was used."""

    topic_width = 48

    def _title(self) -> str:
        return f"the register entries this notebook relied on: {len(self.entries)}"


def entries_used(*, open: bool = True) -> RegisterTable:
    """The register entries this kernel's calls and checks relied on (:func:`used_ids`), as the
    compact register table: one line each, in Jupyter each opens to the spec's words and the
    simulator's choice. ``open``: whether the table starts unfolded."""
    used = used_ids()
    entries = tuple(e for e in register.assumptions() if e["id"] in used)
    return UsedTable(entries, len(entries), open)


def calls(api: Client, columns: Sequence[str] = ("method", "path", "status", "code")) -> pd.DataFrame:
    """``api.history``'s ``columns`` for the partner API's calls only (the simulator's control
    calls, under ``/_sim``, left out), numbered from 1 as the wire view numbers them
    (``api.wire()``'s ``call 7`` is row 7), empty cells as ``-``."""
    return partner_calls(api.history)[list(columns)].fillna("-")
