"""What each version shows of one shared state (A27), its own OpenAPI document, its own words,
and a server serving one version (A27's ``versions`` under a choice overlay).

A card issued or closed under 1.2.0 is read under 1.1.0 as 1.1.0 could have it: no close reason
(change 2) and no temporary type (change 3); ``/openapi.json`` and ``/docs`` follow the version
asked; a 1.1.0 answer names 1.1.0's token endpoint, never 1.2.0's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kit import register
from kit._choices import ChoicesError, parse
from kit.sim import Settings, create_app
from kit.sim.personality import resolve
from tests.sim.helpers.clients import embedded
from tests.sim.helpers.control import advance, unchanged
from tests.sim.helpers.journeys import Journey, journey
from tests.sim.helpers.webhooks import Receiver
from tests.sim.helpers.wire import assert_problem, call, partner_token

OLD, NEW = "1.1.0", "1.2.0-20221215"
V_OLD, V_NEW = {"svc-api-version": OLD}, {"svc-api-version": NEW}
LEGACY = "/authorization/server_api/access_tokens"
ONLY_NEW = {"A27": {"versions": [NEW]}}


@pytest.fixture
def acct(http: httpx.Client, token: str) -> Journey:
    return journey(http, token=token, until="account")


def _as(j: Journey, version: dict[str, str], http: httpx.Client, method: str, path: str, **kw: Any) -> Any:
    resp = call(http, method, path, token=j.token, session=j.account_session, extra=version, **kw)
    assert resp.headers["svc-api-version"] == version["svc-api-version"]
    return resp


# --- item: 1.1.0 answers show no 1.2.0-only values -------------------------------------------


def test_a_card_closed_with_a_reason_under_1_2_0_reads_without_it_under_1_1_0(
    http: httpx.Client, acct: Journey
) -> None:
    hidden = register.value("A27")["card_fields_hidden"]
    shown_as = register.value("A27")["card_type_shown"]
    card = _as(
        acct, V_NEW, http, "POST", f"/accounts/{acct.account_id}/cards", json_body={"type": "temporary"}
    )
    path = f"/cards/{card.json()['card_id']}"
    closed = _as(acct, V_NEW, http, "POST", f"{path}/close", json_body={"reason": "stolen"})
    assert closed.json()["close_reason"] == "stolen" and closed.json()["type"] == "temporary"
    old = _as(acct, V_OLD, http, "GET", path).json()
    assert old["status"] == "closed"
    assert not set(hidden) & set(old), old  # change 2: 1.1.0's card has no reason
    assert old["type"] == shown_as["temporary"] and old["type"] in ("physical", "virtual")  # change 3
    again = _as(acct, V_NEW, http, "GET", path).json()  # one state: 1.2.0 still sees both
    assert (again["type"], again["close_reason"]) == ("temporary", "stolen")


def test_a_1_1_0_card_event_carries_1_1_0s_card(http: httpx.Client, token: str, receiver: Receiver) -> None:
    person = journey(http, token=token, until="account")
    sub = call(
        http,
        "POST",
        "/webhooks/subscriptions",
        token=token,
        extra=V_OLD,
        json_body={"url": receiver.url, "events": ["card.expired"]},
    )
    assert sub.status_code == 201, sub.text
    created = _as(
        person, V_NEW, http, "POST", f"/accounts/{person.account_id}/cards", json_body={"type": "temporary"}
    )
    advance(http, 40 * 86400)  # past the temporary card's expiry (A14)
    (got,) = receiver.wait_for(1)
    data = got.json()["data"]
    assert data["card_id"] == created.json()["card_id"] and data["status"] == "expired"
    assert data["type"] == "virtual" and "close_reason" not in data


def test_the_1_1_0_document_has_no_close_reason_nor_a_1_2_0_close(http: httpx.Client) -> None:
    old = http.get("/openapi.json", headers=V_OLD).json()
    card = old["components"]["schemas"]["CardOut"]
    assert "close_reason" not in card["properties"] and "close_reason" not in card["required"]
    summary = old["paths"]["/cards/{card_id}/close"]["post"]["summary"]
    assert "reason" not in summary.replace("no reason", "") and "emits card.closed" not in summary
    assert "reconstruction" in old["info"]["description"] and "A27" in old["info"]["description"]
    new = http.get("/openapi.json", headers=V_NEW).json()
    assert "close_reason" in new["components"]["schemas"]["CardOut"]["required"]
    assert "reconstruction" not in new["info"]["description"]


# --- item: the document of the version asked -----------------------------------------------------


def test_openapi_json_is_the_document_of_the_version_asked(http: httpx.Client) -> None:
    for headers, params, want in (
        (V_OLD, None, OLD),
        (V_NEW, None, NEW),
        ({}, None, NEW),
        ({}, {"version": OLD}, OLD),  # what /docs' version selector asks
    ):
        resp = http.get("/openapi.json", headers=headers, params=params)
        assert resp.status_code == 200 and resp.headers["svc-api-version"] == want
        doc = resp.json()
        assert doc["info"]["version"] == want
        assert ("/accounts/{account_id}/savings/close" in doc["paths"]) == (want == OLD)
        assert ("/oauth/accesstoken" in doc["paths"]) == (want == NEW)
    with unchanged(http, partner_token(http)):
        refused = http.get("/openapi.json", params={"version": "0.9"})
    assert_problem(refused, 400, "unsupported-api-version")
    page = http.get("/docs")
    assert page.status_code == 200
    for version in (OLD, NEW):
        assert f"/openapi.json?version={version}" in page.text


def test_a_server_defaulting_to_1_1_0_serves_1_1_0s_document() -> None:
    from fastapi.testclient import TestClient

    with TestClient(create_app(Settings(api_version=OLD, allowed_hosts=("testserver",)))) as client:
        resp = client.get("/openapi.json")
        assert resp.headers["svc-api-version"] == OLD and resp.json()["info"]["version"] == OLD


# --- item: each version's words name its own endpoints --------------------------------------------


@pytest.mark.parametrize(("version", "endpoint"), [(OLD, f"POST {LEGACY}"), (NEW, "POST /oauth/accesstoken")])
@pytest.mark.parametrize("bearer", [None, "not-a-token"])
def test_a_401_names_the_token_endpoint_of_its_version(
    http: httpx.Client, version: str, endpoint: str, bearer: str | None
) -> None:
    headers = {"svc-api-version": version, **({"Authorization": f"Bearer {bearer}"} if bearer else {})}
    with unchanged(http, partner_token(http)):
        resp = http.post("/accounts", headers=headers, json={"product": "spending"})
    detail = assert_problem(resp, 401, "invalid-partner-token")["detail"]
    assert endpoint in detail
    other = "POST /oauth/accesstoken" if version == OLD else f"POST {LEGACY}"
    assert other not in detail


# --- item: a server serving one version (A27's versions overlaid) ----------------------------------


@pytest.fixture(scope="module")
def _only_new_server() -> Iterator[Any]:
    yield from embedded(seed=7, choices=parse(ONLY_NEW))


@pytest.fixture
def only_new(_only_new_server: Any) -> Iterator[httpx.Client]:
    """A client on a simulator serving only the seed's version (A27 overlaid); the checked
    client's helpers expect both of the register's versions, so its answers are read here."""
    with httpx.Client(base_url=_only_new_server.base_url, timeout=30.0) as client:
        yield client


def test_a_server_may_serve_only_the_seeds_version(only_new: httpx.Client) -> None:
    assert resolve(parse(ONLY_NEW)).versions == (NEW,)
    refused = only_new.get("/webhooks/jwks", headers=V_OLD)
    assert refused.status_code == 400 and refused.headers["svc-api-version"] == NEW
    assert refused.json()["code"] == "unsupported-api-version" and refused.json()["supported"] == [NEW]
    assert only_new.get("/openapi.json", headers=V_NEW).status_code == 200
    assert only_new.get("/openapi.json", headers=V_OLD).status_code == 400
    assert "/openapi.json?version=1.1.0" not in only_new.get("/docs").text
    token = only_new.post(
        "/authorization/server_api/access_tokens",
        headers=V_OLD,
        data={"grant_type": "client_credentials"},
        auth=("sim-partner", "sim-secret"),
    )
    assert token.status_code == 400 and token.json()["error"] == "invalid_request"
    assert OLD not in token.json()["error_description"]


@pytest.mark.parametrize("versions", [[OLD], [], [NEW, NEW], [NEW, "2.0"]])
def test_an_overlay_must_serve_the_seeds_version_and_only_known_ones(versions: list[str]) -> None:
    with pytest.raises(ChoicesError) as refused:
        resolve(parse({"A27": {"versions": versions}}))
    assert (refused.value.entry, refused.value.key) == ("A27", "versions")


def test_a_default_version_the_overlay_does_not_serve_is_refused_at_start() -> None:
    with pytest.raises(ValueError, match="api_version"):
        create_app(Settings(api_version=OLD, choices=parse(ONLY_NEW)))


def test_a_regression_run_tells_which_versions_a_server_serves(
    _only_new_server: Any, http: httpx.Client
) -> None:
    """What notebook 13 asks before walking a version (kit.regress.migration.serves)."""
    from kit.regress.migration import serves

    assert serves(_only_new_server.base_url, NEW) and not serves(_only_new_server.base_url, OLD)
    base = str(http.base_url).rstrip("/")
    assert serves(base, OLD) and serves(base, NEW) and not serves(base, "0.9")
