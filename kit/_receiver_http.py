"""The HTTP server of the client's loopback webhook receiver (:class:`kit.webhooks.Receiver`).

A ``ThreadingHTTPServer`` on 127.0.0.1 (port chosen by the OS) that logs nothing. It reads a
request's body only by one ``Content-Length`` it can trust, within A22's limit, and closes a
connection that sends nothing for :data:`IDLE_TIMEOUT_S`: before its request, between two
requests of a kept-alive connection, or in the middle of one.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kit.register import value

__all__ = ["IDLE_TIMEOUT_S", "MAX_DELIVERY_BYTES", "loopback_server"]

#: The largest delivery body the receiver reads: the API's own request-body limit (A22).
MAX_DELIVERY_BYTES = int(value("A22")["max_body_bytes"])
#: Seconds a connection to the receiver may send nothing before it is closed (a socket time-out
#: on each read). Longer than the 5 s an httpx client keeps an idle connection (the simulator's
#: deliveries), so the receiver never closes a connection such a client is about to reuse.
IDLE_TIMEOUT_S = 10.0

#: ``deliver(body, headers)``: the status to answer a delivery read in full.
Deliver = Callable[[bytes, Any], int]
#: ``refused(headers, status, started)``: told of a request refused before its body was read.
Refused = Callable[[Any, int, float], None]


def _problem(status: int, code: str, detail: str) -> tuple[int, bytes]:
    # The receiver is not the partner API: its problems are plain RFC 9457 ones (about:blank).
    body = {
        "type": "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "code": code,
        "detail": detail,
    }
    return status, json.dumps(body).encode()


def _refused_length(values: list[str]) -> tuple[int, bytes] | None:
    """The answer to a ``Content-Length`` the receiver does not read by, or ``None``: more than
    one, not a non-negative decimal integer (``-1``, ``+5``, ``0x10``, ``"5, 5"``: 400), or over
    :data:`MAX_DELIVERY_BYTES` (413, before reading any of it). None at all is an empty body."""
    if len(values) > 1:
        return _problem(400, "invalid-content-length", "Send one Content-Length header.")
    if not values:
        return None
    raw = values[0].strip()
    if not (raw.isascii() and raw.isdigit()):
        return _problem(400, "invalid-content-length", "Content-Length must be a non-negative integer.")
    if int(raw) > MAX_DELIVERY_BYTES:
        detail = f"A delivery body may be at most {MAX_DELIVERY_BYTES} bytes (A22)."
        return _problem(413, "payload-too-large", detail)
    return None


def loopback_server(deliver: Deliver, refused: Refused) -> ThreadingHTTPServer:
    """A server bound to a free loopback port, not yet serving: each POST's body goes to
    ``deliver``, whose status is answered with an empty body; a ``Content-Length`` it does not
    read by is answered with a problem, told to ``refused``, and the connection closed."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = IDLE_TIMEOUT_S  # StreamRequestHandler sets it on the socket; a lapse closes it

        def do_POST(self) -> None:
            problem = _refused_length(self.headers.get_all("Content-Length") or [])
            if problem is not None:
                status, text = problem
                self.close_connection = True  # the body is unread: the stream is not trusted
                self.send_response(status)
                self.send_header("Content-Type", "application/problem+json")
                self.send_header("Content-Length", str(len(text)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(text)
                refused(self.headers, status, time.perf_counter())
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            status = deliver(body, self.headers)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return  # a stray stderr line changes notebook outputs

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            return  # never a traceback on stderr

    return Server(("127.0.0.1", 0), Handler)
