"""The simulator's control plane (``/_sim``): reset, clock, personas, ledger, faults and a
fingerprint of all observable state."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import httpx

from tests.sim.helpers.wire import call, money, parse_time


def _ok(resp: httpx.Response, status: int = 200) -> Any:
    assert resp.status_code == status, resp.text
    return resp.json()


def reset(http: httpx.Client, seed: int = 7) -> None:
    _ok(http.post("/_sim/reset", json={"seed": seed}))


def clock_now(http: httpx.Client) -> datetime:
    return parse_time(_ok(http.get("/_sim/clock"))["now"])


def advance(http: httpx.Client, seconds: int) -> datetime:
    return parse_time(_ok(http.post("/_sim/clock/advance", json={"seconds": seconds}))["now"])


def personas(http: httpx.Client) -> list[dict[str, Any]]:
    return _ok(http.get("/_sim/personas"))["personas"]


def kyc_answers(http: httpx.Client, person_id: str) -> list[dict[str, Any]]:
    return _ok(http.get(f"/_sim/persons/{person_id}/kyc_answers"))["answers"]


def ledger(http: httpx.Client) -> dict[str, Any]:
    return _ok(http.get("/_sim/ledger"))


def balance(http: httpx.Client, account_id: str) -> str:
    for acc in ledger(http)["accounts"]:
        if acc["account_id"] == account_id:
            bal = acc["balance"]
            assert bal["currency"] == "USD"
            return bal["value"]
    raise AssertionError(f"{account_id} not in the ledger")


def deliveries(http: httpx.Client) -> list[dict[str, Any]]:
    return _ok(http.get("/_sim/webhooks/deliveries"))["deliveries"]


def fund(http: httpx.Client, account_id: str, value: str) -> httpx.Response:
    return http.post(f"/_sim/accounts/{account_id}/fund", json={"amount": money(value)})


def add_fault(http: httpx.Client, **fault: Any) -> str:
    return _ok(http.post("/_sim/faults", json=fault), 201)["fault_id"]


def open_document_request(http: httpx.Client, person_id: str) -> str:
    """A document request the simulator opens for ``person_id``; its id."""
    return _ok(http.post(f"/_sim/persons/{person_id}/document_requests"), 201)["document_request_id"]


@contextmanager
def unchanged(http: httpx.Client, token: str | None = None, paths: tuple[str, ...] = ()) -> Iterator[None]:
    """The block changes no observable state: the :func:`snapshot` after it equals the one before."""
    before = snapshot(http, token, paths)
    yield
    assert snapshot(http, token, paths) == before


def snapshot(http: httpx.Client, token: str | None = None, paths: tuple[str, ...] = ()) -> dict[str, Any]:
    """A fingerprint of observable state: ledger, webhook deliveries, clock, and GETs.

    ``paths`` are fetched with the partner token only (no session: a sliding session's
    expiry would move).
    """
    snap: dict[str, Any] = {
        "ledger": ledger(http),
        "deliveries": deliveries(http),
        "clock": http.get("/_sim/clock").json(),
    }
    for path in paths:
        resp = call(http, "GET", path, token=token)
        snap[path] = (resp.status_code, resp.json())
    return snap
