"""A fault (``POST /_sim/faults``, A45) names a method and path a partner operation of this
simulator is served at: any other would never fire, so it is refused, 422
``operation-not-served``, and nothing is added. Under a dialect that moves an operation, its
moved path is the one served; its default path is refused."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kit import _choices
from kit._operations import BY_KEY
from tests.sim.helpers.clients import embedded, plain_client
from tests.sim.helpers.wire import assert_problem

CAMEL = _choices.load(Path(__file__).resolve().parents[2] / "data" / "choices" / "camel.toml")
CREATE_CARD = BY_KEY["create_card"]
MOVED = str(CAMEL.value("A67")["paths"]["create_card"])


#: A fault that never fires (rate 0) on a path the simulator serves.
HARMLESS = {"method": "GET", "path": BY_KEY["webhook_keys"].path, "rate": 0}


def _faults(http: httpx.Client) -> list[dict[str, Any]]:
    resp = http.get("/_sim/faults")
    assert resp.status_code == 200, resp.text
    return list(resp.json()["faults"])


def _refused(http: httpx.Client, fault: dict[str, Any], *, register_spelling: bool = True) -> None:
    """``fault`` is refused, 422 operation-not-served, and the faults are as they were."""
    before = _faults(http)
    resp = http.post("/_sim/faults", json=fault)
    if register_spelling:  # the register's header names (a dialect renames them)
        body = assert_problem(resp, 422, "operation-not-served")
        assert "A45" in resp.headers["svc-assumptions"].split(",")
    else:
        assert resp.status_code == 422, resp.text
        body = resp.json()
        assert body["code"] == "operation-not-served", body
    assert fault["path"] not in body["detail"]  # the path given is not echoed
    assert _faults(http) == before


@pytest.mark.parametrize(
    "fault",
    [
        {"method": "GET", "path": "/nope"},
        {"method": "POST", "path": "/accounts/{account_id}/cardz"},  # a typo
        {"method": "GET", "path": "/accounts/{account_id}/cards"},  # the path, not with this method
        {"method": "POST", "path": "/accounts/acc_1/cards"},  # a path, not its template
        {"method": "PUT", "path": "/accounts/{account_id}/savings/close"},  # a removed path's rest
        {"method": "POST", "path": BY_KEY["access_token"].path},  # answered before faults are drawn
        {"method": "POST", "path": BY_KEY["legacy_access_token"].path},
        {"method": "POST", "path": BY_KEY["savings_close"].path},  # removed: 404 before the checks
    ],
    ids=["unknown", "typo", "method", "not-a-template", "rest", "token", "legacy-token", "removed"],
)
def test_a_fault_no_operation_is_served_at_is_refused_and_nothing_added(
    http: httpx.Client, fault: dict[str, Any]
) -> None:
    def kept_around(between: Callable[[], None]) -> list[str]:
        http.post("/_sim/reset", json={"seed": 7}).raise_for_status()
        first = http.post("/_sim/faults", json=HARMLESS)
        between()
        second = http.post("/_sim/faults", json=HARMLESS)
        assert first.status_code == second.status_code == 201, (first.text, second.text)
        return [first.json()["fault_id"], second.json()["fault_id"]]

    expected = kept_around(lambda: None)
    # refused between the two, it takes no id either: the second fault's id is the same
    assert kept_around(lambda: _refused(http, {**fault, "status": 503})) == expected
    assert [f["fault_id"] for f in _faults(http)] == expected


def test_a_fault_on_an_operations_path_is_added(http: httpx.Client) -> None:
    method, path = CREATE_CARD.methods[0], CREATE_CARD.path
    resp = http.post("/_sim/faults", json={"method": method.lower(), "path": path})
    assert resp.status_code == 201, resp.text
    assert [(f["method"], f["path"]) for f in _faults(http)] == [(method, path)]


@pytest.fixture(scope="module")
def camel_server() -> Iterator[Any]:
    yield from embedded(seed=7, choices=CAMEL)


@pytest.fixture
def camel(camel_server: Any) -> Iterator[httpx.Client]:
    yield from plain_client(camel_server)


def test_under_a_dialect_the_moved_path_is_served_and_the_default_refused(camel: httpx.Client) -> None:
    assert CREATE_CARD.path != MOVED
    _refused(camel, {"method": CREATE_CARD.methods[0], "path": CREATE_CARD.path}, register_spelling=False)
    resp = camel.post("/_sim/faults", json={"method": CREATE_CARD.methods[0], "path": MOVED})
    assert resp.status_code == 201, resp.text
    assert [f["path"] for f in _faults(camel)] == [MOVED]
