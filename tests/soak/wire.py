"""A lean HTTP/1.1 client for the soak: keep-alive connections on asyncio streams, nothing else.

httpx's async pool costs the load generator about 2 ms of CPU a request on this machine (its
pool scans every connection per request), three times what the simulator spends answering:
the soak would measure its own client. This one writes each request in one piece and reads
``Content-Length`` bodies; the simulator answers nothing else (no chunked bodies).

    >>> pool = Pool("http://127.0.0.1:8000", size=16)  # doctest: +SKIP
    >>> answer = await pool.request("GET", "/_sim/health")  # doctest: +SKIP
    >>> answer.status, answer.json()["status"]  # doctest: +SKIP
    (200, 'ok')
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

_NO_BODY = frozenset({204, 304})


@dataclass
class Answer:
    """A response: status, headers (lower-case names) and body."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def exchange(self, request: bytes) -> Answer:
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding"):
            raise ConnectionError("chunked answers are not read by the soak's client")
        length = 0 if status in _NO_BODY else int(headers.get("content-length", "0"))
        body = await self.reader.readexactly(length) if length else b""
        return Answer(status, headers, body)

    def close(self) -> None:
        self.writer.close()


class Pool:
    """At most ``size`` keep-alive connections to ``base_url`` (loopback), reused last in, first out."""

    def __init__(self, base_url: str, size: int) -> None:
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.size = size
        self._idle: list[_Connection] = []
        self._slots = asyncio.Semaphore(size)
        self._host_header = f"{self.host}:{self.port}"

    async def request(
        self,
        method: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        body: Any = None,
        content: bytes | None = None,
        content_type: str = "application/json",
    ) -> Answer:
        """Send one request; ``body`` is sent as JSON, ``content`` as it is."""
        if body is not None:
            content = json.dumps(body, separators=(",", ":")).encode()
        head = [f"{method} {path} HTTP/1.1", f"host: {self._host_header}"]
        for name, value in (headers or {}).items():
            head.append(f"{name}: {value}")
        if content is not None:
            head.append(f"content-type: {content_type}")
            head.append(f"content-length: {len(content)}")
        elif method in ("POST", "PUT", "PATCH"):
            head.append("content-length: 0")
        request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (content or b"")
        async with self._slots:
            for attempt in (1, 2):
                fresh = not self._idle
                conn = self._idle.pop() if self._idle else await self._open()
                try:
                    answer = await conn.exchange(request)
                except (asyncio.IncompleteReadError, ConnectionError) as exc:
                    conn.close()
                    # A kept-alive connection the server closed meanwhile read nothing of ours: send
                    # again once on a new one. Anything else is a real failure.
                    nothing_read = isinstance(exc, asyncio.IncompleteReadError) and not exc.partial
                    if attempt == 2 or fresh or not nothing_read:
                        raise
                    continue
                if answer.headers.get("connection", "").lower() == "close":
                    conn.close()
                else:
                    self._idle.append(conn)
                return answer
        raise AssertionError("unreachable")

    async def _open(self) -> _Connection:
        reader, writer = await asyncio.open_connection(self.host, self.port)
        return _Connection(reader, writer)

    async def aclose(self) -> None:
        for conn in self._idle:
            conn.close()
        self._idle.clear()
