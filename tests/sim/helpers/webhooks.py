"""Webhooks from the receiving end: a loopback receiver, subscriptions, detached ES256
signatures checked by hand."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import ECKey
from joserfc.jws import JWSRegistry

from tests.sim.helpers.wire import b64u, b64u_decode, call, wait_until

WEBHOOK_JWS = JWSRegistry(algorithms=["ES256"], strict_check_header=False)


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


#: ``answer(path, headers, body)`` → the status to answer and any extra headers.
Answer = Callable[[str, dict[str, str], bytes], tuple[int, dict[str, str]]]


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 that hands every POST to ``answer`` (headers with
    lower-case names) and sends back its status, with an empty body."""

    def __init__(self, answer: Answer) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                status, extra = answer(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                self.send_response(status)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{path}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class Receiver:
    """A loopback webhook receiver that records requests and can fail on purpose."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.fail_next = 0  # answer 500 to this many requests, then 200
        self.fail_always = False
        self.redirect_to: str | None = None  # answer 302 to this location instead
        self._lock = threading.Lock()
        self._server = LoopbackServer(self._answer)

    def _answer(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str]]:
        with self._lock:
            self.requests.append(Received(path, headers, body))
            fail = self.fail_always or self.fail_next > 0
            if self.fail_next > 0:
                self.fail_next -= 1
        if self.redirect_to:
            return 302, {"location": self.redirect_to}
        return (500 if fail else 200), {}

    @property
    def url(self) -> str:
        return self._server.url("/hook")

    def received(self) -> list[Received]:
        with self._lock:
            return list(self.requests)

    def wait_for(self, count: int, timeout: float = 5.0) -> list[Received]:
        got = wait_until(lambda: len(self.received()) >= count and self.received(), timeout)
        return list(got or self.received())

    def close(self) -> None:
        self._server.close()


def signing_keys(http: httpx.Client, token: str) -> dict[str, Any]:
    """``GET /webhooks/jwks``: the public keys webhooks are signed with."""
    resp = call(http, "GET", "/webhooks/jwks", token=token)
    assert resp.status_code == 200, resp.text
    return resp.json()


def subscription_request(http: httpx.Client, token: str, url: Any, events: Any) -> httpx.Response:
    """``POST /webhooks/subscriptions`` with ``{"url": url, "events": events}``."""
    return call(
        http, "POST", "/webhooks/subscriptions", token=token, json_body={"url": url, "events": events}
    )


def subscribe(http: httpx.Client, token: str, url: str, events: list[str]) -> dict[str, Any]:
    resp = subscription_request(http, token, url, events)
    assert resp.status_code == 201, resp.text
    return resp.json()


def verify_signature(signature: str, body: bytes, jwks: dict[str, Any]) -> dict[str, Any]:
    """Verify a detached ES256 JWS (RFC 7515 App. F) over ``body``; return its protected header."""
    parts = signature.split(".")
    assert len(parts) == 3 and parts[1] == "", f"not a detached compact JWS: {signature[:40]}"
    header = json.loads(b64u_decode(parts[0]))
    key_dict = next((k for k in jwks["keys"] if k.get("kid") == header.get("kid")), None)
    assert key_dict is not None, (header, jwks)
    key = ECKey.import_key(key_dict)
    full = ".".join([parts[0], b64u(body), parts[2]])
    obj = jws.deserialize_compact(full, key, registry=WEBHOOK_JWS)
    assert obj.payload == body
    return header


def signature_is_valid(signature: str, body: bytes, jwks: dict[str, Any]) -> bool:
    try:
        verify_signature(signature, body, jwks)
    except (JoseError, ValueError, AssertionError):
        return False
    return True
