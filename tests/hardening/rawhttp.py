"""HTTP/1.1 over a plain socket, for requests httpx will not send as written: dot segments
left in the path, a ``Content-Length`` larger than the body actually sent, a body streamed
until the server answers."""

from __future__ import annotations

import json
import select
import socket
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes
    seconds: float
    sent: int = 0

    def json(self) -> Any:
        return json.loads(self.body)


def _address(base_url: str) -> tuple[str, int]:
    parts = urlsplit(base_url)
    assert parts.hostname in ("127.0.0.1", "localhost"), "loopback only"
    return parts.hostname, int(parts.port or 80)


def _read_response(sock: socket.socket, deadline: float) -> tuple[int, dict[str, str], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length and time.monotonic() < deadline:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, headers, body[:length]


def request(
    base_url: str,
    method: str,
    target: str,
    headers: dict[str, str],
    body: bytes = b"",
    *,
    timeout: float = 10.0,
) -> RawResponse:
    """Send the request line, headers and body exactly as given; read one response."""
    host, port = _address(base_url)
    start = time.monotonic()
    with socket.create_connection((host, port), timeout=timeout) as sock:
        lines = [f"{method} {target} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
        sent = 0
        try:
            sock.sendall(raw)
            sent = len(body)
        except OSError:
            pass  # the server may answer and close before reading everything
        status, hdrs, data = _read_response(sock, start + timeout)
    return RawResponse(status, hdrs, data, time.monotonic() - start, sent)


def stream_until_answered(
    base_url: str,
    target: str,
    headers: dict[str, str],
    *,
    total: int,
    chunk: int = 16384,
    pause: float = 0.005,
    timeout: float = 10.0,
) -> RawResponse:
    """POST a chunked body of up to ``total`` bytes, one chunk at a time, stopping as soon
    as the server has answered (or stops reading). ``sent`` says how much went out."""
    host, port = _address(base_url)
    start = time.monotonic()
    with socket.create_connection((host, port), timeout=timeout) as sock:
        lines = [f"POST {target} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        lines.append("Transfer-Encoding: chunked")
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        piece = f"{chunk:x}\r\n".encode() + b" " * chunk + b"\r\n"
        sent = 0
        sock.settimeout(1.0)
        while sent < total and time.monotonic() - start < timeout:
            try:
                sock.sendall(piece)
            except (TimeoutError, OSError):
                break  # the server stopped reading
            sent += chunk
            # paced: a little time for the server to read (loopback buffers hold megabytes)
            readable, _, _ = select.select([sock], [], [], pause)
            if readable:
                break  # the answer is there
        status, hdrs, data = _read_response(sock, time.monotonic() + timeout)
    return RawResponse(status, hdrs, data, time.monotonic() - start, sent)
