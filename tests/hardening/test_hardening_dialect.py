"""A dialect's translation behind the guards (issue 58, findings 1 and 3): under a dialect that
re-spells the wire, the Host and Origin checks and the concurrency limit (A70, A72) see the
request as it came.
"""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kit import _choices
from kit._dialect import Dialect
from kit.sim import Settings
from kit.sim import runtime as sim_runtime
from kit.sim.personality import resolve
from kit.sim.server import start_embedded
from tests.sim.helpers.contract import PARTNER_A
from tests.sim.helpers.wire import wait_until

CAMEL_FILE = Path(__file__).resolve().parents[2] / "data" / "choices" / "camel.toml"
CAMEL = _choices.load(CAMEL_FILE)


#: The token request of the camel dialect: the client's credentials in the form (A01).
FORM = {"grant_type": "client_credentials", "client_id": PARTNER_A[0], "client_secret": PARTNER_A[1]}


def camel_token(base_url: str) -> str:
    resp = httpx.post(base_url + "/oauth/accesstoken", data=FORM, timeout=30)
    assert resp.status_code == 200, resp.text
    return str(resp.json()["access_token"])


# --- 3. a dialect's header names cannot hide the Host or the Origin --------------------------


#: A dialect whose answers carry `Host` and `Origin` headers: the names a dialect file may no
#: longer choose (kit._dialect_rules), built here past the file's rules, as a server could be.
HOSTILE = _choices.Overlay(
    {**CAMEL.values, "A28": {**CAMEL.values["A28"], "session_expires_at": "Host", "assumptions": "Origin"}}
)


@pytest.fixture
def hostile(monkeypatch: pytest.MonkeyPatch) -> Iterator[httpx.Client]:
    personality = dataclasses.replace(resolve(CAMEL), dialect=Dialect.of(HOSTILE))
    monkeypatch.setattr(sim_runtime, "resolve", lambda overlay: personality)
    server = start_embedded(Settings(seed=7, choices=CAMEL))
    try:
        assert server._server.config.app.sim.personality.dialect.headers["svc-assumptions"] == "Origin"
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            yield http
    finally:
        server.stop()


def test_a_dialect_naming_a_header_host_still_refuses_another_host(hostile: httpx.Client) -> None:
    assert hostile.get("/_sim/health").status_code == 200
    refused = hostile.get("/_sim/snapshot", headers={"host": "attacker.example"})
    assert refused.status_code == 400 and refused.json()["code"] == "host-not-allowed", refused.text[:200]
    assert refused.headers["x-request-id"].startswith("req_") and "A70" in refused.headers["origin"]


def test_a_dialect_naming_a_header_origin_still_refuses_another_origin(hostile: httpx.Client) -> None:
    for method, path in (("GET", "/_sim/snapshot"), ("POST", "/_sim/reset")):
        refused = hostile.request(method, path, headers={"origin": "http://attacker.example"})
        assert refused.status_code == 403, refused.text[:200]
        assert refused.json()["code"] == "origin-not-allowed"
        assert "A70" in refused.headers["origin"]


# --- the concurrency limit counts a request from its first byte ------------------------------


def test_under_a_dialect_a_body_being_read_holds_its_place_in_the_concurrency_limit() -> None:
    server = start_embedded(Settings(seed=7, choices=CAMEL, max_concurrency=1))
    try:
        token = camel_token(server.base_url)
        port = int(server.base_url.rsplit(":", 1)[1])
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as slow:
                slow.sendall(
                    f"POST /v2/accounts HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                    f"X-Partner-Authorization: Token {token}\r\nContent-Type: application/json\r\n"
                    'Transfer-Encoding: chunked\r\n\r\n2\r\n{"\r\n'.encode()
                )
                answers = wait_until(
                    lambda: [r for r in [http.get("/_sim/clock")] if r.status_code == 503], timeout=10
                )
                assert answers, "a request whose body was being read did not count towards A72's limit"
                (busy,) = answers
                assert busy.json()["code"] == "server-busy" and busy.headers["retry-after"] == "1"
                assert "A72" in busy.headers["x-assumptions"] and busy.headers["x-request-id"]
            assert wait_until(lambda: http.get("/_sim/clock").status_code == 200, timeout=10)
    finally:
        server.stop()
