"""The simulator's one dialect adapter: under a dialect that renames codes and names, an
answer is held, decoded and encoded once on the server (``kit.sim.dialect.Spoken``, A64 with
A68), and ``ServiceHeaders`` knows no dialect."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

import httpx
import pytest

from kit import _choices
from kit.sim import Settings, asgi, create_app
from kit.sim.app import ServiceHeaders
from tests.sim.helpers.wire import IN_PROCESS

ROOT = Path(__file__).resolve().parents[1]
CAMEL = _choices.load(ROOT / "data" / "choices" / "camel.toml")


class _Counting:
    """A JSON decoder counting the texts it reads."""

    def __init__(self, decoder: Any) -> None:
        self.decoder, self.calls = decoder, 0

    def decode(self, text: str) -> Any:
        self.calls += 1
        return self.decoder.decode(text)


def test_a_problem_answer_is_decoded_once_under_renamed_codes_and_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = create_app(Settings(seed=7, choices=CAMEL, allowed_hosts=IN_PROCESS))
    counting = _Counting(asgi._LENIENT)
    monkeypatch.setattr(asgi, "_LENIENT", counting)  # what decode_json(..., constants=True) reads with

    async def get() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://sim") as client:
            return await client.get(
                "/sessions/user_session_initialization_data",
                headers={"X-Partner-Authorization": "Token not-a-token"},
            )

    resp = asyncio.run(get())
    assert resp.status_code == 401, resp.text
    problem = resp.json()
    assert problem["code"] == "unauthorized" and problem["type"].endswith(":unauthorized")  # A64
    assert "X-Request-Id" in resp.headers and "svc-request-id" not in resp.headers
    assert counting.calls == 1


def test_service_headers_holds_no_dialect() -> None:
    assert "dialect" not in inspect.signature(ServiceHeaders).parameters
