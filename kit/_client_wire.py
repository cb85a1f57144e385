"""What a client made with ``record=True`` adds: its redacted wire log (:mod:`kit._wire`), a
call as it went over the wire (:mod:`kit._wire_view`, imported on first use) and a HAR file."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from kit._requestor import Requestor
from kit.errors import ConfigError

if TYPE_CHECKING:
    from kit._wire import Exchange, Recorder
    from kit._wire_view import WireView

__all__ = ["RecordedWire"]


class RecordedWire:
    """The wire log's part of :class:`~kit.Client` (its requestor keeps the recorder)."""

    _requestor: Requestor

    @property
    def wire_log(self) -> Recorder | None:
        """The redacted wire log of a client made with ``record=True`` (:mod:`kit._wire`), else ``None``."""
        return self._requestor.wire

    def _recorded(self) -> Recorder:
        recorder = self._requestor.wire
        if recorder is None:
            raise ConfigError(
                "this client does not record the wire: connect with kit.connect(..., record=True) "
                "(kit.notebook.connect records)"
            )
        return recorder

    def wire(
        self,
        which: int = -1,
        *,
        kind: str | None = "call",
        path: str | None = None,
        method: str | None = None,
        status: int | None = None,
        where: Callable[[Exchange], bool] | None = None,
    ) -> WireView:
        """A call as it went over the wire, redacted: each attempt's request line, headers and
        body, the response's status, headers and body (HTML in Jupyter, text elsewhere).

        ``which``: the last (``-1``), one before (``-3``)… among the calls passing the filters:
        ``path`` (a part of it), ``method``, ``status`` (of any attempt: ``503`` finds the call
        that was retried), ``kind="delivery"`` (a webhook delivery received), ``where``.

        Example::

            >>> api.wire()                                   # doctest: +SKIP
            >>> api.wire(path="/p2p/transfers", status=503)  # doctest: +SKIP

        Raises:
            ConfigError: the client does not record (``record=True``).
            LookupError: no such call.
        """
        from kit._wire_view import WireView, choose

        exchanges = self._recorded().exchanges()
        chosen = choose(exchanges, which, kind=kind, path=path, method=method, status=status, where=where)
        return WireView(chosen)

    def export_har(self, path: str | os.PathLike[str]) -> int:
        """Write every recorded call and delivery as a HAR 1.2 file (open it in a browser's
        network panel); return the number of entries. Redacted as recorded.

        Example::

            >>> api = kit.connect("sim", record=True)       # doctest: +SKIP
            >>> api.accounts.create()                       # doctest: +SKIP
            >>> api.export_har("accounts.har")              # doctest: +SKIP
            3

        Raises:
            ConfigError: the client does not record (``record=True``).
            OSError: the file cannot be written.
        """
        from kit._wire_view import write_har

        return write_har(path, self._recorded().exchanges())
