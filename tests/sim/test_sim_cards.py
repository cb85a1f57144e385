"""Cards (A13-A16, A35), inbound events (A17) and removed endpoints (A29); docs/contract.md."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import httpx
import pytest

from tests.sim.helpers.contract import CARD_TYPES, CLOSE_REASONS, ECHO, INBOUND_EVENT_TYPES, PARTNER_B
from tests.sim.helpers.control import advance, clock_now, snapshot, unchanged
from tests.sim.helpers.encryption import Device
from tests.sim.helpers.journeys import journey, new_session
from tests.sim.helpers.resources import card_request, close_card, create_card, send_event
from tests.sim.helpers.wire import add_months, assert_problem, call, parse_time, partner_token


@pytest.fixture
def acct(http: httpx.Client, token: str) -> Any:
    return journey(http, token=token, until="account")


def expected_expiry(card_type: str, issued: date) -> date:
    if card_type == "temporary":
        return issued + timedelta(days=30)
    return add_months(issued, 36)


def card_path(card: dict[str, Any]) -> str:
    return f"/cards/{card['card_id']}"


# --- create and get -----


@pytest.mark.parametrize("card_type", CARD_TYPES)
def test_create_each_card_type(http: httpx.Client, token: str, acct: Any, card_type: str) -> None:
    now = clock_now(http)
    resp = card_request(http, token, acct.account_id, card_type)
    assert resp.status_code == 201, resp.text
    card = resp.json()
    assert card["card_id"].startswith("card_")
    assert card["account_id"] == acct.account_id
    assert card["type"] == card_type
    assert card["status"] == "active"
    assert re.fullmatch(r"\d{4}", card["last4"]), card["last4"]
    assert card["close_reason"] is None
    assert parse_time(card["created_at"]) == now
    assert date.fromisoformat(card["expires_on"]) == expected_expiry(card_type, now.date())
    got = call(http, "GET", card_path(card), token=token)
    assert got.status_code == 200
    assert got.json() == card


@pytest.mark.parametrize(
    ("day", "card_type", "expected"),
    [
        ("2025-01-31", "physical", "2028-01-31"),
        ("2025-01-31", "temporary", "2025-03-02"),
        ("2025-02-28", "virtual", "2028-02-29"),
        ("2025-12-31", "temporary", "2026-01-30"),
        ("2025-11-15", "virtual", "2028-11-30"),
    ],
)
def test_expiry_dates_on_awkward_days(
    http: httpx.Client, token: str, acct: Any, day: str, card_type: str, expected: str
) -> None:
    now = clock_now(http)
    target = datetime.combine(date.fromisoformat(day), time(12, 0), UTC)
    advance(http, int((target - now).total_seconds()))
    tok = partner_token(http)  # the first token may have expired on the way
    card = create_card(http, tok, acct.account_id, card_type)
    assert card["expires_on"] == expected


def test_card_type_from_the_register_and_contract() -> None:
    from kit import register

    assert register.value("A13")["types"] == CARD_TYPES
    assert register.value("A15")["reasons"] == CLOSE_REASONS


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"type": "plastic"}, "unknown-card-type"),
        ({"type": ""}, "unknown-card-type"),
        ({"type": "Physical"}, "unknown-card-type"),
        ({"type": 5}, "validation-error"),
        ({}, "validation-error"),
        ({"type": "virtual", "colour": "red"}, "unknown-field"),
    ],
)
def test_bad_card_request(http: httpx.Client, token: str, acct: Any, body: dict, code: str) -> None:
    with unchanged(http):
        path = f"/accounts/{acct.account_id}/cards"
        problem = assert_problem(call(http, "POST", path, token=token, json_body=body), 422, code)
        if code == "unknown-card-type":
            assert problem["allowed"] == CARD_TYPES
        elif code == "validation-error":
            assert problem["errors"][0]["field"] == "/type"
        elif code == "unknown-field":
            assert problem["errors"][0]["field"] == "/colour"


def test_card_not_found(http: httpx.Client, token: str, acct: Any) -> None:
    assert_problem(call(http, "GET", "/cards/card_nope", token=token), 404, "card-not-found")
    assert_problem(close_card(http, token, "card_nope", {}), 404, "card-not-found")
    assert_problem(card_request(http, token, "acc_nope", "virtual"), 404, "account-not-found")


# --- close -----


@pytest.mark.parametrize("reason", CLOSE_REASONS)
def test_close_with_each_reason(http: httpx.Client, token: str, acct: Any, reason: str) -> None:
    card = create_card(http, token, acct.account_id)
    resp = close_card(http, token, card["card_id"], {"reason": reason})
    assert resp.status_code == 200, resp.text
    closed = resp.json()
    assert closed == {**card, "status": "closed", "close_reason": reason}
    assert call(http, "GET", card_path(card), token=token).json() == closed


@pytest.mark.parametrize("body", [{"reason": None}, {}, None])
def test_close_without_reason(http: httpx.Client, token: str, acct: Any, body: Any) -> None:
    card = create_card(http, token, acct.account_id)
    resp = close_card(http, token, card["card_id"], body)
    assert resp.status_code == 200, resp.text
    assert resp.json()["status"] == "closed"
    assert resp.json()["close_reason"] is None


@pytest.mark.parametrize("reason", ["", "bogus", "LOST", " lost", ECHO])
def test_unknown_close_reason(http: httpx.Client, token: str, acct: Any, reason: str) -> None:
    card = create_card(http, token, acct.account_id)
    with unchanged(http, token, (card_path(card),)):
        resp = close_card(http, token, card["card_id"], {"reason": reason})
        body = assert_problem(resp, 422, "unknown-close-reason")
        assert body["allowed"] == CLOSE_REASONS


@pytest.mark.parametrize("reason", [5, True, ["lost"], {"code": "lost"}])
def test_close_reason_of_the_wrong_type(http: httpx.Client, token: str, acct: Any, reason: Any) -> None:
    card = create_card(http, token, acct.account_id)
    with unchanged(http, token, (card_path(card),)):
        body = assert_problem(
            close_card(http, token, card["card_id"], {"reason": reason}),
            422,
            "validation-error",
        )
        assert body["errors"][0]["field"] == "/reason"


def test_double_close_is_409(http: httpx.Client, token: str, acct: Any) -> None:
    card = create_card(http, token, acct.account_id)
    close_card(http, token, card["card_id"], {"reason": "lost"})
    before = snapshot(http, token, (card_path(card),))
    resp = close_card(http, token, card["card_id"], {"reason": "stolen"})
    assert_problem(resp, 409, "card-already-closed")
    # schema (10) answers before state (13)
    resp = close_card(http, token, card["card_id"], {"reason": "bogus"})
    assert_problem(resp, 422, "unknown-close-reason")
    assert snapshot(http, token, (card_path(card),)) == before


@pytest.mark.parametrize("card_type", CARD_TYPES)
def test_card_expires_at_midnight_after_expires_on(
    http: httpx.Client, token: str, acct: Any, card_type: str
) -> None:
    card = create_card(http, token, acct.account_id, card_type)
    expiry = datetime.combine(date.fromisoformat(card["expires_on"]) + timedelta(days=1), time(0, 0), UTC)
    now = clock_now(http)
    advance(http, int((expiry - now).total_seconds()) - 1)
    tok = partner_token(http)
    assert call(http, "GET", card_path(card), token=tok).json()["status"] == "active"
    advance(http, 1)
    got = call(http, "GET", card_path(card), token=tok).json()
    assert got["status"] == "expired"
    with unchanged(http, tok, (card_path(card),)):
        resp = close_card(http, tok, card["card_id"], {"reason": "lost"})
        assert_problem(resp, 409, "card-not-active")


# --- sessions on card routes -----


def test_sessions_on_card_routes_must_be_bound(http: httpx.Client, token: str, acct: Any) -> None:
    other = journey(http, persona_index=1, token=token)
    card = create_card(http, token, acct.account_id)
    anon = new_session(http, token, Device())
    with unchanged(http, token, (card_path(card),)):
        lost = {"reason": "lost"}
        for session in (anon, other.person_session):
            resp = call(http, "GET", card_path(card), token=token, session=session)
            assert_problem(resp, 403, "session-not-bound")
            assert_problem(
                close_card(http, token, card["card_id"], lost, session=session), 403, "session-not-bound"
            )
            resp = card_request(http, token, acct.account_id, "virtual", session=session)
            assert_problem(resp, 403, "session-not-bound")
        resp = close_card(http, token, card["card_id"], lost, session="ses_nope")
        assert_problem(resp, 401, "invalid-session")
    resp = close_card(http, token, card["card_id"], lost, session=acct.account_session)
    assert resp.status_code == 200, resp.text
    assert resp.headers.get("svc-session-expires-at")


def test_another_partner_gets_404_for_cards(http: httpx.Client, token: str, acct: Any) -> None:
    card = create_card(http, token, acct.account_id)
    token_b = partner_token(http, *PARTNER_B)
    with unchanged(http, token, (card_path(card),)):
        assert_problem(call(http, "GET", card_path(card), token=token_b), 404, "card-not-found")
        assert_problem(close_card(http, token_b, card["card_id"], {"reason": "lost"}), 404, "card-not-found")
        resp = card_request(http, token_b, acct.account_id, "virtual")
        assert_problem(resp, 404, "account-not-found")
        resp = send_event(http, token_b, acct.account_id, {"event_type": "password.changed"})
        assert_problem(resp, 404, "account-not-found")


# --- inbound events -----


@pytest.mark.parametrize("event_type", INBOUND_EVENT_TYPES)
def test_each_inbound_event_type_is_accepted(
    http: httpx.Client, token: str, acct: Any, event_type: str
) -> None:
    now = clock_now(http)
    resp = send_event(http, token, acct.account_id, {"event_type": event_type})
    assert resp.status_code == 202, resp.text
    body = resp.json()
    assert body["event_id"].startswith("evt_")
    assert body["event_type"] == event_type
    assert body["account_id"] == acct.account_id
    assert body["occurred_at"] is None
    assert parse_time(body["received_at"]) == now


def test_inbound_event_with_occurred_at_and_details(http: httpx.Client, token: str, acct: Any) -> None:
    body = {
        "event_type": "login.failed_too_many_times",
        "occurred_at": "2025-01-05T08:00:00Z",
        "details": {"attempts": 5},
    }
    resp = send_event(http, token, acct.account_id, body, session=acct.account_session)
    assert resp.status_code == 202, resp.text
    assert parse_time(resp.json()["occurred_at"]) == datetime(2025, 1, 5, 8, 0, tzinfo=UTC)


def test_event_ids_differ(http: httpx.Client, token: str, acct: Any) -> None:
    body = {"event_type": "password.forgot"}
    ids = {send_event(http, token, acct.account_id, body).json()["event_id"] for _ in range(3)}
    assert len(ids) == 3


@pytest.mark.parametrize(
    "event_type", ["password.reset", "card.closed", "", "PASSWORD.CHANGED", "login.failed"]
)
def test_unknown_event_type(http: httpx.Client, token: str, acct: Any, event_type: str) -> None:
    resp = send_event(http, token, acct.account_id, {"event_type": event_type})
    body = assert_problem(resp, 422, "unknown-event-type")
    assert sorted(body["allowed"]) == INBOUND_EVENT_TYPES


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"event_type": 1},
        {"event_type": "password.changed", "occurred_at": "yesterday"},
        {"event_type": "password.changed", "details": "text"},
    ],
)
def test_bad_event_body_is_validation_error(http: httpx.Client, token: str, acct: Any, body: dict) -> None:
    assert_problem(send_event(http, token, acct.account_id, body), 422, "validation-error")


def test_event_for_a_missing_account(http: httpx.Client, token: str) -> None:
    resp = send_event(http, token, "acc_nope", {"event_type": "password.changed"})
    assert_problem(resp, 404, "account-not-found")


def test_event_session_must_be_bound(http: httpx.Client, token: str, acct: Any) -> None:
    anon = new_session(http, token, Device())
    resp = send_event(http, token, acct.account_id, {"event_type": "password.changed"}, session=anon)
    assert_problem(resp, 403, "session-not-bound")


# --- removed -----


def test_savings_close_is_removed(http: httpx.Client, token: str, acct: Any) -> None:
    for hdrs in ({}, {"Authorization": f"Bearer {token}"}):
        resp = http.post(f"/accounts/{acct.account_id}/savings/close", headers=hdrs, json={})
        body = assert_problem(resp, 404, "endpoint-removed")
        assert "1.2.0" in body["detail"]
    resp = http.post("/accounts/acc_does_not_exist/savings/close")
    assert_problem(resp, 404, "endpoint-removed")
