"""Sessions (A05-A09, A34): creation, promotion, direct sessions of bound devices, expiry, ending."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from joserfc.jwk import ECKey

from kit import register
from tests.sim.helpers.contract import PARTNER_B
from tests.sim.helpers.control import advance, clock_now, kyc_answers, personas
from tests.sim.helpers.encryption import Device, decrypt_from_server, encrypt_for_server
from tests.sim.helpers.journeys import create_session, journey, new_session, session_token_of
from tests.sim.helpers.resources import (
    card_request,
    create_account,
    create_account_request,
    create_person,
    pii_of,
    send_answers,
)
from tests.sim.helpers.wire import assert_problem, call, init_data, parse_time, partner_token


@pytest.fixture
def http(both_decrypt_modes: Any) -> Any:
    """Every test here runs with JWEs decrypted on the event loop and in a worker process."""
    return both_decrypt_modes


FIXED = timedelta(seconds=1800)
SLIDING = timedelta(seconds=900)
CAP = timedelta(seconds=43200)


def use_anonymous(http: httpx.Client, token: str, session: str) -> httpx.Response:
    """A 2xx call that needs an anonymous session (it opens an account)."""
    return create_account_request(http, token, session)


def expires_header(resp: httpx.Response) -> Any:
    value = resp.headers.get("svc-session-expires-at")
    assert value, f"no svc-session-expires-at on {resp.request.url.path} {resp.status_code}"
    return parse_time(value)


# --- creation -----


@pytest.mark.parametrize(("strategy", "lifetime"), [("fixed", FIXED), ("sliding", SLIDING)])
def test_anonymous_session_is_created(
    http: httpx.Client, token: str, strategy: str, lifetime: timedelta
) -> None:
    now = clock_now(http)
    device = Device()
    resp = create_session(http, token, device, "anonymous", strategy)
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert set(body) == {"session_token", "session_type", "expiration_strategy", "expires_at", "device_id"}, (
        body
    )
    assert body["session_token"].startswith("ses_")
    assert body["session_type"] == "anonymous"
    assert body["expiration_strategy"] == strategy
    assert body["device_id"] == device.device_id
    assert parse_time(body["expires_at"]) == now + lifetime
    assert use_anonymous(http, token, body["session_token"]).status_code == 201


def test_session_tokens_are_random(http: httpx.Client, token: str) -> None:
    device = Device()
    tokens = {new_session(http, token, device) for _ in range(3)}
    assert len(tokens) == 3, "a device may hold several live sessions, each its own token"


@pytest.mark.parametrize(
    ("field", "value", "code", "allowed"),
    [
        ("session_type", "guest", "unknown-session-type", ["anonymous", "account", "person"]),
        ("session_type", "", "unknown-session-type", ["anonymous", "account", "person"]),
        ("expiration_strategy", "forever", "unknown-expiration-strategy", ["fixed", "sliding"]),
        ("session_type", 3, "validation-error", None),
        ("encrypted_data", 3, "validation-error", None),
    ],
)
def test_bad_session_request_fields(
    http: httpx.Client, token: str, field: str, value: Any, code: str, allowed: Any
) -> None:
    init = init_data(http, token)
    device = Device()
    body = {
        "session_type": "anonymous",
        "expiration_strategy": "fixed",
        "encrypted_data": encrypt_for_server(init, device.plaintext(init["nonce"])),
    }
    body[field] = value
    problem = assert_problem(call(http, "POST", "/sessions", token=token, json_body=body), 422, code)
    if allowed is not None:
        assert problem["allowed"] == allowed
    else:
        assert problem["errors"][0]["field"] == f"/{field}"
    # a schema error comes before decryption: the nonce was not used
    assert create_session(http, token, device, init=init).status_code == 201


def test_missing_encrypted_data_is_validation_error(http: httpx.Client, token: str) -> None:
    body = {"session_type": "anonymous", "expiration_strategy": "fixed"}
    body = assert_problem(
        call(http, "POST", "/sessions", token=token, json_body=body), 422, "validation-error"
    )
    assert "/encrypted_data" in [e["field"] for e in body["errors"]]


def test_sessions_need_the_partner_token(http: httpx.Client) -> None:
    resp = http.post("/sessions", json={"session_type": "anonymous"})
    assert_problem(resp, 401, "invalid-partner-token")


# --- promotion -----


def test_promotion_anonymous_account_person(http: httpx.Client, token: str) -> None:
    persona = personas(http)[0]
    device = Device.for_persona(persona)
    anon = new_session(http, token, device)
    account_id = create_account(http, token, anon)["account_id"]

    now = clock_now(http)
    resp = create_session(http, token, device, "account", current=anon, account_id=account_id)
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["session_type"] == "account" and body["session_token"].startswith("ses_")
    assert "encrypted_session_token" not in body
    assert parse_time(body["expires_at"]) == now + FIXED
    assert expires_header(resp) == parse_time(body["expires_at"])
    account_session = body["session_token"]
    assert_problem(use_anonymous(http, token, anon), 401, "session-superseded")

    resp = create_person(http, token, account_session, account_id, pii_of(persona))
    assert resp.status_code == 201, resp.text
    person_id = resp.json()["person_id"]
    call(http, "GET", f"/persons/{person_id}/kyc/questions", token=token, session=account_session)
    resp = send_answers(http, token, account_session, person_id, kyc_answers(http, person_id))
    assert resp.json()["status"] == "established", resp.text

    resp = create_session(http, token, device, "person", current=account_session, person_id=person_id)
    assert resp.status_code == 201, resp.text
    assert resp.json()["session_type"] == "person"
    person_session = resp.json()["session_token"]
    resp = call(http, "GET", f"/persons/{person_id}/kyc/questions", token=token, session=account_session)
    assert_problem(resp, 401, "session-superseded")
    # a person session covers its person's account
    resp = card_request(http, token, account_id, "virtual", session=person_session)
    assert resp.status_code == 201, resp.text


def test_failed_promotion_leaves_the_old_session_valid(http: httpx.Client, token: str) -> None:
    j = journey(http, until="pending")
    # KYC not established yet: 409, and the account session still works
    resp = create_session(http, token, j.device, "person", current=j.account_session, person_id=j.person_id)
    assert_problem(resp, 409, "invalid-session-transition")
    resp = call(http, "GET", f"/persons/{j.person_id}/kyc/questions", token=token, session=j.account_session)
    assert resp.status_code == 200, resp.text


def _transition_cases() -> list[str]:
    return [
        "anonymous-to-person",
        "anonymous-to-anonymous",
        "account-to-account",
        "account-to-anonymous",
        "person-to-person",
        "person-to-account",
        "other-device-id",
        "other-device-key",
        "account-of-another-device",
        "person-of-another-account",
        "account-that-does-not-exist",
    ]


@pytest.mark.parametrize("case", _transition_cases())
def test_illegal_transitions_are_409(http: httpx.Client, token: str, case: str) -> None:
    a = journey(http, token=token)
    b = journey(http, persona_index=1, token=token)
    d = a.device
    twin_id = Device(d.device_id, key=ECKey.generate_key("P-256", private=True))
    twin_key = Device(key=d.key)
    anon = new_session(http, token, d)
    assert a.person_session and b.person_id
    kw: dict[str, Any]
    current, kind, device, kw = {
        "anonymous-to-person": (anon, "person", d, {"person_id": a.person_id}),
        "anonymous-to-anonymous": (anon, "anonymous", d, {}),
        "account-to-account": (None, "account", d, {"account_id": a.account_id}),
        "account-to-anonymous": (None, "anonymous", d, {}),
        "person-to-person": (a.person_session, "person", d, {"person_id": a.person_id}),
        "person-to-account": (a.person_session, "account", d, {"account_id": a.account_id}),
        "other-device-id": (anon, "account", twin_key, {"account_id": a.account_id}),
        "other-device-key": (anon, "account", twin_id, {"account_id": a.account_id}),
        "account-of-another-device": (anon, "account", d, {"account_id": b.account_id}),
        "person-of-another-account": (None, "person", d, {"person_id": b.person_id}),
        "account-that-does-not-exist": (anon, "account", d, {"account_id": "acc_nope"}),
    }[case]
    if current is None:  # a fresh account session of a, made directly (device is bound)
        current = session_token_of(create_session(http, token, d, "account", account_id=a.account_id), d)
    resp = create_session(http, token, device, kind, current=current, **kw)
    assert_problem(resp, 409, "invalid-session-transition")
    # the current session is still valid (a failed promotion leaves it)
    if kind != "anonymous" and current == anon:
        assert use_anonymous(http, token, anon).status_code == 201


def test_promotion_from_an_invalid_session_is_a_session_error(http: httpx.Client, token: str) -> None:
    device = Device()
    anon = new_session(http, token, device)
    account_id = create_account(http, token, anon)["account_id"]
    new_session(http, token, device, "account", current=anon, account_id=account_id)
    # the anonymous session is superseded: 401 before any transition check
    resp = create_session(http, token, device, "account", current=anon, account_id=account_id)
    assert_problem(resp, 401, "session-superseded")
    resp = create_session(http, token, device, "account", current="ses_unknown", account_id=account_id)
    assert_problem(resp, 401, "invalid-session")


# --- direct sessions for bound devices -----


def test_direct_account_session_for_a_bound_device(http: httpx.Client, token: str) -> None:
    j = journey(http, until="account")
    now = clock_now(http)
    resp = create_session(http, token, j.device, "account", account_id=j.account_id)
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert "session_token" not in body, "a direct session is only sent encrypted"
    assert body["session_type"] == "account"
    assert parse_time(body["expires_at"]) == now + FIXED
    inner = decrypt_from_server(j.device, body["encrypted_session_token"])
    assert set(inner) == {"session_token"}
    session = inner["session_token"]
    assert session.startswith("ses_")
    resp = card_request(http, token, j.account_id, "virtual", session=session)
    assert resp.status_code == 201, resp.text
    # the promoted account session lives on: a device may hold several sessions
    resp = card_request(http, token, j.account_id, "virtual", session=j.account_session)
    assert resp.status_code == 201, resp.text


def test_direct_person_session_for_a_bound_device(http: httpx.Client, token: str) -> None:
    j = journey(http)
    resp = create_session(http, token, j.device, "person", person_id=j.person_id)
    assert resp.status_code == 201, resp.text
    assert "session_token" not in resp.json()
    session = decrypt_from_server(j.device, resp.json()["encrypted_session_token"])["session_token"]
    resp = card_request(http, token, j.account_id, "virtual", session=session)
    assert resp.status_code == 201, resp.text


def test_encrypted_session_token_is_for_the_device_key_only(http: httpx.Client, token: str) -> None:
    j = journey(http, until="account")
    resp = create_session(http, token, j.device, "account", account_id=j.account_id)
    stranger = Device()
    with pytest.raises(Exception):  # noqa: B017 (joserfc raises its own error types)
        decrypt_from_server(stranger, resp.json()["encrypted_session_token"])


@pytest.mark.parametrize(
    "case",
    [
        "new-device",
        "same-id-other-key",
        "same-key-other-id",
        "account-does-not-exist",
        "person-does-not-exist",
        "other-partner",
        "person-not-yet-bound",
        "other-account",
    ],
)
def test_direct_session_refused_is_403_device_not_recognized(
    http: httpx.Client, token: str, case: str
) -> None:
    j = journey(http, until="pending")
    other = journey(http, persona_index=1, token=token, until="account")
    d = j.device
    token_b = partner_token(http, *PARTNER_B)
    kind, device, tok, kw = {
        "new-device": ("account", Device(), token, {"account_id": j.account_id}),
        "same-id-other-key": ("account", Device(d.device_id), token, {"account_id": j.account_id}),
        "same-key-other-id": ("account", Device(key=d.key), token, {"account_id": j.account_id}),
        "account-does-not-exist": ("account", d, token, {"account_id": "acc_nope"}),
        "person-does-not-exist": ("person", d, token, {"person_id": "per_nope"}),
        "other-partner": ("account", d, token_b, {"account_id": j.account_id}),
        "person-not-yet-bound": ("person", d, token, {"person_id": j.person_id}),
        "other-account": ("account", d, token, {"account_id": other.account_id}),
    }[case]
    resp = create_session(http, tok, device, kind, **kw)
    body = assert_problem(resp, 403, "device-not-recognized")
    assert "session_token" not in body and "encrypted_session_token" not in body


def test_device_not_recognized_does_not_enumerate(http: httpx.Client, token: str) -> None:
    j = journey(http, until="account")
    exists = create_session(http, token, Device(), "account", account_id=j.account_id)
    missing = create_session(http, token, Device(), "account", account_id="acc_missing")
    assert (
        assert_problem(exists, 403, "device-not-recognized")["detail"]
        == assert_problem(missing, 403, "device-not-recognized")["detail"]
    )


# --- lifetimes -----


def used_after(http: httpx.Client, token: str, session: str, seconds: int) -> httpx.Response:
    """``seconds`` of simulator time later, a 2xx call in the anonymous ``session``."""
    advance(http, seconds)
    resp = use_anonymous(http, token, session)
    assert resp.status_code == 201, resp.text
    return resp


def test_fixed_session_expires_30_minutes_after_creation(http: httpx.Client, token: str) -> None:
    start = clock_now(http)
    session = new_session(http, token, Device(), "anonymous", "fixed")
    resp = used_after(http, token, session, 1000)
    assert expires_header(resp) == start + FIXED, "a fixed session does not slide"
    used_after(http, token, session, 799)
    advance(http, 1)
    assert_problem(use_anonymous(http, token, session), 401, "session-expired")


def test_sliding_session_slides_on_2xx_calls(http: httpx.Client, token: str) -> None:
    start = clock_now(http)
    session = new_session(http, token, Device(), "anonymous", "sliding")
    resp = used_after(http, token, session, 600)
    assert expires_header(resp) == start + timedelta(seconds=600) + SLIDING
    resp = used_after(http, token, session, 600)  # past the first expiry, within the slid one
    assert expires_header(resp) == start + timedelta(seconds=1200) + SLIDING
    advance(http, 900)
    assert_problem(use_anonymous(http, token, session), 401, "session-expired")


def test_sliding_session_does_not_slide_on_errors(http: httpx.Client, token: str) -> None:
    start = clock_now(http)
    session = new_session(http, token, Device(), "anonymous", "sliding")
    advance(http, 600)
    resp = create_account_request(http, token, session, "bogus")
    assert_problem(resp, 422, "unknown-product")
    # presented and valid: the header is there, with the unmoved expiry
    assert expires_header(resp) == start + SLIDING
    advance(http, 300)
    assert_problem(use_anonymous(http, token, session), 401, "session-expired")


def test_sliding_chain_is_capped_at_12_hours(http: httpx.Client, token: str) -> None:
    start = clock_now(http)
    device = Device()
    session = new_session(http, token, device, "anonymous", "sliding")
    elapsed = 0
    step = 840
    while elapsed + step <= 43200 - 600:  # bounded: 50 steps
        advance(http, step)
        elapsed += step
        resp = use_anonymous(http, token, session)
        assert resp.status_code == 201, (elapsed, resp.text)
        expected = min(timedelta(seconds=elapsed) + SLIDING, CAP)
        assert expires_header(resp) == start + expected, elapsed
    # promote near the cap: the new session never outlives the chain's 12 hours
    advance(http, 43200 - 600 - elapsed)
    resp = use_anonymous(http, token, session)
    assert resp.status_code == 201, resp.text
    assert expires_header(resp) == start + CAP
    account_id = resp.json()["account_id"]
    resp = create_session(http, token, device, "account", "sliding", current=session, account_id=account_id)
    assert resp.status_code == 201, resp.text
    assert parse_time(resp.json()["expires_at"]) == start + CAP
    account_session = resp.json()["session_token"]
    advance(http, 599)
    resp = card_request(http, token, account_id, "virtual", session=account_session)
    assert resp.status_code == 201, resp.text
    assert expires_header(resp) == start + CAP
    advance(http, 1)
    resp = card_request(http, token, account_id, "virtual", session=account_session)
    assert_problem(resp, 401, "session-expired")


def test_session_expiry_header_is_sent_when_a_valid_session_is_presented(
    http: httpx.Client, token: str
) -> None:
    j = journey(http, until="account")
    resp = call(http, "GET", "/persons/per_nope/kyc/questions", token=token, session=j.account_session)
    assert resp.status_code == 404
    assert resp.headers.get("svc-session-expires-at")


# --- errors and ending -----


def test_session_errors(http: httpx.Client, token: str) -> None:
    j = journey(http, until="account")
    assert_problem(create_account_request(http, token, None), 401, "session-required")
    assert_problem(use_anonymous(http, token, "ses_unknown"), 401, "invalid-session")
    assert_problem(use_anonymous(http, token, j.account_session), 403, "session-type-not-allowed")


def test_delete_session_ends_it(http: httpx.Client, token: str) -> None:
    device = Device()
    session = new_session(http, token, device)
    other = new_session(http, token, device)
    resp = call(http, "DELETE", "/sessions", token=token, session=session)
    assert resp.status_code == 204, resp.text
    assert resp.content == b""
    assert_problem(use_anonymous(http, token, session), 401, "invalid-session")
    assert use_anonymous(http, token, other).status_code == 201, "other sessions live on"
    resp = call(http, "DELETE", "/sessions", token=token, session=session)
    assert_problem(resp, 401, "invalid-session")


def test_delete_works_on_expired_and_superseded_sessions(http: httpx.Client, token: str) -> None:
    device = Device()
    expired = new_session(http, token, device)
    anon = new_session(http, token, device)
    account_id = create_account(http, token, anon)["account_id"]
    new_session(http, token, device, "account", current=anon, account_id=account_id)
    assert_problem(use_anonymous(http, token, anon), 401, "session-superseded")
    resp = call(http, "DELETE", "/sessions", token=token, session=anon)
    assert resp.status_code == 204, resp.text
    assert_problem(use_anonymous(http, token, anon), 401, "invalid-session")
    advance(http, 1800)
    assert_problem(use_anonymous(http, token, expired), 401, "session-expired")
    resp = call(http, "DELETE", "/sessions", token=token, session=expired)
    assert resp.status_code == 204, resp.text
    assert_problem(use_anonymous(http, token, expired), 401, "invalid-session")


def test_delete_without_a_session_is_session_required(http: httpx.Client, token: str) -> None:
    assert_problem(call(http, "DELETE", "/sessions", token=token), 401, "session-required")
    assert_problem(http.delete("/sessions"), 401, "invalid-partner-token")


def test_reset_revokes_sessions(http: httpx.Client, token: str) -> None:
    session = new_session(http, token, Device())
    http.post("/_sim/reset", json={"seed": 7})
    tok = partner_token(http)
    assert_problem(use_anonymous(http, tok, session), 401, "invalid-session")


# --- partner isolation -----


def test_another_partner_cannot_use_a_session(http: httpx.Client, token: str) -> None:
    j = journey(http, until="account")
    token_b = partner_token(http, *PARTNER_B)
    anon = new_session(http, token, Device())
    assert_problem(use_anonymous(http, token_b, anon), 401, "invalid-session")
    resp = card_request(http, token_b, j.account_id, "virtual", session=j.account_session)
    assert_problem(resp, 401, "invalid-session")
    resp = call(http, "DELETE", "/sessions", token=token_b, session=anon)
    assert_problem(resp, 401, "invalid-session")
    assert use_anonymous(http, token, anon).status_code == 201, "B's attempt must not end it"
    resp = create_session(
        http, token_b, j.device, "account", current=j.account_session, account_id=j.account_id
    )
    assert_problem(resp, 401, "invalid-session")


def test_an_anonymous_session_ignores_an_account_id_as_a05_says(http: httpx.Client, token: str) -> None:
    """A known plaintext field the session's type does not read is ignored, and registered so."""
    owner = journey(http, until="account", token=token)
    stranger = Device()
    direct = create_session(http, token, stranger, "account", account_id=owner.account_id)
    assert_problem(direct, 403, "device-not-recognized")  # read by an account session
    resp = create_session(http, token, stranger, "anonymous", account_id=owner.account_id)
    assert resp.status_code == 201, resp.text
    assert resp.json()["session_type"] == "anonymous"
    assert "A05" in resp.headers["svc-assumptions"].split(",")
    session = resp.json()["session_token"]
    card = card_request(http, token, owner.account_id, session=session)
    assert_problem(card, 403, "session-not-bound")  # it opened nothing on that account
    sentences = register.assumption("A05")["choice"].split(". ")
    assert any(
        all(word in s for word in ("anonymous", "account_id", "person_id", "ignored")) for s in sentences
    ), "A05 registers what an anonymous session does with account_id and person_id"
