"""The call history: one row per HTTP exchange, redacted by mechanism.

:class:`Entry` has only the fields below; the transport fills them from the request line and
a few response headers. No header, body, token or ciphertext is ever handed to this module,
so none can end up in ``api.history``.

Example::

    >>> h = History()
    >>> h.frame().columns.tolist()[:4]
    ['time', 'method', 'path', 'status']
"""

from __future__ import annotations

import threading
from dataclasses import astuple, dataclass, fields
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


__all__ = ["COLUMNS", "Entry", "History"]


@dataclass(frozen=True)
class Entry:
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


COLUMNS = [f.name for f in fields(Entry)]


class History:
    """A thread-safe list of :class:`Entry` shown as a pandas DataFrame."""

    def __init__(self) -> None:
        self._entries: list[Entry] = []
        self._lock = threading.Lock()

    def record(self, entry: Entry) -> None:
        with self._lock:
            self._entries.append(entry)

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> list[Entry]:
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def frame(self) -> pd.DataFrame:
        """Every call so far, oldest first (columns :data:`COLUMNS`)."""
        import pandas as pd

        rows = [astuple(e) for e in self.entries()]
        frame = pd.DataFrame(rows, columns=COLUMNS)
        return frame.astype({"retries": "int64", "replayed": "bool"}) if rows else frame
