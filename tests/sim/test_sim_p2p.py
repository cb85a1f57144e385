"""P2P transfers (A18, A36, A37): roles, the 422 codes in order, money moving exactly once."""

from __future__ import annotations

import functools
from decimal import Decimal
from typing import Any

import httpx
import pytest

from tests.sim.helpers.contract import ECHO, PARTNER_B
from tests.sim.helpers.control import balance, clock_now, fund, kyc_answers, ledger, snapshot, unchanged
from tests.sim.helpers.encryption import Device
from tests.sim.helpers.journeys import journey, new_session, p2p_transfer
from tests.sim.helpers.resources import send_answers, wrong_answers
from tests.sim.helpers.wire import assert_problem, call, money, parse_time, partner_token

#: A transfer of the sender's with this module's defaults: key ``key-1``, memo ``lunch``.
transfer = functools.partial(p2p_transfer, idem="key-1", memo="lunch")


def test_transfer_between_two_customers(http: httpx.Client, pair: tuple[Any, Any]) -> None:
    a, b = pair
    now = clock_now(http)
    resp = transfer(http, a, b.person_id, "12.50")
    assert resp.status_code == 201, resp.text
    assert resp.headers.get("svc-p2p-role") == "sender"
    body = resp.json()
    assert set(body) == {
        "transfer_id",
        "status",
        "from_account_id",
        "to_person_id",
        "amount",
        "memo",
        "created_at",
    }, body
    assert body["transfer_id"].startswith("p2p_")
    assert body["status"] == "completed"
    assert body["from_account_id"] == a.account_id
    assert body["to_person_id"] == b.person_id
    assert body["amount"] == {"value": "12.50", "currency": "USD"}
    assert body["memo"] == "lunch"
    assert parse_time(body["created_at"]) == now
    assert balance(http, a.account_id) == "487.50"
    assert balance(http, b.account_id) == "512.50"
    ids = [t.get("transfer_id") for t in ledger(http)["transfers"]]
    assert ids.count(body["transfer_id"]) == 1


@pytest.mark.parametrize(
    ("value", "shown"), [("7", "7.00"), ("0.5", "0.50"), ("0.01", "0.01"), ("500", "500.00")]
)
def test_amounts_are_shown_with_two_decimals(
    http: httpx.Client, pair: tuple[Any, Any], value: str, shown: str
) -> None:
    a, b = pair
    resp = transfer(http, a, b.person_id, value)
    assert resp.status_code == 201, resp.text
    assert resp.json()["amount"]["value"] == shown
    assert Decimal(balance(http, a.account_id)) == Decimal("500.00") - Decimal(value)
    assert balance(http, a.account_id).count(".") == 1
    assert len(balance(http, a.account_id).split(".")[1]) == 2


def test_memo_is_optional(http: httpx.Client, pair: tuple[Any, Any]) -> None:
    a, b = pair
    resp = transfer(http, a, b.person_id, "12.50", memo=None)
    assert resp.status_code == 201, resp.text
    assert resp.json()["memo"] is None


def test_get_by_sender_and_receiver(http: httpx.Client, pair: tuple[Any, Any]) -> None:
    a, b = pair
    created = transfer(http, a, b.person_id, "12.50").json()
    path = f"/p2p/transfers/{created['transfer_id']}"
    for who, role in ((a, "sender"), (b, "receiver")):
        resp = call(http, "GET", path, token=who.token, session=who.person_session)
        assert resp.status_code == 200, resp.text
        assert resp.headers.get("svc-p2p-role") == role
        assert resp.json() == {**created, "viewer_role": role}


def test_third_person_and_non_person_sessions(http: httpx.Client, token: str, pair: tuple[Any, Any]) -> None:
    a, b = pair
    c = journey(http, persona_index=2, token=token)
    created = transfer(http, a, b.person_id, "12.50").json()
    path = f"/p2p/transfers/{created['transfer_id']}"
    assert_problem(call(http, "GET", path, token=token, session=c.person_session), 404, "transfer-not-found")
    assert_problem(
        call(http, "GET", "/p2p/transfers/p2p_nope", token=token, session=a.person_session),
        404,
        "transfer-not-found",
    )
    account_session = new_session(http, token, a.device, "account", account_id=a.account_id)
    anon = new_session(http, token, Device())
    for session in (account_session, anon):
        assert_problem(call(http, "GET", path, token=token, session=session), 403, "session-type-not-allowed")
    assert_problem(call(http, "GET", path, token=token), 401, "session-required")
    token_b = partner_token(http, *PARTNER_B)
    assert_problem(call(http, "GET", path, token=token_b, session=a.person_session), 401, "invalid-session")
    other = journey(http, persona_index=3, token=token_b)
    assert_problem(
        call(http, "GET", path, token=token_b, session=other.person_session), 404, "transfer-not-found"
    )


def test_post_needs_the_senders_person_session(http: httpx.Client, token: str, pair: tuple[Any, Any]) -> None:
    a, b = pair
    before = snapshot(http)
    account_session = new_session(http, token, a.device, "account", account_id=a.account_id)
    assert_problem(
        transfer(http, a, b.person_id, "12.50", session=account_session), 403, "session-type-not-allowed"
    )
    resp = p2p_transfer(http, a, b.person_id, "1", token=token, session=None, idem="k-nosession")
    assert_problem(resp, 401, "session-required")
    # b's person session cannot send from a's account
    assert_problem(
        transfer(http, a, b.person_id, "12.50", session=b.person_session, idem="k-b"),
        403,
        "session-not-bound",
    )
    assert_problem(
        transfer(http, a, b.person_id, "12.50", from_account_id="acc_nope", idem="k-nope"),
        404,
        "account-not-found",
    )
    assert snapshot(http) == before


