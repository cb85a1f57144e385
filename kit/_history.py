"""The call history: one row per HTTP exchange, redacted by mechanism.

:class:`Entry` has only the fields below; the transport fills them from the request line and
a few response headers. No header, body, token or ciphertext is ever handed to this module,
so none can end up in ``api.history``.

The partner API's calls are numbered from 1 in the order they are recorded, leaving out the
simulator's control calls (under :data:`CONTROL_PREFIX`): :meth:`History.record` returns that
number, the wire view (``api.wire()``) titles a call with it and :func:`partner_calls` numbers
the rows of a table of calls with it, so "call 7" is row 7 wherever a notebook shows them.

Example::

    >>> h = History()
    >>> h.frame().columns.tolist()[:4]
    ['time', 'method', 'path', 'status']
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import pandas as pd


__all__ = ["COLUMNS", "CONTROL_PREFIX", "Entry", "History", "partner_calls"]

#: The simulator's control plane: calls that set the scene, not the partner API's.
CONTROL_PREFIX = "/_sim"


class Entry(NamedTuple):
    """One call: what a log line may hold (method, path, status, code, request id…)."""

    time: datetime
    method: str
    path: str
    status: int | None
    ms: float
    session_type: str | None
    code: str | None
    request_id: str | None
    replayed: bool
    retries: int
    assumptions: str | None


COLUMNS = list(Entry._fields)


class History:
    """A thread-safe list of :class:`Entry` shown as a pandas DataFrame."""

    def __init__(self) -> None:
        self._entries: list[Entry] = []
        self._calls = 0
        self._lock = threading.Lock()

    def record(self, entry: Entry) -> int | None:
        """Keep ``entry``; return its number among the partner API's calls (from 1), ``None``
        for a control call of the simulator."""
        with self._lock:
            self._entries.append(entry)
            if entry.path.startswith(CONTROL_PREFIX):
                return None
            self._calls += 1
            return self._calls

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> list[Entry]:
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._calls = 0

    def frame(self) -> pd.DataFrame:
        """Every call so far, oldest first (columns :data:`COLUMNS`)."""
        import pandas as pd

        rows = self.entries()  # each a tuple, in the order of COLUMNS
        frame = pd.DataFrame(rows, columns=COLUMNS)
        return frame.astype({"retries": "int64", "replayed": "bool"}) if rows else frame


def partner_calls(frame: pd.DataFrame) -> pd.DataFrame:
    """The partner API's calls of a history ``frame`` (control calls left out), indexed by
    their number: the number :meth:`History.record` returned and the wire view shows."""
    control = frame["path"].astype("string").str.startswith(CONTROL_PREFIX).fillna(False)
    shown = frame[~control].reset_index(drop=True)
    shown.index += 1
    return shown
