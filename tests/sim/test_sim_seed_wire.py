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

from kit.sim.routes.removed import ALL_METHODS
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
