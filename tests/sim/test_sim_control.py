"""The control plane (register A45): health, reset, clock, personas, faults, ledger; determinism."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Any

import httpx
import pytest

from tests.sim.helpers.contract import API_VERSION, CLOCK_START
from tests.sim.helpers.control import add_fault, advance, clock_now, kyc_answers, ledger, personas, reset
from tests.sim.helpers.encryption import Device, encrypt_for_server, load_key
from tests.sim.helpers.journeys import journey, new_session, p2p_transfer
from tests.sim.helpers.resources import close_card, create_account_request, create_card, send_event
from tests.sim.helpers.webhooks import Receiver, subscribe, subscription_request
from tests.sim.helpers.wire import (
    assert_problem,
    call,
    init_data,
    money,
    parse_time,
    partner_token,
    wait_until,
)


def test_health(http: httpx.Client) -> None:
    resp = http.get("/_sim/health")
    assert resp.status_code == 200
    body = resp.json()
    assert {k: body[k] for k in ("status", "api_version")} == {"status": "ok", "api_version": API_VERSION}
    assert set(body) == {"status", "api_version", "stores"}  # store sizes: tests/sim/test_sim_bounds.py


def test_control_plane_answers_carry_the_common_headers(http: httpx.Client) -> None:
    for resp in (http.get("/_sim/health"), http.get("/_sim/clock"), http.get("/_sim/nope")):
        assert resp.headers.get("svc-request-id")
        assert resp.headers.get("svc-api-version") == API_VERSION


def test_clock_starts_frozen_at_the_seeded_start(http: httpx.Client) -> None:
    assert clock_now(http) == CLOCK_START
    time.sleep(1.1)
    assert clock_now(http) == CLOCK_START, "the clock only moves when told"


def test_clock_advance(http: httpx.Client) -> None:
    assert advance(http, 90) == CLOCK_START + timedelta(seconds=90)
    assert advance(http, 0) == CLOCK_START + timedelta(seconds=90)
    assert clock_now(http) == CLOCK_START + timedelta(seconds=90)


@pytest.mark.parametrize("body", [{"seconds": -1}, {"seconds": "ten"}, {}, {"seconds": 1.5}])
def test_clock_advance_rejects_bad_input(http: httpx.Client, body: dict) -> None:
    resp = http.post("/_sim/clock/advance", json=body)
    assert resp.status_code == 422, resp.text
    assert resp.json()["code"] == "validation-error"
    assert clock_now(http) == CLOCK_START


def test_clock_advance_past_year_9000_is_refused_and_leaves_the_clock(http: httpx.Client) -> None:
    ten_years = 10 * 366 * 86400  # the largest single step the control plane takes
    last = None
    for _ in range(800):  # 2025 + 800 x 10 years passes 9000: bounded
        resp = http.post("/_sim/clock/advance", json={"seconds": ten_years})
        if resp.status_code != 200:
            break
        last = resp.json()["now"]
    assert resp.status_code == 422 and resp.json()["code"] == "validation-error", resp.text
    assert resp.json()["errors"][0]["field"] == "/seconds"
    assert last is not None and http.get("/_sim/clock").json()["now"] == last
    # everything still works at the far end of the clock: tokens, sessions, cards
    token = partner_token(http)
    session = new_session(http, token, Device())
    account = call(http, "POST", "/accounts", token=token, session=session, json_body={"product": "spending"})
    assert account.status_code == 201, account.text
    card = create_card(http, token, account.json()["account_id"], "physical")
    assert card["status"] == "active"


def test_reset_restores_the_start_and_revokes_everything(http: httpx.Client) -> None:
    tok = partner_token(http)
    session = new_session(http, tok, Device())
    advance(http, 5000)
    reset(http, 7)
    assert clock_now(http) == CLOCK_START
    assert ledger(http)["accounts"] == []
    resp = call(http, "GET", "/sessions/user_session_initialization_data", token=tok)
    assert_problem(resp, 401, "invalid-partner-token")
    tok2 = partner_token(http)
    resp = call(http, "POST", "/accounts", token=tok2, session=session, json_body={"product": "spending"})
    assert_problem(resp, 401, "invalid-session")


def test_reset_body_is_optional(http: httpx.Client) -> None:
    advance(http, 10)
    assert http.post("/_sim/reset").status_code == 200
    assert clock_now(http) == CLOCK_START


def test_personas(http: httpx.Client) -> None:
    people = personas(http)
    assert len(people) >= 10
    for p in people:
        assert set(p) >= {"persona_id", "first_name", "last_name", "date_of_birth", "national_id", "device"}
    assert len({p["national_id"] for p in people}) == len(people)


def test_kyc_answers_of_unknown_person(http: httpx.Client) -> None:
    assert http.get("/_sim/persons/per_nope/kyc_answers").status_code == 404


def test_fund_and_ledger(http: httpx.Client, token: str) -> None:
    j = journey(http, token=token, until="account")
    resp = http.post(f"/_sim/accounts/{j.account_id}/fund", json={"amount": money("0.50")})
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"account_id": j.account_id, "balance": money("500.50")}
    assert ledger(http)["accounts"] == [{"account_id": j.account_id, "balance": money("500.50")}]
    assert ledger(http)["transfers"] == []


@pytest.mark.parametrize("amount", [money("1.234"), money("-1"), money("1", "EUR"), "5"])
def test_fund_rejects_bad_amounts(http: httpx.Client, token: str, amount: Any) -> None:
    j = journey(http, token=token, until="account")
    resp = http.post(f"/_sim/accounts/{j.account_id}/fund", json={"amount": amount})
    assert resp.status_code == 422, resp.text
    assert ledger(http)["accounts"][0]["balance"] == money("500.00")


def test_fund_unknown_account(http: httpx.Client) -> None:
    resp = http.post("/_sim/accounts/acc_nope/fund", json={"amount": money("1.00")})
    assert resp.status_code == 404


def test_starting_balance_is_configurable() -> None:
    from decimal import Decimal

    from kit.sim import Settings
    from kit.sim.server import start_embedded

    server = start_embedded(Settings(seed=7, starting_balance=Decimal("20.00")))
    try:
        with httpx.Client(base_url=server.base_url) as client:
            tok = partner_token(client)
            session = new_session(client, tok, Device())
            resp = create_account_request(client, tok, session)
            assert resp.json()["balance"] == money("20.00")
    finally:
        server.stop()


# --- faults -----


def test_fault_times_status_and_retry_after(http: httpx.Client, token: str) -> None:
    j = journey(http, token=token, until="account")
    card = create_card(http, token, j.account_id)
    add_fault(http, method="GET", path="/cards/{card_id}", status=503, times=2, retry_after=7)
    for _ in range(2):
        resp = call(http, "GET", f"/cards/{card['card_id']}", token=token)
        assert_problem(resp, 503, "injected-fault")
        assert resp.headers.get("retry-after") == "7"
    assert call(http, "GET", f"/cards/{card['card_id']}", token=token).status_code == 200


def test_fault_defaults_are_503_every_time(http: httpx.Client, token: str) -> None:
    add_fault(http, method="GET", path="/webhooks/jwks")
    for _ in range(3):
        assert_problem(call(http, "GET", "/webhooks/jwks", token=token), 503, "injected-fault")


def test_fault_with_another_status(http: httpx.Client, token: str) -> None:
    add_fault(http, method="GET", path="/webhooks/jwks", status=429, times=1, retry_after=2)
    resp = call(http, "GET", "/webhooks/jwks", token=token)
    assert_problem(resp, 429, "injected-fault")
    assert resp.headers.get("retry-after") == "2"


def test_fault_only_hits_its_method_and_path(http: httpx.Client, token: str) -> None:
    add_fault(http, method="POST", path="/webhooks/subscriptions", status=503)
    assert call(http, "GET", "/webhooks/jwks", token=token).status_code == 200
    assert call(http, "GET", "/sessions/user_session_initialization_data", token=token).status_code == 200


def test_latency_only_fault(http: httpx.Client, token: str) -> None:
    add_fault(http, method="GET", path="/webhooks/jwks", status=None, latency_ms=400, times=1)
    start = time.monotonic()
    resp = call(http, "GET", "/webhooks/jwks", token=token)
    assert resp.status_code == 200
    assert time.monotonic() - start >= 0.38
    start = time.monotonic()
    call(http, "GET", "/webhooks/jwks", token=token)
    assert time.monotonic() - start < 0.3


def test_delete_faults_clears_them(http: httpx.Client, token: str) -> None:
    add_fault(http, method="GET", path="/webhooks/jwks", status=503)
    assert call(http, "GET", "/webhooks/jwks", token=token).status_code == 503
    assert http.delete("/_sim/faults").status_code == 204
    assert call(http, "GET", "/webhooks/jwks", token=token).status_code == 200


def test_before_commit_fault_changes_nothing(http: httpx.Client, token: str) -> None:
    session = new_session(http, token, Device())
    add_fault(http, method="POST", path="/accounts", status=503, times=1)
    resp = call(http, "POST", "/accounts", token=token, session=session, json_body={"product": "spending"})
    assert_problem(resp, 503, "injected-fault")
    assert ledger(http)["accounts"] == []


def test_after_commit_fault_commits(http: httpx.Client, token: str) -> None:
    session = new_session(http, token, Device())
    add_fault(http, method="POST", path="/accounts", status=503, times=1, when="after_commit")
    resp = call(http, "POST", "/accounts", token=token, session=session, json_body={"product": "spending"})
    assert_problem(resp, 503, "injected-fault")
    assert len(ledger(http)["accounts"]) == 1


def _fault_pattern(http: httpx.Client) -> list[int]:
    reset(http, 7)
    tok = partner_token(http)
    add_fault(http, method="GET", path="/webhooks/jwks", status=503, rate=0.5)
    return [call(http, "GET", "/webhooks/jwks", token=tok).status_code for _ in range(24)]


def test_fault_rate_is_drawn_from_the_seeded_source(http: httpx.Client) -> None:
    first = _fault_pattern(http)
    assert set(first) == {200, 503}, first
    assert _fault_pattern(http) == first


@pytest.mark.parametrize(
    "fault",
    [
        {"method": "GET", "path": "/x", "rate": 2},
        {"method": "GET", "path": "/x", "when": "later"},
        {"path": "/x"},
        {"method": "GET", "path": "/x", "colour": 1},
    ],
)
def test_bad_fault_definitions_are_422(http: httpx.Client, fault: dict) -> None:
    resp = http.post("/_sim/faults", json=fault)
    assert resp.status_code == 422, resp.text


# --- control plane off / protected -----


def test_control_plane_can_be_switched_off(nocontrol_http: httpx.Client) -> None:
    for path in ("/_sim/health", "/_sim/clock", "/_sim/ledger"):
        resp = nocontrol_http.get(path)
        assert_problem(resp, 404, "not-found")
    assert_problem(nocontrol_http.post("/_sim/reset", json={"seed": 7}), 404, "not-found")
    tok = partner_token(nocontrol_http)
    init = init_data(nocontrol_http, tok)
    assert init["enc"] == ["A256GCM"]


def test_control_token_is_required_when_set() -> None:
    from kit.sim import Settings
    from kit.sim.server import start_embedded

    server = start_embedded(Settings(seed=7, control_token="c0ntrol-t0ken-0f-16-chars"))
    try:
        with httpx.Client(base_url=server.base_url) as client:
            for hdrs in ({}, {"svc-control-token": "wrong"}):
                resp = client.get("/_sim/health", headers=hdrs)
                assert resp.status_code in (401, 403), resp.text
                assert resp.headers["content-type"].startswith("application/problem+json")
            resp = client.get("/_sim/health", headers={"svc-control-token": "c0ntrol-t0ken-0f-16-chars"})
            assert resp.status_code == 200
    finally:
        server.stop()


# --- determinism -----


VOLATILE = {
    "access_token",
    "session_token",
    "encrypted_session_token",
    "nonce",
    "encrypted_questions",
    "nonce_expires_at_never",
}


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("<volatile>" if k in VOLATILE else _scrub(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def _scripted_run(http: httpx.Client) -> list[Any]:
    """The same calls, in the same order, with fixed device keys."""
    reset(http, 7)
    out: list[Any] = []
    tok = partner_token(http)
    init = init_data(http, tok)
    out.append(_scrub(init))
    people = personas(http)
    out.append(people)
    keys = [load_key("device_ec_p256_fixed"), load_key("device_ec_p256_fixed_b")]
    journeys = []
    for i, key in enumerate(keys):
        device = Device(f"det-device-{i}", key=key)  # type: ignore[arg-type]
        j = journey(http, persona_index=i, token=tok, device=device)
        journeys.append(j)
        out.append([j.account_id, j.person_id])
        out.append(kyc_answers(http, j.person_id))
        out.append([{k: q[k] for k in ("question_id", "text", "choices")} for q in j.questions])
    a, b = journeys
    card = create_card(http, tok, a.account_id, "temporary")
    out.append(card)
    out.append(close_card(http, tok, card["card_id"], {"reason": "lost"}).json())
    out.append(send_event(http, tok, a.account_id, {"event_type": "password.changed"}).json())
    out.append(p2p_transfer(http, a, b.person_id, "3.21", idem="det-1").json())
    out.append(subscription_request(http, tok, "http://127.0.0.1:9/h", ["card.closed"]).json())
    out.append(http.post(f"/_sim/persons/{a.person_id}/document_requests", json={}).json())
    out.append(ledger(http))
    out.append(_scrub(create_account_request(http, tok, "ses_nope").json()))
    out.append(init_data(http, tok)["jwks"])
    return out


def test_same_seed_same_calls_same_ids_and_bodies(http: httpx.Client) -> None:
    first = _scripted_run(http)
    second = _scripted_run(http)
    for i, (x, y) in enumerate(zip(first, second, strict=True)):
        assert x == y, f"step {i} differs:\n{json.dumps(x)[:400]}\n{json.dumps(y)[:400]}"


def test_request_ids_are_deterministic(http: httpx.Client) -> None:
    def run() -> list[str]:
        reset(http, 7)
        tok = partner_token(http)
        return [call(http, "GET", "/webhooks/jwks", token=tok).headers["svc-request-id"] for _ in range(3)]

    assert run() == run()


def test_webhook_deliveries_are_deterministic(http: httpx.Client) -> None:
    def run() -> list[Any]:
        reset(http, 7)
        rec = Receiver()
        try:
            tok = partner_token(http)
            subscribe(http, tok, rec.url, ["card.closed"])
            j = journey(http, token=tok, until="account")
            card = create_card(http, tok, j.account_id)
            close_card(http, tok, card["card_id"], {})
            got = rec.wait_for(1)
            wait_until(lambda: http.get("/_sim/webhooks/deliveries").json()["deliveries"])
            return [got[0].json(), http.get("/_sim/webhooks/deliveries").json()]
        finally:
            rec.close()

    assert run() == run()


def test_encrypt_helper_round_trip_is_not_deterministic(http: httpx.Client, token: str) -> None:
    # Ciphertexts are random (a sanity check of the helpers the determinism test relies on).
    init = init_data(http, token)
    assert encrypt_for_server(init, {"a": 1}) != encrypt_for_server(init, {"a": 1})
    assert parse_time(init["nonce_expires_at"]) == CLOCK_START + timedelta(minutes=5)
