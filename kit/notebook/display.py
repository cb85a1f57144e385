"""Contract drift in a notebook: what a cell's clients met, shown after the cell.

Inside a Jupyter kernel the companion registers an IPython ``post_run_cell`` hook (the only
place the kit touches IPython's events): after each cell, the drift its clients met is shown
as a display with the MIME type :data:`MIME_TYPE` (the rows, read by ``kit regress``) and one
text line per drift (:func:`text_line`). Against the simulator there is none, so the stored
outputs of the notebooks never change.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

from kit._drift import Drift, DriftLog

__all__ = ["MIME_TYPE", "install", "text_line"]

#: The MIME type of the display that carries a cell's drift to ``kit regress``.
MIME_TYPE = "application/vnd.partner-api-kit._drift+json"


def text_line(drift: Drift) -> str:
    """The line a notebook shows for one drift: ``contract drift: …`` where the spec's word was
    departed from, ``≠ differs from A35 (contract): …`` where a register entry's choice was.

    Example::

        >>> text_line(Drift("status", "POST /sessions", "status", "one of 201", "404", "r1", "endpoint.5"))
        'contract drift: POST /sessions: status: expected one of 201, got 404 (request r1)'
        >>> text_line(Drift("body", "GET /cards/{card_id}", "body.last4", "string", "integer", None, "A35"))
        '≠ differs from A35 (contract): GET /cards/{card_id}: body.last4: expected string, got integer'
    """
    if drift.differs:
        return f"≠ differs from {drift.basis} (contract): {drift}"
    return f"contract drift: {drift}"


class _AfterCell:
    """The ``post_run_cell`` callback: shows the drift met since it last ran."""

    def __init__(self, log: DriftLog) -> None:
        self.log = log
        self.shown = 0

    def __call__(self, *_: Any) -> None:
        rows = self.log.rows(self.shown)
        if not rows:
            return
        self.shown += len(rows)
        from IPython.display import display

        bundle = {
            MIME_TYPE: {"drift": [dataclasses.asdict(d) for d in rows]},
            "text/plain": "\n".join(text_line(d) for d in rows),
        }
        display(bundle, raw=True)


_installed: dict[int, _AfterCell] = {}


def install(log: DriftLog) -> None:
    """Show ``log``'s new rows after each cell: registered once per kernel and log (nothing
    outside IPython)."""
    if id(log) in _installed or "IPython" not in sys.modules:
        return
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None and hasattr(shell, "events"):
        _installed[id(log)] = after = _AfterCell(log)
        shell.events.register("post_run_cell", after)
