"""Hostile inputs (issue #6, item 2), complementing ``tests/sim``.

``tests/sim`` covers the JWE allow-list on ``POST /sessions``, clear-text PII in inbound
events, the 413 / 415 / 400 body checks on ``POST /accounts`` and the invalid amounts of the
wire pattern. Here: the same attacks on the *other* encrypted fields and routes (KYC
answers, documents, money), replays of captured requests, bodies far beyond the limit sent
without being read, PII at any depth on every POST route, and ids that are not ids. Every
case asserts the status, the problem ``code`` and that observable state did not change.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.hardening import rawhttp
from tests.sim.helpers.contract import ECHO, PARTNER_A, PARTNER_B
from tests.sim.helpers.control import fund, kyc_answers, open_document_request, snapshot
from tests.sim.helpers.encryption import Device, encrypt_for_server, load_key, raw_jwe, server_key, tamper
from tests.sim.helpers.journeys import create_session, journey, p2p_transfer
from tests.sim.helpers.resources import create_card, list_documents, send_answers
from tests.sim.helpers.wire import (
    assert_problem,
    b64u,
    b64u_decode,
    call,
    init_data,
    money,
    partner_token,
    post_raw,
)

# --- shared set-up ---------------------------------------------------------------------------


def _rsa(init: dict[str, Any]) -> dict[str, Any]:
    return server_key(init, "RSA-OAEP-256")


def _hdr(init: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"alg": "RSA-OAEP-256", "enc": "A256GCM", "kid": _rsa(init)["kid"], **extra}


def _retag(token: str) -> str:
    parts = token.split(".")
    header = json.loads(b64u_decode(parts[0]))
    parts[0] = b64u(json.dumps(header, indent=2).encode())  # the same header, other bytes
    return ".".join(parts)


BAD_JWES = {
    "alg-RSA1_5": lambda i, p: raw_jwe({**_hdr(i), "alg": "RSA1_5"}, p, _rsa(i), wrap="RSA1_5"),
    "alg-RSA-OAEP": lambda i, p: raw_jwe({**_hdr(i), "alg": "RSA-OAEP"}, p, _rsa(i), wrap="RSA-OAEP"),
    "alg-dir": lambda i, p: raw_jwe({**_hdr(i), "alg": "dir"}, p, None, wrap="none"),
    "alg-none": lambda i, p: raw_jwe({**_hdr(i), "alg": "none"}, p, None, wrap="none"),
    "unknown-kid": lambda i, p: raw_jwe(_hdr(i, kid="enc-rsa-0000000000000000"), p, _rsa(i)),
    "wrong-kid": lambda i, p: raw_jwe(_hdr(i, kid=server_key(i, "ECDH-ES+A256KW")["kid"]), p, _rsa(i)),
    "never-issued-key": lambda i, p: raw_jwe(_hdr(i), p, load_key("foreign_rsa_2048").as_dict(private=False)),
    "tampered-header": lambda i, p: _retag(encrypt_for_server(i, p)),
    "tampered-ciphertext": lambda i, p: tamper(encrypt_for_server(i, p), 3),
    "tampered-tag": lambda i, p: tamper(encrypt_for_server(i, p), 4),
    "tampered-ec-tag": lambda i, p: tamper(encrypt_for_server(i, p, "ECDH-ES+A256KW"), 4),
}


@pytest.fixture
def pending(http: httpx.Client, token: str) -> Any:
    """A customer with an account session and a person whose KYC is pending."""
    return journey(http, token=token, until="pending")


def _state(http: httpx.Client, token: str, *paths: str) -> dict[str, Any]:
    return snapshot(http, token, paths)


# --- bad JWEs in KYC answers and documents -----------------------------------------------------


@pytest.mark.parametrize("case", sorted(BAD_JWES))
def test_bad_jwe_in_kyc_answers_uses_no_attempt(
    http: httpx.Client, token: str, pending: Any, case: str
) -> None:
    init = init_data(http, token)
    right = {"answers": kyc_answers(http, pending.person_id)}
    before = _state(http, token)
    path = f"/persons/{pending.person_id}/kyc/answers"
    body = {"encrypted_answers": BAD_JWES[case](init, right)}
    resp = call(http, "POST", path, token=token, session=pending.account_session, json_body=body)
    body = assert_problem(resp, 400, "invalid-encrypted-data")
    assert body["detail"] == _reference_detail(http, token)
    assert _state(http, token) == before
    # no attempt was counted: the right answers still establish the person, 3 attempts left
    ok = send_answers(http, token, pending.account_session, pending.person_id, right["answers"])
    assert ok.status_code == 200, ok.text
    assert ok.json() == {"person_id": pending.person_id, "status": "established", "attempts_left": 3}


@pytest.mark.parametrize("case", ["alg-RSA1_5", "alg-dir", "never-issued-key", "tampered-tag", "wrong-kid"])
def test_bad_jwe_in_a_document_leaves_the_request_open(http: httpx.Client, token: str, case: str) -> None:
    j = journey(http, token=token)
    doc = open_document_request(http, j.person_id)
    init = init_data(http, token)
    before = _state(http, token)
    path = f"/document_requests/{doc}/submit"
    body = {"encrypted_document": BAD_JWES[case](init, {"kind": "utility_bill"})}
    resp = call(http, "POST", path, token=token, session=j.person_session, json_body=body)
    assert_problem(resp, 400, "invalid-encrypted-data")
    assert _state(http, token) == before  # no document_request.completed either
    listed = list_documents(http, token, j.person_id, j.person_session)
    assert [d["status"] for d in listed.json()["document_requests"]] == ["open"]


def _reference_detail(http: httpx.Client, token: str) -> str:
    resp = create_session(http, token, None, encrypted_data="a.b.c.d.e")
    return assert_problem(resp, 400, "invalid-encrypted-data")["detail"]


# --- replays of captured requests ---------------------------------------------------------------


def test_a_captured_session_request_replayed_verbatim_is_nonce_invalid(
    http: httpx.Client, token: str
) -> None:
    device = Device()
    init = init_data(http, token)
    encrypted = encrypt_for_server(init, device.plaintext(init["nonce"]))
    first = create_session(http, token, device, encrypted_data=encrypted)
    assert first.status_code == 201, first.text
    for replay_token in (token, _other_partner_token(http)):
        again = create_session(http, replay_token, device, encrypted_data=encrypted)
        body = assert_problem(again, 400, "nonce-invalid")
        assert "session_token" not in body


def test_a_replayed_promotion_cannot_promote_twice(http: httpx.Client, token: str) -> None:
    j = journey(http, token=token, until="account")
    before_person = j.account_session
    init = init_data(http, token)
    # promote anonymous → account again from the (now superseded) anonymous session
    encrypted = encrypt_for_server(init, j.device.plaintext(init["nonce"], account_id=j.account_id))
    again = create_session(http, token, j.device, "account", current=j.anonymous, encrypted_data=encrypted)
    assert_problem(again, 401, "session-superseded")
    # the nonce was not used up (refused before decryption): the account session still works
    card = create_card(http, token, j.account_id)["card_id"]
    resp = call(http, "GET", f"/cards/{card}", token=token, session=before_person)
    assert resp.status_code == 200, resp.text


def _other_partner_token(http: httpx.Client) -> str:
    return partner_token(http, *PARTNER_B)


# --- bodies far beyond the limit are refused without being read ----------------------------------


def _p2p_headers(j: Any, **extra: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {j.token}",
        "svc-session-id": j.person_session,
        "Idempotency-Key": "big-body",
        "Content-Type": "application/json",
        **extra,
    }


def test_a_10_mb_content_length_is_refused_before_the_body_is_sent(
    http: httpx.Client, sim_server: Any
) -> None:
    j = journey(http)
    before = _state(http, j.token)
    # announce 10 MB, send only 1 KiB: a server that waited for the body would time out
    resp = rawhttp.request(
        sim_server.base_url,
        "POST",
        "/p2p/transfers",
        _p2p_headers(j, **{"Content-Length": str(10 * 1024 * 1024)}),
        b" " * 1024,
        timeout=5.0,
    )
    assert resp.status == 413, resp
    assert resp.headers["content-type"].startswith("application/problem+json")
    assert resp.json()["code"] == "payload-too-large"
    assert resp.seconds < 2.0, resp.seconds
    assert _state(http, j.token) == before


def test_a_10_mb_chunked_body_is_cut_off_near_the_limit(http: httpx.Client, sim_server: Any) -> None:
    j = journey(http)
    before = _state(http, j.token)
    resp = rawhttp.stream_until_answered(
        sim_server.base_url, "/p2p/transfers", _p2p_headers(j), total=10 * 1024 * 1024, timeout=8.0
    )
    assert resp.status == 413, resp
    assert resp.json()["code"] == "payload-too-large"
    assert resp.sent < 2 * 1024 * 1024, f"the server read {resp.sent} bytes before answering"
    assert _state(http, j.token) == before


def test_an_oversized_token_request_is_an_oauth_error(http: httpx.Client) -> None:
    resp = http.post(
        "/oauth/accesstoken",
        content=b"grant_type=client_credentials&pad=" + b"x" * 70_000,
        headers={"content-type": "application/x-www-form-urlencoded"},
        auth=PARTNER_A,
    )
    assert resp.status_code == 400 and resp.json()["error"] == "invalid_request", resp.text


# --- clear-text PII at any depth, on every POST route --------------------------------------------


def _deep(name: str, value: str, depth: int) -> Any:
    inner: Any = {name: value}
    for level in range(depth):
        inner = [inner] if level % 2 else {"n": inner}
    return inner


PII_ROUTES = ["sessions", "accounts", "persons", "kyc", "cards", "close", "p2p", "subscriptions", "submit"]


@pytest.mark.parametrize("name", ["SSN", "Date_Of_Birth", "passport_number", "dob"])
@pytest.mark.parametrize("route", PII_ROUTES)
def test_clear_text_pii_at_depth_is_refused_everywhere(
    http: httpx.Client, token: str, route: str, name: str
) -> None:
    j = journey(http, token=token)
    other = journey(http, token=token, persona_index=1)
    card = create_card(http, token, j.account_id)["card_id"]
    doc = open_document_request(http, j.person_id)
    anon = create_session(http, token, Device())
    value = ECHO + "-1990-01-01"
    smuggled = _deep(name, value, 40)
    path, session, body = {
        "sessions": (
            "/sessions",
            None,
            {"session_type": "anonymous", "expiration_strategy": "fixed", "encrypted_data": "x"},
        ),
        "accounts": ("/accounts", anon.json()["session_token"], {"product": "spending"}),
        "persons": (f"/accounts/{j.account_id}/persons", j.person_session, {"encrypted_pii": "x"}),
        "kyc": (f"/persons/{j.person_id}/kyc/answers", j.person_session, {"encrypted_answers": "x"}),
        "cards": (f"/accounts/{j.account_id}/cards", None, {"type": "virtual"}),
        "close": (f"/cards/{card}/close", None, {"reason": "lost"}),
        "p2p": (
            "/p2p/transfers",
            j.person_session,
            {"from_account_id": j.account_id, "to_person_id": other.person_id, "amount": money("1.00")},
        ),
        "subscriptions": (
            "/webhooks/subscriptions",
            None,
            {"url": "http://127.0.0.1:9/h", "events": ["card.closed"]},
        ),
        "submit": (f"/document_requests/{doc}/submit", j.person_session, {"encrypted_document": "x"}),
    }[route]
    body = {**body, "metadata": smuggled}
    before = _state(http, token, f"/cards/{card}")
    resp = call(http, "POST", path, token=token, session=session, idem=f"pii-{route}", json_body=body)
    problem = assert_problem(resp, 422, "pii-must-be-encrypted", not_echo=(value, ECHO))
    field = problem["errors"][0]["field"]
    assert field.startswith("/metadata/") and field.endswith("/" + name), field
    assert _state(http, token, f"/cards/{card}") == before


# --- non-JSON and wrong content types on the money route ----------------------------------------


@pytest.mark.parametrize(
    ("ctype", "raw", "status", "code"),
    [
        (None, b'{"a": 1}', 415, "unsupported-media-type"),
        ("text/plain", b'{"a": 1}', 415, "unsupported-media-type"),
        ("multipart/form-data; boundary=x", b"--x\r\n\r\n--x--", 415, "unsupported-media-type"),
        ("application/x-www-form-urlencoded", b"amount=12.50", 415, "unsupported-media-type"),
        ("application/json", b"\xef\xbb\xbf{}", 400, "malformed-json"),  # a byte order mark
        ("application/json", b'{"memo": "\xc3\x28"}', 400, "malformed-json"),  # invalid UTF-8
        ("application/json", b'{"amount": {"value": NaN}}', 400, "malformed-json"),
        ("application/json", b'{"amount": {"value": -Infinity}}', 400, "malformed-json"),
        ("application/json", b"[" * 5000 + b"]" * 5000, 400, "malformed-json"),
        ("application/json", b'"just a string"', 422, "validation-error"),
        ("application/json", b"[]", 422, "validation-error"),
    ],
)
def test_bodies_that_are_not_a_transfer_move_no_money_and_burn_no_key(
    http: httpx.Client, ctype: str | None, raw: bytes, status: int, code: str
) -> None:
    a = journey(http)
    b = journey(http, token=a.token, persona_index=1)
    before = _state(http, a.token)
    extra = {"content-type": ctype} if ctype else {}
    request = http.build_request(
        "POST",
        "/p2p/transfers",
        content=raw,
        headers={
            "Authorization": f"Bearer {a.token}",
            "svc-session-id": a.person_session,
            "Idempotency-Key": "k1",
            **extra,
        },
    )
    if ctype is None:
        request.headers.pop("content-type", None)
    assert_problem(http.send(request), status, code)
    assert _state(http, a.token) == before
    # the refusal stored nothing under the key: the real transfer goes through with it
    ok = p2p_transfer(http, a, b.person_id, "2.00", idem="k1")
    assert ok.status_code == 201 and "idempotent-replayed" not in ok.headers, ok.text


# --- unicode and huge numbers in money ----------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("١٢", "invalid-amount"),
        ("١٢.٥٠", "invalid-amount"),
        ("１２", "invalid-amount"),
        ("1²", "invalid-amount"),
        ("1e400", "invalid-amount"),
        ("12.345", "invalid-amount"),
        (" 12.50", "invalid-amount"),
        ("12.50\n", "invalid-amount"),
        ("-0.01", "invalid-amount"),
        ("0." + "0" * 5000 + "1", "invalid-amount"),
        ("1" + "0" * 5000, "insufficient-funds"),
        ("9" * 29 + ".99", "insufficient-funds"),
    ],
)
def test_hostile_amount_strings(http: httpx.Client, value: str, code: str) -> None:
    a = journey(http)
    b = journey(http, token=a.token, persona_index=1)
    before = _state(http, a.token)
    assert_problem(p2p_transfer(http, a, b.person_id, value, idem="amt"), 422, code, not_echo=())
    assert _state(http, a.token) == before


@pytest.mark.parametrize(
    ("number", "status", "code"),
    [
        ("1e400", 422, "validation-error"),  # a JSON number, not a decimal string
        ("12.5", 422, "validation-error"),
        ("-0", 422, "validation-error"),
        ("1" + "0" * 5000, 400, "malformed-json"),  # beyond Python's 4,300-digit int limit
    ],
)
def test_money_as_json_numbers(http: httpx.Client, number: str, status: int, code: str) -> None:
    a = journey(http)
    b = journey(http, token=a.token, persona_index=1)
    before = _state(http, a.token)
    raw = (
        f'{{"from_account_id": "{a.account_id}", "to_person_id": "{b.person_id}", '
        f'"amount": {{"value": {number}, "currency": "USD"}}}}'
    ).encode()
    resp = post_raw(http, "/p2p/transfers", raw, token=a.token, session=a.person_session, idem="num")
    assert_problem(resp, status, code)
    assert _state(http, a.token) == before


@pytest.mark.parametrize("value", ["1" + "0" * 40, "1" + "0" * 5000, "999999999999999999.99"])
def test_funding_beyond_any_balance_is_refused_not_a_5xx(http: httpx.Client, value: str) -> None:
    j = journey(http, until="account")
    before = _state(http, j.token)
    resp = fund(http, j.account_id, value)
    assert resp.status_code == 422 and resp.json()["code"] == "invalid-amount", resp.text
    assert _state(http, j.token) == before  # the ledger still answers, unchanged


# --- ids that are not ids -----------------------------------------------------------------------

ID_ROUTES = [
    ("GET", "/cards/{}", "card"),
    ("POST", "/cards/{}/close", "card"),
    ("POST", "/accounts/{}/cards", "account"),
    ("POST", "/accounts/{}/events", "account"),
    ("GET", "/persons/{}/kyc/questions", "person"),
    ("GET", "/persons/{}/document_requests", "person"),
    ("GET", "/p2p/transfers/{}", "transfer"),
    ("POST", "/document_requests/{}/submit", "document-request"),
]
NOT_IDS = {
    "unicode": "card_é✓ﬁ",
    "rtl": "acc_\u202eoof",
    "very-long": "card_" + "A" * 20000,
    "nul": "%00",
    "dotdot-encoded": "%2e%2e",
    "sql": "1'%20OR%20'1'='1",
    "prefix-only": "card_",
}
BODIES = {
    "/cards/{}/close": {"reason": "lost"},
    "/accounts/{}/cards": {"type": "virtual"},
    "/accounts/{}/events": {"event_type": "password.changed"},
    "/document_requests/{}/submit": {"encrypted_document": "x"},
}


@pytest.mark.parametrize("kind", sorted(NOT_IDS))
@pytest.mark.parametrize(("method", "template", "resource"), ID_ROUTES)
def test_ids_that_are_not_ids_are_resource_not_found(
    http: httpx.Client, method: str, template: str, resource: str, kind: str
) -> None:
    j = journey(http)
    before = _state(http, j.token)
    resp = call(
        http,
        method,
        template.format(NOT_IDS[kind]),
        token=j.token,
        session=j.person_session,
        idem="ids" if method == "POST" else None,
        json_body=BODIES.get(template),
    )
    assert_problem(resp, 404, f"{resource}-not-found", not_echo=())
    assert _state(http, j.token) == before


@pytest.mark.parametrize(
    "target",
    [
        "/cards/%2F",
        "/cards/..%2F..%2Fwebhooks%2Fjwks",
        "/cards/../webhooks/jwks",
        "/cards/./x/..",
        "/p2p/transfers/",
        "/p2p/transfers/%2F",
        "/webhooks/jwks/",
        "/persons/%2F/kyc/questions",
    ],
)
def test_paths_that_change_shape_are_404_not_found(http: httpx.Client, sim_server: Any, target: str) -> None:
    j = journey(http)
    before = _state(http, j.token)
    headers = {"Authorization": f"Bearer {j.token}", "svc-session-id": j.person_session}
    resp = rawhttp.request(sim_server.base_url, "GET", target, headers)  # sent as written
    assert resp.status == 404, resp
    assert resp.headers["content-type"].startswith("application/problem+json"), resp
    assert resp.json()["code"] == "not-found"
    assert "location" not in resp.headers  # never a redirect
    assert _state(http, j.token) == before
