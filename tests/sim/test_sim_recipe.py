"""ARCHITECTURE.md's recipe for a partner endpoint, followed in a temporary module: one row in
the table of operations (``kit/_operations.py``), one route module declaring its endpoint by key
on its ``Routes`` through ``run``; the app serves it at its path, in the order of checks, and the
document lists it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import httpx
import pytest

from kit import _operations
from kit._operations import Operation
from kit.sim import Settings, create_app
from kit.sim import routes as operations
from tests.sim.helpers import partner_token
from tests.sim.helpers.inprocess import InProcess
from tests.sim.helpers.wire import IN_PROCESS

RECIPE_MODULE = """
from starlette.requests import Request
from starlette.responses import Response

from kit.sim.call import Call, RouteReply
from kit.sim.openapi import declare
from kit.sim.pipeline import run
from kit.sim.representations import CardOut
from kit.sim.table import Routes

router = Routes(tags=["recipe"])


@declare(router, "echo_card", CardOut, errors=(403, 404), summary="Read a card again")
async def echo_card(request: Request, card_id: str) -> Response:
    def handle(call: Call) -> RouteReply:
        card = call.find_card(card_id)  # 7
        call.uses("A35")
        return RouteReply(200, CardOut.wire(card))

    return await run(request, handle)
"""


@pytest.fixture
def recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Step 1: one row in the table; step 2: one route module, declaring it by key."""
    row = Operation("echo_card", "recipe", ("GET",), "/recipe/cards/{card_id}", entry="A35", resource="card")
    table = (*_operations.OPERATIONS, row)
    for names in (_operations, operations):  # the table, and the simulator's names for it
        monkeypatch.setattr(names, "OPERATIONS", table)
        monkeypatch.setattr(names, "BY_KEY", {op.key: op for op in table})
        monkeypatch.setattr(names, "MODULES", tuple(dict.fromkeys(op.module for op in table)))
    source = tmp_path / "recipe.py"
    source.write_text(RECIPE_MODULE)
    spec = importlib.util.spec_from_file_location("kit.sim.routes.recipe", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "kit.sim.routes.recipe", module)
    spec.loader.exec_module(module)


def test_the_simulator_serves_the_one_table() -> None:
    assert operations.OPERATIONS is _operations.OPERATIONS
    assert operations.BY_KEY is _operations.BY_KEY and operations.Operation is Operation


@pytest.mark.usefixtures("recipe")
def test_an_endpoint_declared_as_the_recipe_says_is_served_and_documented() -> None:
    app = create_app(Settings(seed=7, allowed_hosts=IN_PROCESS))
    with httpx.Client(transport=InProcess(app), base_url="http://sim") as client:
        refused = client.get("/recipe/cards/card_1")  # step 2 of the order of checks
        assert refused.status_code == 401 and refused.json()["code"] == "invalid-partner-token"
        auth = {"Authorization": f"Bearer {partner_token(client)}"}
        missing = client.get("/recipe/cards/card_nope", headers=auth)
        assert missing.status_code == 404 and missing.json()["code"] == "card-not-found"
        assert "A35" in missing.headers["svc-assumptions"].split(",")
        assert not app.fastapi_built  # served by the route table
        document = client.get("/openapi.json").json()
    operation = document["paths"]["/recipe/cards/{card_id}"]["get"]
    assert operation["summary"] == "Read a card again" and operation["tags"] == ["recipe"]
    assert {"401", "403", "404"} <= set(operation["responses"])
