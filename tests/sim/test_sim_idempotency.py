"""Idempotency (register A20): replays, reuse, retention, faults after commit, in-flight requests."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx
import pytest

from tests.sim.helpers.contract import PARTNER_B
from tests.sim.helpers.control import add_fault, advance, balance, ledger
from tests.sim.helpers.encryption import Device, encrypt_for_server
from tests.sim.helpers.journeys import create_session, journey, new_session, p2p_transfer
from tests.sim.helpers.resources import card_request, create_account_request
from tests.sim.helpers.wire import assert_problem, call, init_data, money, partner_token, post_raw, wait_until


def svc_headers(resp: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in resp.headers.items() if k.lower().startswith("svc-")}


def test_replay_returns_the_stored_answer(http: httpx.Client, token: str) -> None:
    anon = new_session(http, token, Device())
    body = {"product": "spending"}
    first = call(http, "POST", "/accounts", token=token, session=anon, idem="k1", json_body=body)
    assert first.status_code == 201
    assert "idempotent-replayed" not in first.headers
    # an equal JSON body, spelled differently
    raw = json.dumps(body, indent=2).encode()
    second = post_raw(http, "/accounts", raw, token=token, session=anon, idem="k1")
    assert second.status_code == 201
    assert second.json() == first.json()
    assert second.headers.get("idempotent-replayed") == "true"
    first_svc, second_svc = svc_headers(first), svc_headers(second)
    for name in ("svc-request-id", "svc-api-version", "svc-session-expires-at"):
        assert second_svc.get(name) == first_svc.get(name), name
    assert len(ledger(http)["accounts"]) == 1


def test_replay_is_checked_before_the_session(http: httpx.Client, token: str) -> None:
    device = Device()
    anon = new_session(http, token, device)
    first = create_account_request(http, token, anon, idem="k1")
    new_session(http, token, device, "account", current=anon, account_id=first.json()["account_id"])
    # the anonymous session is superseded now, yet the replay answers
    again = create_account_request(http, token, anon, idem="k1")
    assert again.status_code == 201, again.text
    assert again.json() == first.json()
    assert again.headers.get("idempotent-replayed") == "true"


def test_other_body_or_path_is_422_reused(http: httpx.Client, token: str) -> None:
    j = journey(http, token=token, until="account")
    path, virtual = f"/accounts/{j.account_id}/cards", {"type": "virtual"}
    assert call(http, "POST", path, token=token, idem="k1", json_body=virtual).status_code == 201
    before = ledger(http)
    assert_problem(
        call(http, "POST", path, token=token, idem="k1", json_body={"type": "physical"}),
        422,
        "idempotency-key-reused",
    )
    resp = call(http, "POST", f"/accounts/{j.account_id}/events", token=token, idem="k1", json_body=virtual)
    assert_problem(resp, 422, "idempotency-key-reused")
    assert ledger(http) == before


def test_failed_requests_are_not_stored(http: httpx.Client, token: str) -> None:
    j = journey(http, token=token, until="account")
    path = f"/accounts/{j.account_id}/cards"
    assert_problem(
        call(http, "POST", path, token=token, idem="k1", json_body={"type": "plastic"}),
        422,
        "unknown-card-type",
    )
    resp = call(http, "POST", path, token=token, idem="k1", json_body={"type": "virtual"})
    assert resp.status_code == 201, resp.text
    assert "idempotent-replayed" not in resp.headers


def test_keys_are_scoped_to_the_partner(http: httpx.Client, token: str) -> None:
    a = journey(http, token=token, until="account")
    token_b = partner_token(http, *PARTNER_B)
    b = journey(http, persona_index=1, token=token_b, until="account")
    one = card_request(http, token, a.account_id, "virtual", idem="shared")
    two = card_request(http, token_b, b.account_id, "physical", idem="shared")
    assert one.status_code == two.status_code == 201
    assert "idempotent-replayed" not in two.headers
    assert one.json()["card_id"] != two.json()["card_id"]
    # same path and body from partner B: still its own, not A's stored answer
    three = card_request(http, token_b, a.account_id, "virtual", idem="shared2")
    assert_problem(three, 404, "account-not-found")


def test_keys_are_kept_24_hours_of_simulator_time(http: httpx.Client, token: str) -> None:
    j = journey(http, token=token, until="account")
    path = f"/accounts/{j.account_id}/cards"
    first = call(http, "POST", path, token=token, idem="k24", json_body={"type": "virtual"})
    advance(http, 86399)
    tok = partner_token(http)
    again = call(http, "POST", path, token=tok, idem="k24", json_body={"type": "virtual"})
    assert again.headers.get("idempotent-replayed") == "true"
    assert again.json() == first.json()
    advance(http, 2)
    later = call(http, "POST", path, token=tok, idem="k24", json_body={"type": "virtual"})
    assert later.status_code == 201, later.text
    assert "idempotent-replayed" not in later.headers
    assert later.json()["card_id"] != first.json()["card_id"]


def test_session_creation_replays(http: httpx.Client, token: str) -> None:
    device = Device()
    init = init_data(http, token)
    encrypted = encrypt_for_server(init, device.plaintext(init["nonce"]))
    first = create_session(http, token, device, encrypted_data=encrypted, idem="ks")
    assert first.status_code == 201, first.text
    second = create_session(http, token, device, encrypted_data=encrypted, idem="ks")
    assert second.status_code == 201, second.text
    assert second.json() == first.json()
    assert second.headers.get("idempotent-replayed") == "true"
    # without the key the same (used) nonce is refused
    assert_problem(create_session(http, token, device, encrypted_data=encrypted), 400, "nonce-invalid")


# --- faults after commit -----


def test_p2p_retried_after_an_after_commit_fault_moves_money_once(http: httpx.Client, token: str) -> None:
    a = journey(http, token=token)
    b = journey(http, persona_index=1, token=token)
    add_fault(http, method="POST", path="/p2p/transfers", status=503, when="after_commit", times=1)
    first = p2p_transfer(http, a, b.person_id, "25.00", idem="kp")
    assert_problem(first, 503, "injected-fault")
    # committed: the money already moved
    assert balance(http, a.account_id) == "475.00"
    retry = p2p_transfer(http, a, b.person_id, "25.00", idem="kp")
    assert retry.status_code == 201, retry.text
    assert retry.headers.get("idempotent-replayed") == "true"
    assert retry.headers.get("svc-p2p-role") == "sender"
    assert retry.json()["amount"] == money("25.00")
    assert balance(http, a.account_id) == "475.00"
    assert balance(http, b.account_id) == "525.00"
    assert len(ledger(http)["transfers"]) == 1


def test_before_commit_fault_changes_nothing(http: httpx.Client, token: str) -> None:
    a = journey(http, token=token)
    b = journey(http, persona_index=1, token=token)
    add_fault(http, method="POST", path="/p2p/transfers", status=503, times=1)
    first = p2p_transfer(http, a, b.person_id, "25.00", idem="kb")
    assert_problem(first, 503, "injected-fault")
    assert balance(http, a.account_id) == "500.00"
    retry = p2p_transfer(http, a, b.person_id, "25.00", idem="kb")
    assert retry.status_code == 201
    assert "idempotent-replayed" not in retry.headers
    assert balance(http, a.account_id) == "475.00"


def test_promotion_retried_after_an_after_commit_fault_gets_its_session(
    http: httpx.Client, token: str
) -> None:
    device = Device()
    anon = new_session(http, token, device)
    account_id = create_account_request(http, token, anon).json()["account_id"]
    init = init_data(http, token)
    encrypted = encrypt_for_server(init, device.plaintext(init["nonce"], account_id=account_id))
    add_fault(http, method="POST", path="/sessions", status=503, when="after_commit", times=1)
    first = create_session(
        http, token, device, "account", current=anon, idem="kpromo", encrypted_data=encrypted
    )
    assert_problem(first, 503, "injected-fault")
    # the promotion happened: the anonymous session is superseded…
    assert_problem(create_account_request(http, token, anon), 401, "session-superseded")
    # …and the retry gets the new session rather than session-superseded
    retry = create_session(
        http, token, device, "account", current=anon, idem="kpromo", encrypted_data=encrypted
    )
    assert retry.status_code == 201, retry.text
    assert retry.headers.get("idempotent-replayed") == "true"
    session = retry.json()["session_token"]
    resp = card_request(http, token, account_id, "virtual", session=session)
    assert resp.status_code == 201, resp.text


def test_second_request_while_the_first_is_in_flight_is_409(
    http: httpx.Client, token: str, sim_server: Any
) -> None:
    j = journey(http, token=token, until="account")
    add_fault(http, method="POST", path="/accounts/{account_id}/cards", status=None, latency_ms=2500, times=1)
    results: dict[str, Any] = {}

    def slow() -> None:
        with httpx.Client(base_url=sim_server.base_url, timeout=10) as other:
            results["first"] = card_request(other, token, j.account_id, "virtual", idem="kf")

    def first_in_flight() -> bool:  # its key is recorded before the fault's latency starts
        return [f["fired"] for f in http.get("/_sim/faults").json()["faults"]] == [1]

    thread = threading.Thread(target=slow)
    thread.start()
    assert wait_until(first_in_flight, timeout=10), "the first request never reached the simulator"
    second = card_request(http, token, j.account_id, "virtual", idem="kf")
    thread.join(timeout=10)
    assert_problem(second, 409, "idempotency-key-in-use")
    assert results["first"].status_code == 201, results["first"].text
    third = card_request(http, token, j.account_id, "virtual", idem="kf")
    assert third.headers.get("idempotent-replayed") == "true"
    assert third.json() == results["first"].json()


@pytest.mark.parametrize("route", ["events", "subscriptions", "close"])
def test_every_partner_post_honours_idempotency_keys(http: httpx.Client, token: str, route: str) -> None:
    j = journey(http, token=token, until="account")
    card = card_request(http, token, j.account_id, "virtual").json()
    path, body = {
        "events": (f"/accounts/{j.account_id}/events", {"event_type": "password.changed"}),
        "subscriptions": (
            "/webhooks/subscriptions",
            {"url": "http://127.0.0.1:9/h", "events": ["card.closed"]},
        ),
        "close": (f"/cards/{card['card_id']}/close", {"reason": "lost"}),
    }[route]
    first = call(http, "POST", path, token=token, idem="kr", json_body=body)
    assert 200 <= first.status_code < 300, first.text
    second = call(http, "POST", path, token=token, idem="kr", json_body=body)
    assert second.status_code == first.status_code, second.text
    assert second.json() == first.json()
    assert second.headers.get("idempotent-replayed") == "true"
