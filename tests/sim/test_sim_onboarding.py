"""Onboarding and KYC (docs/contract.md, "onboarding and KYC"): accounts, persons with encrypted
PII, the anonymous session of the creating device (A42), the clear-text PII rule (A11)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.sim.helpers.contract import ECHO, PARTNER_B, PII_FIELDS, PII_NAMES
from tests.sim.helpers.control import clock_now, kyc_answers, ledger, personas, reset, snapshot
from tests.sim.helpers.encryption import Device, encrypt_for_server
from tests.sim.helpers.journeys import create_session, journey, new_session
from tests.sim.helpers.resources import (
    card_request,
    create_account,
    create_person,
    kyc_questions,
    pii_of,
    send_answers,
    send_event,
    wrong_answers,
)
from tests.sim.helpers.wire import assert_problem, call, init_data, parse_time, partner_token


@pytest.fixture
def http(both_decrypt_modes: Any) -> Any:
    """Every test here runs with JWEs decrypted on the event loop and in a worker process."""
    return both_decrypt_modes


# --- accounts -----


def test_account_opens_with_the_starting_balance(http: httpx.Client, token: str) -> None:
    now = clock_now(http)
    session = new_session(http, token, Device())
    resp = call(http, "POST", "/accounts", token=token, session=session, json_body={"product": "spending"})
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["account_id"].startswith("acc_")
    assert body["status"] == "open"
    assert body["balance"] == {"value": "500.00", "currency": "USD"}
    assert body["product"] == "spending"
    assert parse_time(body["created_at"]) == now
    assert {"account_id": body["account_id"], "balance": body["balance"]} in ledger(http)["accounts"]


def test_starting_balance_follows_the_register(http: httpx.Client, token: str) -> None:
    from kit import register

    value = register.value("A10")
    account = create_account(http, token, new_session(http, token, Device()))
    assert account["balance"] == {"value": value["starting_balance"], "currency": value["currency"]}


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"product": "savings"}, "unknown-product"),
        ({"product": ""}, "unknown-product"),
        ({"product": ECHO}, "unknown-product"),
        ({"product": None}, "validation-error"),
        ({"product": ["spending"]}, "validation-error"),
    ],
)
def test_bad_account_request(http: httpx.Client, token: str, body: dict, code: str) -> None:
    session = new_session(http, token, Device())
    before = snapshot(http)
    problem = assert_problem(
        call(http, "POST", "/accounts", token=token, session=session, json_body=body), 422, code
    )
    if code == "unknown-product":
        assert problem["allowed"] == ["spending"]
    else:
        assert problem["errors"][0]["field"] == "/product"
    assert snapshot(http) == before


def test_account_needs_an_anonymous_session(http: httpx.Client, token: str) -> None:
    j = journey(http)
    account_session = new_session(http, token, j.device, "account", account_id=j.account_id)
    before = snapshot(http)
    body = {"product": "spending"}
    assert_problem(call(http, "POST", "/accounts", token=token, json_body=body), 401, "session-required")
    for session in (account_session, j.person_session):
        assert_problem(
            call(http, "POST", "/accounts", token=token, session=session, json_body=body),
            403,
            "session-type-not-allowed",
        )
    assert snapshot(http) == before


# --- persons -----


@pytest.mark.parametrize("alg", ["RSA-OAEP-256", "ECDH-ES+A256KW"])
def test_person_is_created_from_encrypted_pii(http: httpx.Client, token: str, alg: str) -> None:
    j = journey(http, until="account")
    resp = create_person(http, token, j.account_session, j.account_id, pii_of(j.persona), alg)
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert set(body) == {"person_id", "account_id", "status"}, body
    assert body["person_id"].startswith("per_")
    assert body["account_id"] == j.account_id
    assert body["status"] == "kyc_pending"
    for value in pii_of(j.persona).values():
        assert value not in resp.text


def test_person_needs_a_bound_account_or_person_session(http: httpx.Client, token: str) -> None:
    a = journey(http, until="account")
    b = journey(http, persona_index=1, token=token, until="account")
    pii = pii_of(a.persona)
    assert_problem(create_person(http, token, b.account_session, a.account_id, pii), 403, "session-not-bound")
    assert_problem(create_person(http, token, None, a.account_id, pii), 401, "session-required")
    assert_problem(create_person(http, token, a.account_session, "acc_nope", pii), 404, "account-not-found")


# --- an anonymous session onboards a person on its own device's account (A42) --------------------


def _first_person_id(http: httpx.Client, refuse: bool) -> str:
    """From a reset: an account, optionally the refused anonymous attempts, then the first person."""
    reset(http, 7)
    token = partner_token(http)
    device = Device()
    anonymous = new_session(http, token, device)
    account_id = create_account(http, token, anonymous)["account_id"]
    other = journey(http, persona_index=1, token=token, until="account")
    pii = pii_of(personas(http)[0])
    if refuse:
        stranger = new_session(http, token, Device())  # another device's anonymous session
        before = snapshot(http)
        for session, account in ((stranger, account_id), (anonymous, other.account_id)):
            resp = create_person(http, token, session, account, pii)
            assert_problem(resp, 403, "session-not-bound", not_echo=tuple(pii.values()))
            assert set(resp.headers["svc-assumptions"].split(",")) >= {"A31", "A42"}
        assert snapshot(http) == before
    resp = create_person(http, token, anonymous, account_id, pii)
    assert resp.status_code == 201, resp.text
    return str(resp.json()["person_id"])


def test_the_creating_devices_anonymous_session_adds_a_person(http: httpx.Client, token: str) -> None:
    device = Device()
    anonymous = new_session(http, token, device)
    account_id = create_account(http, token, anonymous)["account_id"]
    resp = create_person(http, token, anonymous, account_id, pii_of(personas(http)[0]))
    assert resp.status_code == 201, resp.text
    person_id = resp.json()["person_id"]
    assert resp.json() == {"person_id": person_id, "account_id": account_id, "status": "kyc_pending"}
    assert "A42" in resp.headers["svc-assumptions"].split(",")
    # onboarding goes on as usual: promote to the account, then KYC through the account session
    account_session = new_session(http, token, device, "account", current=anonymous, account_id=account_id)
    questions = kyc_questions(http, token, account_session, person_id, device)
    assert len(questions) == 3
    resp = send_answers(http, token, account_session, person_id, kyc_answers(http, person_id))
    assert resp.json()["status"] == "established"
    # the anonymous session was promoted: it is superseded now, for persons too
    resp = create_person(http, token, anonymous, account_id, pii_of(personas(http)[0]))
    assert_problem(resp, 401, "session-superseded")


def test_other_anonymous_sessions_stay_refused_and_change_nothing(http: httpx.Client) -> None:
    """Another device's anonymous session, and the device's own on another account: 403
    session-not-bound, nothing changed (the next person still gets the first person id)."""
    refused_first = _first_person_id(http, refuse=True)
    assert refused_first == _first_person_id(http, refuse=False)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda p: p.pop("national_id"),
        lambda p: p.update(date_of_birth="01/02/1990"),
        lambda p: p.update(date_of_birth="2999-01-01"),
        lambda p: p.update(first_name=""),
        lambda p: p.update(last_name=7),
    ],
)
def test_bad_pii_plaintext_is_validation_error_on_encrypted_pii(
    http: httpx.Client, token: str, mutate: Any
) -> None:
    j = journey(http, until="account")
    pii = pii_of(j.persona)
    mutate(pii)
    resp = create_person(http, token, j.account_session, j.account_id, pii)
    body = assert_problem(
        resp, 422, "validation-error", not_echo=tuple(str(v) for v in pii.values() if len(str(v)) > 3)
    )
    assert [e["field"] for e in body["errors"]] == ["/encrypted_pii"] * len(body["errors"])


# --- clear-text PII at any depth ---------------------------------------------------------------------


def _pii_cases() -> list[tuple[str, str]]:
    return [(name, where) for name in PII_FIELDS for where in ("top", "nested", "in-list")]


@pytest.mark.parametrize(("name", "where"), _pii_cases())
def test_clear_text_pii_in_events_is_refused(http: httpx.Client, token: str, name: str, where: str) -> None:
    j = journey(http, until="account")
    value = ECHO + "-1990-01-01"
    body: dict[str, Any] = {"event_type": "password.changed"}
    if where == "top":
        body[name] = value
    elif where == "nested":
        body["details"] = {"context": {name: value}}
    else:
        body["details"] = {"items": [{"note": "x"}, {name: value}]}
    before = snapshot(http)
    resp = send_event(http, token, j.account_id, body)
    assert_problem(resp, 422, "pii-must-be-encrypted", not_echo=(value, ECHO))
    assert snapshot(http) == before


def test_pii_list_is_the_register_list() -> None:
    from kit import register

    assert register.value("A11")["pii_names"] == PII_NAMES


@pytest.mark.parametrize(
    "route",
    ["accounts", "persons", "cards", "close", "subscriptions", "p2p", "sessions", "answers"],
)
def test_clear_text_pii_is_refused_on_every_route(http: httpx.Client, token: str, route: str) -> None:
    j = journey(http)
    persona = j.persona
    card = card_request(http, token, j.account_id, "virtual").json()
    init = init_data(http, token)
    anon = new_session(http, token, Device())
    method_path_body_session = {
        "accounts": (
            "/accounts",
            {"product": "spending", "date_of_birth": persona["date_of_birth"]},
            anon,
            None,
        ),
        "persons": (
            f"/accounts/{j.account_id}/persons",
            {
                "encrypted_pii": encrypt_for_server(init, pii_of(persona)),
                "national_id": persona["national_id"],
            },
            j.person_session,
            None,
        ),
        "cards": (
            f"/accounts/{j.account_id}/cards",
            {"type": "virtual", "meta": {"ssn": persona["national_id"]}},
            None,
            None,
        ),
        "close": (
            f"/cards/{card['card_id']}/close",
            {"reason": "lost", "extra": [{"tax_id": persona["national_id"]}]},
            None,
            None,
        ),
        "subscriptions": (
            "/webhooks/subscriptions",
            {
                "url": "http://127.0.0.1:9/h",
                "events": ["card.closed"],
                "passport_number": persona["national_id"],
            },
            None,
            None,
        ),
        "p2p": (
            "/p2p/transfers",
            {
                "from_account_id": j.account_id,
                "to_person_id": "per_x",
                "amount": {"value": "1.00", "currency": "USD"},
                "memo": {"dob": persona["date_of_birth"]},
            },
            j.person_session,
            "pii-key-1",
        ),
        "sessions": (
            "/sessions",
            {
                "session_type": "anonymous",
                "expiration_strategy": "fixed",
                "encrypted_data": "a.b.c.d.e",
                "birth_date": persona["date_of_birth"],
            },
            None,
            None,
        ),
        "answers": (
            f"/persons/{j.person_id}/kyc/answers",
            {"encrypted_answers": "a.b.c.d.e", "first_name": persona["first_name"]},
            j.person_session,
            None,
        ),
    }
    path, body, session, idem = method_path_body_session[route]
    before = snapshot(http, token, (f"/cards/{card['card_id']}",))
    resp = call(http, "POST", path, token=token, session=session, idem=idem, json_body=body)
    assert_problem(
        resp, 422, "pii-must-be-encrypted", not_echo=(persona["national_id"], persona["date_of_birth"])
    )
    assert snapshot(http, token, (f"/cards/{card['card_id']}",)) == before


def test_pii_field_names_as_values_are_fine(http: httpx.Client, token: str) -> None:
    j = journey(http, until="account")
    body = {"event_type": "password.changed", "details": {"field": "ssn", "list": ["date_of_birth"]}}
    resp = send_event(http, token, j.account_id, body)
    assert resp.status_code == 202, resp.text


# --- KYC -----


def test_kyc_questions_are_encrypted_to_the_device(http: httpx.Client, token: str) -> None:
    j = journey(http, until="pending")
    resp = call(http, "GET", f"/persons/{j.person_id}/kyc/questions", token=token, session=j.account_session)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert set(body) == {"encrypted_questions"}
    questions = j.device.decrypt(body["encrypted_questions"])["questions"]
    assert len(questions) == 3
    ids = [q["question_id"] for q in questions]
    assert len(set(ids)) == 3
    for q in questions:
        assert isinstance(q["text"], str) and q["text"]
        assert len(q["choices"]) == 4 and len(set(q["choices"])) == 4
        assert all(isinstance(c, str) for c in q["choices"])
    right = {a["question_id"]: a["choice"] for a in kyc_answers(http, j.person_id)}
    assert set(right) == set(ids)
    for q in questions:
        assert right[q["question_id"]] in q["choices"]
    # answerable from the PII: the birth year is the right answer of one question
    assert j.persona["date_of_birth"][:4] in right.values()


def test_right_answers_establish_the_person(http: httpx.Client, token: str) -> None:
    j = journey(http, until="pending")
    resp = send_answers(http, token, j.account_session, j.person_id, kyc_answers(http, j.person_id))
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"person_id": j.person_id, "status": "established", "attempts_left": 3}


def test_three_wrong_attempts_lock_the_person(http: httpx.Client, token: str) -> None:
    j = journey(http, until="pending")
    right = kyc_answers(http, j.person_id)
    wrong = wrong_answers(j.questions, right)
    for left in (2, 1, 0):
        resp = send_answers(http, token, j.account_session, j.person_id, wrong)
        assert resp.status_code == 200, resp.text
        assert resp.json() == {"person_id": j.person_id, "status": "failed", "attempts_left": left}
    assert_problem(send_answers(http, token, j.account_session, j.person_id, right), 409, "kyc-locked")
    resp = call(http, "GET", f"/persons/{j.person_id}/kyc/questions", token=token, session=j.account_session)
    assert_problem(resp, 409, "kyc-locked")
    resp = create_session(http, token, j.device, "person", current=j.account_session, person_id=j.person_id)
    assert_problem(resp, 409, "invalid-session-transition")


def test_attempts_left_stays_when_established_after_a_failure(http: httpx.Client, token: str) -> None:
    j = journey(http, until="pending")
    right = kyc_answers(http, j.person_id)
    resp = send_answers(http, token, j.account_session, j.person_id, wrong_answers(j.questions, right))
    assert resp.json()["attempts_left"] == 2
    resp = send_answers(http, token, j.account_session, j.person_id, right)
    assert resp.json() == {"person_id": j.person_id, "status": "established", "attempts_left": 2}


def test_a_choice_not_offered_counts_as_wrong(http: httpx.Client, token: str) -> None:
    j = journey(http, until="pending")
    answers = [{"question_id": q["question_id"], "choice": "not-a-choice"} for q in j.questions]
    resp = send_answers(http, token, j.account_session, j.person_id, answers)
    assert resp.json() == {"person_id": j.person_id, "status": "failed", "attempts_left": 2}


@pytest.mark.parametrize("shape", ["missing-one", "duplicate", "unknown-question", "empty"])
def test_incomplete_answers_are_validation_error_and_cost_no_attempt(
    http: httpx.Client, token: str, shape: str
) -> None:
    j = journey(http, until="pending")
    right = kyc_answers(http, j.person_id)
    answers = {
        "missing-one": right[:2],
        "duplicate": [*right, right[0]],
        "unknown-question": [*right[:2], {"question_id": "q_nope", "choice": "x"}],
        "empty": [],
    }[shape]
    resp = send_answers(http, token, j.account_session, j.person_id, answers)
    body = assert_problem(resp, 422, "validation-error")
    assert body["errors"][0]["field"] == "/encrypted_answers"
    wrong = wrong_answers(j.questions, right)
    resp = send_answers(http, token, j.account_session, j.person_id, wrong)
    assert resp.json()["attempts_left"] == 2, "the invalid request must not count as an attempt"


def test_answers_after_established_change_nothing(http: httpx.Client, token: str) -> None:
    j = journey(http)
    right = kyc_answers(http, j.person_id)
    for answers in (wrong_answers(j.questions, right), right):
        resp = send_answers(http, token, j.person_session, j.person_id, answers)
        assert resp.status_code == 200, resp.text
        assert resp.json() == {"person_id": j.person_id, "status": "established", "attempts_left": 3}


def test_kyc_session_rules(http: httpx.Client, token: str) -> None:
    a = journey(http)
    b = journey(http, persona_index=1, token=token, until="pending")
    path = f"/persons/{b.person_id}/kyc/questions"
    assert_problem(call(http, "GET", path, token=token), 401, "session-required")
    anon = new_session(http, token, Device())
    assert_problem(call(http, "GET", path, token=token, session=anon), 403, "session-type-not-allowed")
    assert_problem(call(http, "GET", path, token=token, session=a.account_session), 401, "session-superseded")
    assert_problem(call(http, "GET", path, token=token, session=a.person_session), 403, "session-not-bound")
    assert_problem(
        call(http, "GET", "/persons/per_nope/kyc/questions", token=token, session=b.account_session),
        404,
        "person-not-found",
    )
    # b's own account session works
    assert len(kyc_questions(http, token, b.account_session, b.person_id, b.device)) == 3


def test_another_partner_gets_404_for_a_person(http: httpx.Client, token: str) -> None:
    j = journey(http, until="pending")
    token_b = partner_token(http, *PARTNER_B)
    bj = journey(http, persona_index=1, token=token_b, until="account")
    resp = call(
        http, "GET", f"/persons/{j.person_id}/kyc/questions", token=token_b, session=bj.account_session
    )
    assert_problem(resp, 404, "person-not-found")


def test_personas_are_synthetic(http: httpx.Client) -> None:
    people = personas(http)
    assert len(people) >= 10
    assert len({p["persona_id"] for p in people}) == len(people)
    for p in people:
        for key in ("persona_id", "first_name", "last_name", "date_of_birth", "national_id"):
            assert isinstance(p[key], str) and p[key]
        assert isinstance(p["device"], dict)
        assert parse_time(p["date_of_birth"] + "T00:00:00Z").year < 2025
