"""A drifting stand-in for a sandbox: a loopback proxy in front of ``kit serve`` that changes
answers the way a partner API drifts away from its contract.

Each :class:`Rule` picks answers by method and path pattern and changes them: a field's JSON
type, a required field dropped, another ``svc-api-version``, a status the contract does not
list. Everything else passes through unchanged (bodies, headers, statuses). With no rule it is
a recorder: :attr:`DriftingProxy.answers` holds ``(method, path, status)`` of every answer it
passed on, as the server gave it — a count of what the server did, not of what the kit says.

    with DriftingProxy(upstream, [Rule("GET", r"/cards/[^/]+", retype="last4")]) as proxy:
        kit.connect("sandbox", base_url=proxy.base_url, ...)
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import httpx

__all__ = ["OTHER_VERSION", "DriftingProxy", "Rule"]

#: The version the stand-in announces where a rule says so.
OTHER_VERSION = "1.3.0-20250301"
_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "date", "server"}


@dataclass(frozen=True)
class Rule:
    """Change the answers to ``method`` (``"*"``: any) on paths matching ``path`` (a regex,
    the whole path).

    ``retype``: this top-level field becomes an integer (a string's digits, else 0);
    ``drop``: this top-level field is removed; ``version``: announce another API version;
    ``status``: answer with this status instead.
    """

    method: str
    path: str
    retype: str | None = None
    drop: str | None = None
    version: str | None = None
    status: int | None = None

    def matches(self, method: str, path: str) -> bool:
        return self.method in ("*", method) and re.fullmatch(self.path, path) is not None

    def apply(self, status: int, headers: dict[str, str], body: Any) -> tuple[int, dict[str, str], Any]:
        if isinstance(body, dict):
            body = dict(body)
            if self.retype and self.retype in body:
                digits = "".join(ch for ch in str(body[self.retype]) if ch.isdigit())
                body[self.retype] = int(digits or 0)
            if self.drop:
                body.pop(self.drop, None)
        if self.version:
            headers["svc-api-version"] = self.version
        return (self.status or status), headers, body


class _Handler(BaseHTTPRequestHandler):
    server: DriftingProxy
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet: nothing on stderr
        pass

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length else b""
        dropped = _HOP | {"host"} | self.server.drop_request
        headers = {k: v for k, v in self.headers.items() if k.lower() not in dropped}
        upstream = self.server.http.request(self.command, self.path, content=data, headers=headers)
        status = upstream.status_code
        out = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP | self.server.drop_answer}
        body: Any = upstream.content
        path = self.path.split("?", 1)[0]
        rules = [r for r in self.server.rules if r.matches(self.command, path)]
        if rules and "json" in upstream.headers.get("content-type", "") and upstream.content:
            body = upstream.json()
            for rule in rules:
                status, out, body = rule.apply(status, out, body)
            body = json.dumps(body).encode()
        else:
            for rule in rules:
                status, out, _ = rule.apply(status, out, None)
        self.server.answers.append((self.command, path, status))
        self.send_response(status)
        for k, v in out.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = _forward


class DriftingProxy(ThreadingHTTPServer):
    """The stand-in (see the module docstring), on 127.0.0.1 and a free port, in a thread."""

    daemon_threads = True

    def __init__(
        self,
        upstream: str,
        rules: list[Rule],
        *,
        drop_request: Iterable[str] = (),
        drop_answer: Iterable[str] = (),
    ) -> None:
        """``drop_request``, ``drop_answer``: header names (any case) of the requests never
        forwarded upstream, of the answers never passed on."""
        super().__init__(("127.0.0.1", 0), _Handler)
        self.rules = rules
        self.drop_request = frozenset(name.lower() for name in drop_request)
        self.drop_answer = frozenset(name.lower() for name in drop_answer)
        self.answers: list[tuple[str, str, int]] = []  # (method, path, status) of every answer passed on
        self.http = httpx.Client(base_url=upstream, timeout=10.0)
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> DriftingProxy:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.shutdown()
        self.server_close()
        self.http.close()
