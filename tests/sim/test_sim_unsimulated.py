"""service.1's areas that the simulator does not serve, declared (A69) and held to it.

The seed names external card transfers, digital wallet tokens, payback rewards and savings among
what the service manages, and shows none of their endpoints. A69 says the simulator serves none
of them (savings only through the close that 1.2.0 removed): no route of the simulator's index,
no document path and no client method is theirs, and a path of theirs is 404 not-found under
both versions, as any path the simulator does not know.
"""

from __future__ import annotations

import httpx
import pytest

import kit
from kit import register
from kit.sim.routes import OPERATIONS
from tests.sim.helpers.journeys import Journey, journey
from tests.sim.helpers.wire import assert_problem, call

AREAS: list[str] = register.value("A69")["areas"]
#: The one savings path the simulator knows: the close 1.2.0 removed (A29, A65).
SAVINGS_CLOSE = "/accounts/{account_id}/savings/close"


#: What names an area in a path or a method: its own words, and its former category names
#: (category.1: External Card Transfers were "Top Up", Digital Wallet Tokens "Tokens"; a token
#: word alone is the partner token's, so the wallet's is "wallet").
MARKS = {
    "external card transfers": ["external", "topup", "top_up", "top-up"],
    "digital wallet tokens": ["wallet"],
    "payback rewards": ["payback", "reward"],
    "savings": ["saving"],
}


def _words(area: str) -> list[str]:
    return MARKS[area]


def _paths(area: str) -> list[str]:
    snake = area.replace(" ", "_")
    return [f"/{snake}", f"/{area.replace(' ', '-')}", f"/accounts/{{id}}/{snake}", f"/cards/{{id}}/{snake}"]


def test_the_register_declares_the_four_areas_and_service_1_links_it() -> None:
    service = register.statement("service.1")
    assert "A69" in service["chosen_by"]
    for area in AREAS:
        assert area in service["text"], area
    assert set(AREAS) == set(MARKS)


@pytest.mark.parametrize("area", AREAS)
def test_no_route_of_the_simulator_is_of_an_unsimulated_area(area: str) -> None:
    paths = [op.path for op in OPERATIONS if op.path != SAVINGS_CLOSE]
    for word in _words(area):
        hits = [p for p in paths if word in p]
        assert not hits, (area, word, hits)


@pytest.mark.parametrize("area", AREAS)
def test_the_client_has_no_resource_for_an_unsimulated_area(area: str) -> None:
    names = {n for n in dir(kit.Client) if not n.startswith("_")}
    for word in _words(area):
        assert not [n for n in names if word in n], (area, word)


@pytest.fixture
def acct(http: httpx.Client, token: str) -> Journey:
    return journey(http, token=token, until="account")


@pytest.mark.parametrize("area", AREAS)
@pytest.mark.parametrize("version", ["1.1.0", "1.2.0-20221215"])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_path_of_an_unsimulated_area_is_not_found(
    http: httpx.Client, acct: Journey, area: str, version: str, method: str
) -> None:
    for path in _paths(area):
        path = path.replace("{id}", acct.account_id if path.startswith("/accounts") else "card_x")
        resp = call(
            http,
            method,
            path,
            token=acct.token,
            extra={"svc-api-version": version},
            json_body={} if method == "POST" else None,
        )
        assert_problem(resp, 404, "not-found")
    doc = http.get("/openapi.json", headers={"svc-api-version": version}).json()
    for word in _words(area):
        assert not [p for p in doc["paths"] if word in p and p != SAVINGS_CLOSE], (area, word)
