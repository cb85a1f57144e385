"""A dialect's translation behind the guards (issue 58, findings 1 and 3): under a dialect that
re-spells the wire, the Host and Origin checks and the concurrency limit (A70, A72) see the
request as it came, and a body is read only when the app reads it, never held past A22's limit.
"""

from __future__ import annotations

import asyncio
import dataclasses
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kit import _choices, register
from kit._dialect import Dialect
from kit.sim import Settings, create_app
from kit.sim import runtime as sim_runtime
from kit.sim.personality import resolve
from kit.sim.server import start_embedded
from tests.hardening import rawhttp
from tests.sim.helpers.contract import PARTNER_A
from tests.sim.helpers.wire import IN_PROCESS, wait_until
from tests.support.launcher import serve_process

CAMEL_FILE = Path(__file__).resolve().parents[2] / "data" / "choices" / "camel.toml"
CAMEL = _choices.load(CAMEL_FILE)
LIMIT = int(register.value("A22")["max_body_bytes"])
CHUNK = 16384
#: Far past A22's limit, and bounded: what a client would have to send if the server held it.
TOTAL = 8 * 1024 * 1024
JSON = {"Content-Type": "application/json"}


#: The token request of the camel dialect: the client's credentials in the form (A01).
FORM = {"grant_type": "client_credentials", "client_id": PARTNER_A[0], "client_secret": PARTNER_A[1]}


def camel_token(base_url: str) -> str:
    resp = httpx.post(base_url + "/oauth/accesstoken", data=FORM, timeout=30)
    assert resp.status_code == 200, resp.text
    return str(resp.json()["access_token"])


# --- 1. a body past A22's limit is answered as without the dialect, never held -----------------


def flood(base_url: str, headers: dict[str, str]) -> rawhttp.RawResponse:
    """A chunked body of TOTAL bytes to ``/v2/accounts`` (camel's path of create_account), sent
    until the server answers; its answer, which must come while the body is still coming."""
    try:
        return rawhttp.stream_until_answered(base_url, "/v2/accounts", headers, total=TOTAL, timeout=8.0)
    except TimeoutError:
        pytest.fail("no answer while the body was coming: the server was holding it")


@pytest.fixture(scope="module")
def camel_served() -> Iterator[str]:
    with serve_process("--choices", str(CAMEL_FILE)) as served:
        yield served.base_url


def test_kit_serve_under_a_dialect_answers_an_unauthenticated_chunked_flood_at_once(
    camel_served: str,
) -> None:
    resp = flood(camel_served, JSON)
    assert resp.status == 401, resp
    assert resp.json()["code"] == "unauthorized" and resp.headers["www-authenticate"].startswith("Token")
    assert resp.headers["x-request-id"].startswith("req_")
    assert resp.sent < 2 * 1024 * 1024, f"the server read {resp.sent} bytes before answering"


def test_kit_serve_under_a_dialect_cuts_an_authenticated_chunked_flood_off_near_the_limit(
    camel_served: str,
) -> None:
    headers = {**JSON, "X-Partner-Authorization": f"Token {camel_token(camel_served)}"}
    resp = flood(camel_served, headers)
    assert resp.status == 413, resp
    assert resp.json()["code"] == "payload-too-large" and "A22" in resp.headers["x-assumptions"]
    assert resp.sent < 2 * 1024 * 1024, f"the server read {resp.sent} bytes before answering"


async def _pull(app: Any, path: str, headers: dict[str, str]) -> tuple[int, str, int]:
    """POST a chunked body of TOTAL bytes to ``app`` in CHUNK pieces: the answer's status and
    code, and how many body bytes the app pulled off the connection."""
    pulled = 0
    status, body = 0, b""

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        if pulled >= TOTAL:
            return {"type": "http.disconnect"}
        pulled += CHUNK
        return {"type": "http.request", "body": b" " * CHUNK, "more_body": pulled < TOTAL}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status, body
        if message["type"] == "http.response.start":
            status = message["status"]
        else:
            body += message.get("body", b"")

    raw = [(b"host", b"sim"), *((k.lower().encode(), v.encode()) for k, v in headers.items())]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": raw,
        "client": ("127.0.0.1", 50000),
        "server": ("sim", 80),
    }
    await app(scope, receive, send)
    return status, httpx.Response(status, content=body).json()["code"], pulled


def _pulled_by(choices: _choices.Overlay | None) -> list[tuple[int, str, int]]:
    app = create_app(Settings(seed=7, choices=choices, allowed_hosts=IN_PROCESS))
    camel = choices is not None

    async def run() -> list[tuple[int, str, int]]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://sim") as client:
            if camel:
                issued = await client.post("/oauth/accesstoken", data=FORM)
            else:
                basic = {"grant_type": "client_credentials"}  # the register's A01: HTTP Basic
                issued = await client.post("/oauth/accesstoken", data=basic, auth=PARTNER_A)
            token = issued.json()["access_token"]
        path = "/v2/accounts" if camel else "/accounts"
        header = (
            {"X-Partner-Authorization": f"Token {token}"} if camel else {"Authorization": f"Bearer {token}"}
        )
        return [await _pull(app, path, JSON), await _pull(app, path, {**JSON, **header})]

    return asyncio.run(run())


def test_a_dialect_pulls_no_more_of_an_oversized_body_than_the_register_spelling() -> None:
    anonymous, authenticated = _pulled_by(CAMEL)
    assert anonymous == (401, "unauthorized", 0)  # the token (step 2) before a byte of the body
    assert authenticated[:2] == (413, "payload-too-large") and authenticated[2] <= LIMIT + CHUNK
    ours = _pulled_by(None)  # the register's spelling: the same answers, as much read
    assert [(s, p) for s, _, p in ours] == [(401, 0), (413, authenticated[2])]


def test_a_deeply_nested_body_under_a_dialect_is_malformed_json_not_a_500() -> None:
    app = create_app(Settings(seed=7, choices=CAMEL, allowed_hosts=IN_PROCESS))

    async def run() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://sim") as client:
            token = (await client.post("/oauth/accesstoken", data=FORM)).json()["access_token"]
            deep = b"[" * 30000 + b"]" * 30000
            return await client.post(
                "/v2/webhook-subscriptions",
                content=deep,
                headers={**JSON, "X-Partner-Authorization": f"Token {token}"},
            )

    resp = asyncio.run(run())
    assert resp.status_code == 400 and resp.json()["code"] == "invalid-request", resp.text  # malformed-json


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
