"""The ASGI helpers (``kit.sim.asgi``) read and write exactly what Starlette's general classes and
the json module do: headers off the raw list, set on it as ``MutableHeaders`` sets them, JSON
through one decoder and one encoder; the body read with its limit; init data's body joined from
its parts."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from starlette.datastructures import MutableHeaders
from starlette.requests import ClientDisconnect, Request

from kit.sim import Settings, create_app
from kit.sim.asgi import decode_json, encode_json, first, put
from kit.sim.pipeline import MAX_BODY, read_body, read_json
from kit.sim.problems import Problem
from tests.sim.helpers import partner_token
from tests.sim.helpers.inprocess import InProcess
from tests.sim.helpers.wire import IN_PROCESS

RAW = [
    (b"host", b"sim"),
    (b"x-twice", b"first"),
    (b"authorization", b"Bearer t\xe9"),
    (b"x-twice", b"second"),
    (b"content-type", b"application/json"),
]


def _request(headers: list[tuple[bytes, bytes]], messages: list[dict[str, Any]] | None = None) -> Request:
    queue = list(messages or [])

    async def receive() -> dict[str, Any]:
        return queue.pop(0)

    scope = {"type": "http", "method": "POST", "path": "/", "headers": headers, "query_string": b""}
    return Request(scope, receive)


@pytest.mark.parametrize(
    "name", ["host", "x-twice", "authorization", "content-type", "idempotency-key", "X-Twice"]
)
def test_a_header_is_what_starlette_reads(name: str) -> None:
    request = _request(RAW)
    assert first(request.scope, name.lower().encode("latin-1")) == request.headers.get(name)


def _body(messages: list[dict[str, Any]]) -> bytes:
    return asyncio.run(read_body(_request([], messages)))


def test_a_body_in_parts_is_joined_and_a_disconnect_is_starlettes() -> None:
    parts = [
        {"type": "http.request", "body": b'{"a":', "more_body": True},
        {"type": "http.request", "body": b"", "more_body": True},
        {"type": "http.request", "body": b"1}"},
    ]
    assert _body(parts) == b'{"a":1}'
    assert _body([{"type": "http.request"}]) == b""
    with pytest.raises(ClientDisconnect):
        _body([{"type": "http.request", "body": b"{", "more_body": True}, {"type": "http.disconnect"}])


def test_a_body_past_the_limit_is_refused_before_the_rest_is_read() -> None:
    chunk = b"x" * (MAX_BODY // 2 + 1)
    parts = [{"type": "http.request", "body": chunk, "more_body": True}] * 2
    parts.append({"type": "http.disconnect"})  # never reached: refused at the second part
    with pytest.raises(Problem) as refused:
        _body(parts)
    assert refused.value.status == 413


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        (b'{"a": [1, 2.5, "\\u00e9", null, true]}', {"a": [1, 2.5, "é", None, True]}),
        (b"  ", None),
        (b"\xef\xbb\xbf{}", "malformed-json"),  # a BOM, as json.loads refuses it
        (b'{"a": NaN}', "malformed-json"),
        (b'{"a": Infinity}', "malformed-json"),
        (b'{"a": 1', "malformed-json"),
        (b"\xff", "malformed-json"),
    ],
)
def test_a_json_body_is_read_as_json_loads_reads_it(raw: bytes, parsed: Any) -> None:
    request = _request([(b"content-type", b"application/json")], [{"type": "http.request", "body": raw}])
    try:
        got = asyncio.run(read_json(request))
    except Problem as problem:
        got = problem.code
    assert got == parsed


@pytest.mark.parametrize("value", [{"b": "é", "a": [1, 2.5, None]}, [], "x", {"nested": {"k": "\u2028"}}])
def test_encode_json_is_the_compact_utf8_encoding(value: Any) -> None:
    assert encode_json(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def test_init_data_is_the_compact_encoding_of_what_it_says() -> None:
    with httpx.Client(
        transport=InProcess(create_app(Settings(seed=7, allowed_hosts=IN_PROCESS)), ""),
        base_url="http://sim",
    ) as client:
        token = partner_token(client)
        answer = client.get(
            "/sessions/user_session_initialization_data", headers={"Authorization": f"Bearer {token}"}
        )
    assert answer.status_code == 200
    assert list(answer.json()) == ["jwks", "enc", "nonce", "nonce_expires_at"]
    assert answer.content == encode_json(answer.json())


@pytest.mark.parametrize(
    "raw",
    [b'{"a": NaN, "b": [1e999]}', b"\xef\xbb\xbf{}", '{"é": 1}'.encode("utf-16"), b'{"a": 1', b"\xff"],
)
def test_a_decrypted_payload_is_read_as_json_loads_reads_bytes(raw: bytes) -> None:
    def outcome(read: Any) -> Any:
        try:
            return repr(read(raw))
        except ValueError as exc:
            return type(exc)

    assert outcome(lambda b: decode_json(b, constants=True)) == outcome(json.loads)


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ([], b"svc-a"),
        ([(b"content-type", b"x")], b"svc-a"),
        ([(b"svc-a", b"old"), (b"x", b"1")], b"svc-a"),
        ([(b"svc-a", b"1"), (b"x", b"2"), (b"svc-a", b"3"), (b"svc-a", b"4")], b"svc-a"),
    ],
)
def test_put_sets_a_header_as_mutable_headers_does(raw: list[tuple[bytes, bytes]], name: bytes) -> None:
    ours = list(raw)
    put(ours, {k for k, _ in ours}, name, b"new")
    theirs = {"type": "http.response.start", "headers": list(raw)}
    MutableHeaders(scope=theirs)[name.decode()] = "new"
    assert ours == theirs["headers"]
