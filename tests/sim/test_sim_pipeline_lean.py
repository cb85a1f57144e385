"""The pipeline's lean pieces read and write exactly what Starlette's general ones do (issue 37):
headers off the raw list, the body off its ASGI messages, JSON through one decoder and one
encoder, a plain JSON answer's headers written out, init data's body joined from its parts."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from kit.sim import Settings, create_app
from kit.sim.headers import first
from kit.sim.pipeline import (
    MAX_BODY,
    RouteReply,
    _json_response,
    json_body,
    read_body,
    read_json,
)
from kit.sim.problems import Problem
from tests.sim.helpers import partner_token
from tests.sim.helpers.inprocess import InProcess as _InProcess
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
def test_json_body_is_the_compact_utf8_encoding(value: Any) -> None:
    assert json_body(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


@pytest.mark.parametrize(
    "reply",
    [
        RouteReply(200, {"a": 1}),
        RouteReply(201, b'{"b":2}'),
        RouteReply(202, {"a": 1}, {"Retry-After": "1"}),
        RouteReply(204),
        RouteReply(200, {}),
    ],
)
def test_a_json_answer_has_starlettes_headers_in_starlettes_order(reply: RouteReply) -> None:
    answer = _json_response(reply)
    if reply.body is None:
        expected = Response(status_code=reply.status, headers=reply.headers)
    else:
        content = reply.body if isinstance(reply.body, bytes) else json_body(reply.body)
        expected = Response(content, reply.status, reply.headers, media_type="application/json")
    assert (answer.status_code, answer.body, answer.raw_headers) == (
        expected.status_code,
        expected.body,
        expected.raw_headers,
    )
    assert answer.background is None


def test_init_data_is_the_compact_encoding_of_what_it_says() -> None:
    with httpx.Client(
        transport=_InProcess(create_app(Settings(seed=7, allowed_hosts=IN_PROCESS)), ""),
        base_url="http://sim",
    ) as client:
        token = partner_token(client)
        answer = client.get(
            "/sessions/user_session_initialization_data", headers={"Authorization": f"Bearer {token}"}
        )
    assert answer.status_code == 200
    assert list(answer.json()) == ["jwks", "enc", "nonce", "nonce_expires_at"]
    assert answer.content == json_body(answer.json())