def test_idempotency_key_is_required(http: httpx.Client, pair: tuple[Any, Any]) -> None:
    a, b = pair
    with unchanged(http):
        assert_problem(transfer(http, a, b.person_id, "12.50", idem=None), 400, "idempotency-key-required")


# --- the 422 codes, in order -----


@pytest.mark.parametrize(
    "value",
    [
        "0",
        "0.00",
        "-1",
        "-0.01",
        "1.234",
        "1e3",
        "١٢",
        "12.",
        ".5",
        " 12",
        "12 ",
        "+5",
        "1,00",
        "0x10",
        "NaN",
        "Infinity",
        "",
        ECHO,
    ],
)
def test_invalid_amount(http: httpx.Client, pair: tuple[Any, Any], value: str) -> None:
    a, b = pair
    # invalid-amount comes first, even with a bad currency and the sender as recipient
    with unchanged(http):
        for to, currency in ((b.person_id, "USD"), (a.person_id, "EUR")):
            resp = transfer(http, a, to, value, currency, idem=f"k-{to}")
            assert_problem(resp, 422, "invalid-amount")


@pytest.mark.parametrize("amount", [12.5, 12, None, {"value": "1.00"}, "12.50"])
def test_amount_of_the_wrong_shape(http: httpx.Client, pair: tuple[Any, Any], amount: Any) -> None:
    a, b = pair
    with unchanged(http):
        resp = p2p_transfer(http, a, b.person_id, amount=amount, idem="k-shape")
        assert resp.status_code == 422, resp.text
        assert resp.json()["code"] in ("validation-error", "invalid-amount", "unsupported-currency")


@pytest.mark.parametrize("currency", ["EUR", "usd", "", "USDT", ECHO])
def test_unsupported_currency(http: httpx.Client, pair: tuple[Any, Any], currency: str) -> None:
    a, _ = pair
    with unchanged(http):
        resp = transfer(http, a, a.person_id, "1.00", currency)  # before self-transfer
        assert_problem(resp, 422, "unsupported-currency")


def test_self_transfer(http: httpx.Client, pair: tuple[Any, Any]) -> None:
    a, _ = pair
    with unchanged(http):  # self-transfer comes before insufficient funds
        assert_problem(transfer(http, a, a.person_id, "1000.00"), 422, "self-transfer")


def test_recipient_not_eligible(http: httpx.Client, token: str, pair: tuple[Any, Any]) -> None:
    a, _ = pair
    pending = journey(http, persona_index=2, token=token, until="pending")
    locked = journey(http, persona_index=3, token=token, until="pending")
    wrong = wrong_answers(locked.questions, kyc_answers(http, locked.person_id))
    for _ in range(3):
        send_answers(http, token, locked.account_session, locked.person_id, wrong)
    token_b = partner_token(http, *PARTNER_B)
    foreign = journey(http, persona_index=4, token=token_b)
    before = snapshot(http)
    details = set()
    for person_id in ("per_nope", pending.person_id, locked.person_id, foreign.person_id):
        # before insufficient funds
        body = assert_problem(
            transfer(http, a, person_id, "9999.00", idem=f"k-{person_id}"), 422, "recipient-not-eligible"
        )
        details.add(body["detail"])
    assert len(details) == 1, "one code and one message: no enumeration of persons"
    assert snapshot(http) == before


def test_insufficient_funds(http: httpx.Client, pair: tuple[Any, Any]) -> None:
    a, b = pair
    with unchanged(http):
        assert_problem(transfer(http, a, b.person_id, "500.01"), 422, "insufficient-funds")
    resp = transfer(http, a, b.person_id, "500.00", idem="k-all")
    assert resp.status_code == 201, resp.text
    assert balance(http, a.account_id) == "0.00"
    assert_problem(transfer(http, a, b.person_id, "0.01", idem="k-more"), 422, "insufficient-funds")


def test_funding_allows_larger_transfers(http: httpx.Client, pair: tuple[Any, Any]) -> None:
    a, b = pair
    resp = fund(http, a.account_id, "100.25")
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"account_id": a.account_id, "balance": money("600.25")}
    assert transfer(http, a, b.person_id, "600.25").status_code == 201
    assert balance(http, a.account_id) == "0.00"
    assert balance(http, b.account_id) == "1100.25"


def test_money_moves_exactly_once_across_retries(http: httpx.Client, pair: tuple[Any, Any]) -> None:
    a, b = pair
    first = transfer(http, a, b.person_id, "10.00", idem="same")
    for _ in range(3):
        again = transfer(http, a, b.person_id, "10.00", idem="same")
        assert again.status_code == 201
        assert again.json() == first.json()
        assert again.headers.get("idempotent-replayed") == "true"
        assert again.headers.get("svc-p2p-role") == "sender"
    assert balance(http, a.account_id) == "490.00"
    assert balance(http, b.account_id) == "510.00"
    assert len(ledger(http)["transfers"]) == 1
