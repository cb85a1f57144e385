"""A loopback webhook receiver on the soak's event loop, which can be taken down and up again.

Down, nothing listens on its port (connections are refused) and the connections it had are
closed: the simulator's deliveries fail and wait for their retries on the clock (A25). Up, it
answers every POST ``200`` with an empty body, keeping connections alive.

    >>> receiver = Receiver()  # doctest: +SKIP
    >>> await receiver.up(); receiver.url  # doctest: +SKIP
    'http://127.0.0.1:…/hook'
    >>> await receiver.down()  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextlib

_OK = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"
_MAX_HEADER = 64 * 1024


class Receiver:
    """Counts the deliveries it received while up."""

    def __init__(self) -> None:
        self.port = 0
        self.received = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    @property
    def is_up(self) -> bool:
        return self._server is not None

    async def up(self) -> None:
        """Listen (on the same port as before, once one was picked)."""
        if self._server is None:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
            self.port = self._server.sockets[0].getsockname()[1]

    async def down(self) -> None:
        """Stop listening and drop every open connection."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        for writer in list(self._writers):
            writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), timeout=5)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if len(head) > _MAX_HEADER:
                    return
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip() or 0)
                await reader.readexactly(length)
                self.received += 1
                writer.write(_OK)
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()
