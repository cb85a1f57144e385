"""The simulator's one dialect adapter: under a dialect that renames codes and names, an
answer is held, decoded and encoded once on the server (``kit.sim.dialect.Spoken``, A64 with
A68), ``ServiceHeaders`` knows no dialect, and no module of ``kit.sim`` but the adapter, the
personality, the OpenAPI document and the crypto's seal and open reads a dialect."""

from __future__ import annotations

import ast
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


#: The modules of kit/sim that may read or call a dialect: the server's adapter, the personality
#: (which resolves the overlay once), the OpenAPI document (re-spelled whole) and the crypto's
#: seal and open (``kit.sim.crypto.Payloads``).
READERS = {"dialect.py", "personality.py", "openapi.py", "crypto.py"}
#: Besides them, the contract document's generator imports the register's own spelling (its A67
#: table, the operations' defaults): the vocabulary, not a dialect applied.
IMPORTERS = READERS | {"docgen.py"}
SIM = ROOT / "kit" / "sim"


def _sim_modules() -> list[tuple[str, ast.Module]]:
    return [(str(p.relative_to(SIM)), ast.parse(p.read_text())) for p in sorted(SIM.rglob("*.py"))]


def _reads_a_dialect(node: ast.AST) -> bool:
    """Whether ``node`` is ``dialect.x`` or ``something.dialect.x`` (a read or a call of ``x``)."""
    if not isinstance(node, ast.Attribute):
        return False
    owner = node.value
    return (isinstance(owner, ast.Name) and owner.id == "dialect") or (
        isinstance(owner, ast.Attribute) and owner.attr == "dialect"
    )


def test_only_the_adapter_the_personality_the_document_and_the_crypto_read_a_dialect() -> None:
    readers = {
        name for name, tree in _sim_modules() if any(_reads_a_dialect(node) for node in ast.walk(tree))
    }
    assert readers <= READERS, sorted(readers - READERS)
    assert {"dialect.py", "crypto.py"} <= readers  # the scan sees the adapter and the seal


def test_only_those_modules_import_the_dialect() -> None:
    importers = {
        name
        for name, tree in _sim_modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "kit._dialect"
    }
    assert importers <= IMPORTERS, sorted(importers - IMPORTERS)
