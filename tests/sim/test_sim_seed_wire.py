"""The wire where the seed speaks (issue: "the seed's words, exactly").

- A removed endpoint (endpoint.8, change.5: "the endpoint no longer exists") is removed for every
  method, and its answer names none.
- Every answer a register entry shaped names it in ``svc-assumptions``: the OpenAPI document and
  its pages (A48), answers of the route check before any route runs (404, 405: A44 and A21's
  problem shape) and a 500 (A21; in ``test_sim_internal_error.py``).
The deprecated token path (endpoint.2, endpoint.3) is in ``test_sim_oauth.py``.
"""

from __future__ import annotations

import httpx
import pytest

from kit.sim.routes import ALL_METHODS
from tests.sim.helpers.control import snapshot
from tests.sim.helpers.wire import assert_problem

SAVINGS = "/accounts/acc_1/savings/close"


def names(resp: httpx.Response) -> set[str]:
    return set(resp.headers.get("svc-assumptions", "").split(",")) - {""}


@pytest.mark.parametrize("method", ALL_METHODS)
def test_a_removed_endpoint_is_removed_for_every_method_and_names_none(
    http: httpx.Client, method: str
) -> None:
    before = snapshot(http)
    resp = http.request(method, SAVINGS, headers={"Authorization": "Bearer nonsense"})
    assert resp.status_code == 404, resp.text
    assert "A29" in names(resp)
    if method != "HEAD":
        body = assert_problem(resp, 404, "endpoint-removed")
        assert body["removed_in"] == "1.2.0"
        for verb in ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE"):
            assert verb not in body["detail"], body["detail"]
        assert "no longer exists" in body["detail"]
    assert snapshot(http) == before


def test_every_common_method_is_covered() -> None:
    assert {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} <= set(ALL_METHODS)


@pytest.mark.parametrize("path", ["/openapi.json", "/docs", "/redoc"])
def test_the_openapi_document_and_its_pages_name_their_entry(http: httpx.Client, path: str) -> None:
    resp = http.get(path)
    assert resp.status_code == 200
    assert "A48" in names(resp), resp.headers.get("svc-assumptions")


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/no/such/path", 404, "not-found"),
        ("GET", "/p2p/transfers/", 404, "not-found"),  # a trailing slash: no redirect
        ("DELETE", "/accounts", 405, "method-not-allowed"),
        ("PUT", "/oauth/accesstoken", 405, "method-not-allowed"),
    ],
)
def test_answers_of_the_route_check_name_their_entries(
    http: httpx.Client, method: str, path: str, status: int, code: str
) -> None:
    before = snapshot(http)
    resp = http.request(method, path)
    assert_problem(resp, status, code)
    assert {"A21", "A44"} <= names(resp), resp.headers.get("svc-assumptions")
    assert snapshot(http) == before


# --- limits: each a register value (A47), used by the simulator and the document -------------------

#: (A47 key, model, field): the bounds the simulator enforces on request fields.
BOUNDS = [
    ("memo_max_chars", "TransferCreate", "memo"),
    ("webhook_url_max_chars", "SubscriptionCreate", "url"),
    ("events_per_subscription_max", "SubscriptionCreate", "events"),
    ("device_id_max_chars", "Device", "device_id"),
    ("device_model_max_chars", "Device", "model"),
    ("os_version_max_chars", "Device", "os_version"),
    ("name_max_chars", "PiiPlaintext", "first_name"),
    ("name_max_chars", "PiiPlaintext", "last_name"),
    ("national_id_max_chars", "PiiPlaintext", "national_id"),
]


@pytest.mark.parametrize(("key", "model", "field"), BOUNDS)
def test_every_field_bound_is_the_registers_value(key: str, model: str, field: str) -> None:
    from pydantic import BaseModel

    from kit import register
    from kit.sim import bodies, models

    cls = getattr(models, model, None) or getattr(bodies, model)
    assert issubclass(cls, BaseModel)
    bounds = [getattr(m, "max_length", None) for m in cls.model_fields[field].metadata]
    assert register.value("A47")[key] in bounds, (model, field, bounds)


def test_the_document_states_the_registers_bounds() -> None:
    import json
    from pathlib import Path

    from kit import register

    limits = register.value("A47")
    document = json.loads((Path(__file__).resolve().parents[2] / "data" / "openapi.json").read_text())
    schemas = document["components"]["schemas"]
    memo = schemas["TransferCreate"]["properties"]["memo"]
    assert limits["memo_max_chars"] in [o.get("maxLength") for o in memo.get("anyOf", [memo])]
    assert schemas["SubscriptionCreate"]["properties"]["url"]["maxLength"] == limits["webhook_url_max_chars"]
    contract = (Path(__file__).resolve().parents[2] / "docs" / "contract.md").read_text()
    assert '"memo_max_chars": 140' in contract and '"webhook_url_max_chars": 2000' in contract


def test_a_memo_past_its_bound_is_refused_naming_a47_and_at_it_passes(
    http: httpx.Client, pair: tuple
) -> None:
    from kit import register
    from tests.sim.helpers.journeys import p2p_transfer

    a, b = pair
    limit = register.value("A47")["memo_max_chars"]
    before = snapshot(http)
    long = p2p_transfer(http, a, b.person_id, "1.00", idem="memo-long", memo="m" * (limit + 1))
    assert_problem(long, 422, "validation-error")
    assert "A47" in names(long)
    assert snapshot(http) == before
    ok = p2p_transfer(http, a, b.person_id, "1.00", idem="memo-at", memo="m" * limit)
    assert ok.status_code == 201, ok.text


def test_a_webhook_url_past_its_bound_is_refused_naming_a47(http: httpx.Client, token: str) -> None:
    from kit import register
    from tests.sim.helpers.wire import call

    limit = register.value("A47")["webhook_url_max_chars"]
    url = "http://127.0.0.1:9/" + "a" * limit
    before = snapshot(http)
    resp = call(
        http,
        "POST",
        "/webhooks/subscriptions",
        token=token,
        json_body={"url": url, "events": ["card.closed"]},
    )
    assert_problem(resp, 422, "validation-error")
    assert "A47" in names(resp)
    assert snapshot(http) == before
