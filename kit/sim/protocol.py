"""``kit serve``'s HTTP protocol: uvicorn's, with a time limit on a request's headers (A72).

uvicorn closes an idle kept-alive connection (``timeout_keep_alive``) but has no limit on how
long a request's headers may take: a client that sends one byte of them every half second holds
its connection, and a few hundred such clients hold the server. :func:`with_header_timeout`
gives uvicorn's protocol class a deadline, set when a connection opens and when a request's first
byte arrives, cleared when its headers are complete; when it passes, the connection is closed.
No library offers this for uvicorn; it is the one thing this subclass adds.

    >>> config = uvicorn.Config(app, http=with_header_timeout(20.0))  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["with_header_timeout"]


def _base() -> type:
    """uvicorn's protocol for ``http="auto"``: httptools' when it is installed, else h11's."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    except ImportError:  # uvicorn without httptools
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol


class _HeaderTimeout:
    """What :func:`with_header_timeout` adds to uvicorn's protocol class: a deadline on a request's
    headers, closing the connection when it passes. Mixed in before the protocol, whose
    attributes (``loop``, ``transport``, ``cycle``) it uses.

    A request only sets and clears the deadline; the one timer of a connection is made when none
    is pending and, when it fires early (the deadline moved on with later requests), set again
    for the deadline then in force. A timer made and cancelled for every request cost the event
    loop more than the rest of this class.
    """

    _header_seconds: float
    _header_deadline: float | None = None  # the loop's time by which the headers must be in
    _header_timer: asyncio.TimerHandle | None = None
    loop: Any
    transport: Any
    cycle: Any

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._header_deadline is None and (self.cycle is None or self.cycle.response_complete):
            self._arm()  # the first bytes of a new request on a kept-alive connection
        super().data_received(data)  # type: ignore[misc]

    def _arm(self) -> None:
        self._header_deadline = deadline = self.loop.time() + self._header_seconds
        if self._header_timer is None:
            self._header_timer = self.loop.call_at(deadline, self._check_headers)

    def _check_headers(self) -> None:
        self._header_timer = None
        deadline = self._header_deadline
        if deadline is None:  # no request's headers pending: a later request sets a timer again
            return
        if self.loop.time() < deadline:  # later requests moved the deadline on
            self._header_timer = self.loop.call_at(deadline, self._check_headers)
        elif not self.transport.is_closing():
            self.transport.close()

    def on_headers_complete(self) -> None:  # httptools' callback
        self._header_deadline = None
        super().on_headers_complete()  # type: ignore[misc]

    def handle_events(self) -> None:  # h11's: it reads the headers whole, then calls this
        super().handle_events()  # type: ignore[misc]
        if self.cycle is not None and not self.cycle.response_complete:
            self._header_deadline = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._header_deadline = None
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)  # type: ignore[misc]


def with_header_timeout(seconds: float) -> type:
    """uvicorn's HTTP protocol class, closing a connection whose request headers take longer
    than ``seconds`` to arrive (counted from the connection's opening, or from the first byte
    of each later request). The class is named after the protocol it extends
    (``HeaderTimeoutHttpToolsProtocol`` or ``HeaderTimeoutH11Protocol``)."""
    base = _base()
    return type(f"HeaderTimeout{base.__name__}", (_HeaderTimeout, base), {"_header_seconds": seconds})
