"""``kit serve``'s HTTP protocol: uvicorn's, with a time limit on a request's headers (A72).

uvicorn closes an idle kept-alive connection (``timeout_keep_alive``) but has no limit on how
long a request's headers may take: a client that sends one byte of them every half second holds
its connection, and a few hundred such clients hold the server. :func:`with_header_timeout`
gives uvicorn's protocol class a timer, armed when a connection opens and when a request's first
byte arrives, disarmed when its headers are complete; when it fires, the connection is closed.
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
    """What :func:`with_header_timeout` adds to uvicorn's protocol class: a timer on a request's
    headers, closing the connection when it fires. Mixed in before the protocol, whose attributes
    (``loop``, ``transport``, ``cycle``) it uses."""

    _header_seconds: float
    _header_timer: asyncio.TimerHandle | None = None
    loop: Any
    transport: Any
    cycle: Any

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and (self.cycle is None or self.cycle.response_complete):
            self._arm()  # the first bytes of a new request on a kept-alive connection
        super().data_received(data)  # type: ignore[misc]

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self._header_seconds, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()

    def on_headers_complete(self) -> None:  # httptools' callback
        self._disarm()
        super().on_headers_complete()  # type: ignore[misc]

    def handle_events(self) -> None:  # h11's: it reads the headers whole, then calls this
        super().handle_events()  # type: ignore[misc]
        if self.cycle is not None and not self.cycle.response_complete:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]


def with_header_timeout(seconds: float) -> type:
    """uvicorn's HTTP protocol class, closing a connection whose request headers take longer
    than ``seconds`` to arrive (counted from the connection's opening, or from the first byte
    of each later request). The class is named after the protocol it extends
    (``HeaderTimeoutHttpToolsProtocol`` or ``HeaderTimeoutH11Protocol``)."""
    base = _base()
    return type(f"HeaderTimeout{base.__name__}", (_HeaderTimeout, base), {"_header_seconds": seconds})
