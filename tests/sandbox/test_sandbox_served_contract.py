"""``kit serve --choices FILE`` serves an ``/openapi.json`` and ``/docs`` whose chosen parts are
the overlay's — what a reader of that server's docs sees is what it answers — while
``data/openapi.json`` stays the contract of the simulator's own choices (over HTTP)."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kit import register
from kit.sim.headers import SESSION_ID
from kit.sim.openapi import SESSION_ROUTES, session_routes
from tests.support.launcher import serve_process

OVERLAY = """\
description = "a sandbox's choices, as kit regress --write-choices writes them"

[A01]
token_lifetime_seconds = 3600

[A15]
reasons = ["lost", "stolen"]

[A60]
id_format = "uuid"

[A61]
send_assumptions = false

[A62]
sent = ["card.last4"]

[A63]
cards_and_events_require_session = true

[A64.codes]
card-already-closed = "card-closed"

[A67.paths]
create_card = "/v2/accounts/{account_id}/payment-cards"
get_card = "/v2/payment-cards/{card_id}"
"""
#: Where the overlay serves the card routes (A67): the session they need is told there.
MOVED: dict[str, str] = tomllib.loads(OVERLAY)["A67"]["paths"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    path = tmp_path_factory.mktemp("overlay") / "theirs.toml"
    path.write_text(OVERLAY, encoding="utf-8")
    with (
        serve_process("--no-control", "--choices", str(path)) as server,
        httpx.Client(base_url=server.base_url, timeout=10) as http,
    ):
        docs = http.get("/docs")
        assert docs.status_code == 200 and "/openapi.json" in docs.text
        yield http.get("/openapi.json").json()


def _session_param(document: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    params = document["paths"][path][method]["parameters"]
    return next(p for p in params if p["in"] == "header" and p["name"] == SESSION_ID)


def test_the_served_document_tells_what_the_overlay_chose(served: dict[str, Any]) -> None:
    schemas = served["components"]["schemas"]
    assert schemas["CardClose"]["properties"]["reason"]["enum"] == ["lost", "stolen", None]
    assert (
        set(schemas["CardOut"]["properties"]) >= {"last4"}
        and "created_at" not in schemas["CardOut"]["properties"]
    )
    assert schemas["CardOut"]["properties"]["card_id"]["format"] == "uuid"
    assert (
        "card-already-closed is sent as card-closed"
        in schemas["Problem"]["properties"]["code"]["description"]
    )
    assert "3600" in schemas["TokenResponse"]["properties"]["expires_in"]["description"]
    for path, method in session_routes(MOVED):
        assert _session_param(served, path, method)["required"] is True, (path, method)
    assert "every answer names the entries" not in served["info"]["description"]
    assert "no svc-assumptions" in served["info"]["description"]
    assert served["info"]["x-choices"]["A15"] == {"reasons": ["lost", "stolen"]}


def test_the_contract_file_keeps_the_simulator_s_own_choices() -> None:
    ours = json.loads((register.data_dir() / "openapi.json").read_text(encoding="utf-8"))
    schemas = ours["components"]["schemas"]
    assert schemas["CardClose"]["properties"]["reason"]["enum"][:-1] == register.value("A15")["reasons"]
    assert "description" not in schemas["Problem"]["properties"]["code"]
    assert "description" not in schemas["TokenResponse"]["properties"]["expires_in"]
    for path, method in SESSION_ROUTES:
        assert _session_param(ours, path, method)["required"] is False, (path, method)
    assert "x-choices" not in ours["info"] and "svc-assumptions" in ours["info"]["description"]
