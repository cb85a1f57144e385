"""Conventions (docs/contract.md, "Every answer"): headers, problem bodies, request-body rules and
the order of checks."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from tests.sim.helpers.contract import API_VERSION, ECHO, PARTNER_A, PROBLEM_CT
from tests.sim.helpers.control import ledger
from tests.sim.helpers.encryption import Device
from tests.sim.helpers.journeys import create_session, journey, new_session, p2p_transfer
from tests.sim.helpers.resources import card_request, close_card, create_account_request, send_event
from tests.sim.helpers.webhooks import subscription_request
from tests.sim.helpers.wire import (
    assert_common_headers,
    assert_error_fields,
    assert_problem,
    call,
    partner_token,
    post_raw,
    token_response,
)


@pytest.fixture
def anon(http: httpx.Client, token: str) -> tuple[str, str]:
    """(partner token, anonymous session)."""
    return token, new_session(http, token, Device())


def account_count(http: httpx.Client) -> int:
    return len(ledger(http)["accounts"])


# --- headers on every answer -----


def test_every_kind_of_answer_carries_request_id_and_api_version(http: httpx.Client) -> None:
    tok = partner_token(http)
    answers = [
        http.get("/no/such/route"),  # 404
        http.put("/oauth/accesstoken"),  # 405
        http.get("/sessions/user_session_initialization_data"),  # 401 problem
        token_response(http, PARTNER_A[0], "wrong"),  # OAuth error
        token_response(http),  # OAuth success
        http.post("/accounts/acc_x/savings/close"),  # removed
        call(http, "GET", "/sessions/user_session_initialization_data", token=tok),  # 200
        call(http, "POST", "/accounts", token=tok, json_body={"product": "spending"}),  # 401
        call(http, "GET", "/cards/card_nope", token=tok),  # 404 problem
    ]
    ids = []
    for resp in answers:
        assert_common_headers(resp)
        ids.append(resp.headers["svc-request-id"])
    assert len(set(ids)) == len(ids), "request ids must differ between requests"


def test_request_ids_carry_the_req_prefix(http: httpx.Client) -> None:
    # A41: resource ids are opaque strings with a type prefix, `req_` among them.
    resp = http.get("/no/such/route")
    assert resp.headers["svc-request-id"].startswith("req_"), resp.headers["svc-request-id"]


def test_unknown_route_is_404_not_found_without_token(http: httpx.Client) -> None:
    assert_problem(http.get("/no/such/route"), 404, "not-found")
    assert_problem(http.post("/accounts/acc_1/nothing-here", json={}), 404, "not-found")


def test_unknown_route_is_404_not_found_with_token(http: httpx.Client, token: str) -> None:
    assert_problem(call(http, "GET", "/nowhere", token=token), 404, "not-found")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/oauth/accesstoken"),
        ("PUT", "/accounts"),
        ("DELETE", "/cards/card_1"),
        ("GET", "/cards/card_1/close"),
        ("PATCH", "/sessions"),
    ],
)
def test_wrong_method_is_405_before_the_token(http: httpx.Client, method: str, path: str) -> None:
    assert_problem(http.request(method, path), 405, "method-not-allowed")


@pytest.mark.parametrize(
    "path", ["/refer_a_friend", "/referrals", "/refer-a-friend/invitations", "/raf/invites"]
)
def test_refer_a_friend_paths_do_not_exist(http: httpx.Client, token: str, path: str) -> None:
    assert_problem(call(http, "POST", path, token=token, json_body={}), 404, "not-found")


# --- problem bodies -----


def test_problem_shape_is_rfc9457_with_code_and_urn_type(http: httpx.Client) -> None:
    resp = http.get("/sessions/user_session_initialization_data")
    body = assert_problem(resp, 401, "invalid-partner-token")
    assert body["type"] == "urn:partner-api-kit:problem:invalid-partner-token"
    assert resp.headers["content-type"].startswith(PROBLEM_CT)


@pytest.mark.parametrize(
    "make",
    [
        lambda h, t, s: call(h, "POST", "/accounts", token=t, session=s, json_body={"product": 5}),
        lambda h, t, s: call(h, "POST", "/accounts", token=t, session=s, json_body=[1, 2]),
        lambda h, t, s: call(h, "POST", "/accounts", token=t, session=s, json_body="text"),
        lambda h, t, s: subscription_request(h, t, 5, "card.closed"),
    ],
)
def test_schema_errors_are_validation_error_not_framework_shapes(
    http: httpx.Client, anon: tuple[str, str], make: object
) -> None:
    tok, ses = anon
    before = account_count(http)
    resp = make(http, tok, ses)  # type: ignore[operator]
    body = assert_problem(resp, 422, "validation-error")
    assert not isinstance(body["detail"], list), "FastAPI's default 422 shape leaked"
    assert_error_fields(body)
    assert account_count(http) == before


def test_validation_errors_name_fields_by_json_pointer(http: httpx.Client, anon: tuple[str, str]) -> None:
    tok, ses = anon
    body = assert_problem(
        call(http, "POST", "/accounts", token=tok, session=ses, json_body={"product": 5}),
        422,
        "validation-error",
    )
    assert_error_fields(body, "/product")
    resp = subscription_request(http, tok, "http://127.0.0.1:9/x", [5])
    body = assert_problem(resp, 422, "validation-error")
    assert_error_fields(body, "/events/0")


def test_missing_required_field_is_validation_error(http: httpx.Client, anon: tuple[str, str]) -> None:
    tok, ses = anon
    before = account_count(http)
    body = assert_problem(
        call(http, "POST", "/accounts", token=tok, session=ses, json_body={}),
        422,
        "validation-error",
    )
    assert_error_fields(body, "/product")
    assert account_count(http) == before


# --- request bodies: 415, 400, 413, 422 -----


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", "application/xml"])
def test_non_json_content_type_is_415(http: httpx.Client, anon: tuple[str, str], ctype: str) -> None:
    tok, ses = anon
    before = account_count(http)
    resp = post_raw(http, "/accounts", json.dumps({"product": "spending"}), ctype, token=tok, session=ses)
    assert_problem(resp, 415, "unsupported-media-type")
    assert account_count(http) == before


def test_json_with_charset_is_accepted(http: httpx.Client, anon: tuple[str, str]) -> None:
    tok, ses = anon
    ctype = "application/json; charset=utf-8"
    resp = post_raw(http, "/accounts", json.dumps({"product": "spending"}), ctype, token=tok, session=ses)
    assert resp.status_code == 201, resp.text


@pytest.mark.parametrize(
    "raw",
    [
        b'{"product": ',
        b"{product: spending}",
        b'{"product": "' + ECHO.encode() + b'"',
        b"\xff\xfe\x00garbage",
        b"{}{}",
        b"nul",
    ],
)
def test_unparseable_json_is_400_malformed_json(
    http: httpx.Client, anon: tuple[str, str], raw: bytes
) -> None:
    tok, ses = anon
    before = account_count(http)
    resp = post_raw(http, "/accounts", raw, token=tok, session=ses)
    assert_problem(resp, 400, "malformed-json")
    assert account_count(http) == before


def _padded_account_body(size: int) -> bytes:
    body = json.dumps({"product": "spending"}).encode()
    return body + b" " * (size - len(body))


def test_body_of_exactly_64_kib_is_accepted(http: httpx.Client, anon: tuple[str, str]) -> None:
    tok, ses = anon
    raw = _padded_account_body(65536)
    assert len(raw) == 65536
    resp = post_raw(http, "/accounts", raw, token=tok, session=ses)
    assert resp.status_code == 201, resp.text[:300]


def test_body_over_64_kib_is_413(http: httpx.Client, anon: tuple[str, str]) -> None:
    tok, ses = anon
    before = account_count(http)
    resp = post_raw(http, "/accounts", _padded_account_body(65537), token=tok, session=ses)
    assert_problem(resp, 413, "payload-too-large")
    assert account_count(http) == before


def test_chunked_body_over_64_kib_is_413(http: httpx.Client, anon: tuple[str, str]) -> None:
    tok, ses = anon
    before = account_count(http)
    raw = _padded_account_body(200_000)

    def chunks():  # no Content-Length: the server must count
        for i in range(0, len(raw), 8192):
            yield raw[i : i + 8192]

    resp = http.post(
        "/accounts",
        content=chunks(),
        headers={"Authorization": f"Bearer {tok}", "svc-session-id": ses, "content-type": "application/json"},
    )
    assert_problem(resp, 413, "payload-too-large")
    assert account_count(http) == before


def test_unknown_top_level_field_is_422_unknown_field(http: httpx.Client, anon: tuple[str, str]) -> None:
    tok, ses = anon
    before = account_count(http)
    resp = call(
        http, "POST", "/accounts", token=tok, session=ses, json_body={"product": "spending", "colour": ECHO}
    )
    body = assert_problem(resp, 422, "unknown-field")
    assert_error_fields(body, "/colour")
    assert account_count(http) == before


def test_empty_body_counts_as_absent_whatever_the_content_type(http: httpx.Client, token: str) -> None:
    j = journey(http, until="account")
    for ctype in (None, "text/plain", "application/json"):
        card = card_request(http, token, j.account_id, "virtual").json()
        extra = {"content-type": ctype} if ctype else None
        resp = call(http, "POST", f"/cards/{card['card_id']}/close", token=token, content=b"", extra=extra)
        assert resp.status_code == 200, (ctype, resp.text)
        assert resp.json()["status"] == "closed"
        assert resp.json()["close_reason"] is None


# --- values are never echoed -----


def test_error_messages_never_echo_submitted_values(http: httpx.Client, token: str) -> None:
    j = journey(http, until="account")
    card = card_request(http, token, j.account_id, "physical").json()
    anon = new_session(http, token, Device())
    hook = "http://127.0.0.1:9/h"
    cases = [
        (create_account_request(http, token, anon, ECHO), 422, "unknown-product"),
        (close_card(http, token, card["card_id"], {"reason": ECHO}), 422, "unknown-close-reason"),
        (card_request(http, token, j.account_id, ECHO), 422, "unknown-card-type"),
        (send_event(http, token, j.account_id, {"event_type": ECHO}), 422, "unknown-event-type"),
        (
            send_event(
                http, token, j.account_id, {"event_type": "password.changed", "details": {"ssn": ECHO}}
            ),
            422,
            "pii-must-be-encrypted",
        ),
        (
            send_event(http, token, j.account_id, {"event_type": "password.changed", "occurred_at": ECHO}),
            422,
            "validation-error",
        ),
        (subscription_request(http, token, hook, [ECHO]), 422, "unknown-event-type"),
        (create_session(http, token, None, ECHO, encrypted_data="x.y.z.w.v"), 422, "unknown-session-type"),
        (call(http, "GET", f"/cards/{ECHO}", token=token), 404, "card-not-found"),
        (create_session(http, token, None, encrypted_data=ECHO), 400, "invalid-encrypted-data"),
    ]
    for resp, status, code in cases:
        assert_problem(resp, status, code)
        assert ECHO.lower() not in resp.text.lower()


def test_oauth_errors_never_echo_the_client_id(http: httpx.Client) -> None:
    resp = token_response(http, ECHO, "whatever")
    assert resp.status_code == 401
    assert ECHO not in resp.text


# --- order of checks -----


def test_bad_body_without_token_is_401_first(http: httpx.Client) -> None:
    resp = http.post("/accounts", content=b"{not json", headers={"content-type": "text/plain"})
    assert_problem(resp, 401, "invalid-partner-token")
    big = b"{" + b" " * 70000 + b"}"
    resp = http.post("/accounts", content=big, headers={"content-type": "application/json"})
    assert_problem(resp, 401, "invalid-partner-token")


def test_removed_endpoint_needs_no_token_and_wins_over_everything(http: httpx.Client) -> None:
    for resp in (
        http.post("/accounts/acc_1/savings/close"),
        http.post(
            "/accounts/acc_1/savings/close",
            content=b"{bad",
            headers={"content-type": "text/plain", "Authorization": "Bearer nonsense"},
        ),
    ):
        body = assert_problem(resp, 404, "endpoint-removed")
        assert "1.2.0" in body["detail"]


def test_wrong_method_wins_over_token(http: httpx.Client) -> None:
    assert_problem(http.delete("/accounts", headers={"Authorization": "Bearer x"}), 405, "method-not-allowed")


def test_token_before_resource(http: httpx.Client) -> None:
    assert_problem(http.get("/cards/card_nope"), 401, "invalid-partner-token")


def test_body_parsing_before_session(http: httpx.Client, token: str) -> None:
    assert_problem(post_raw(http, "/accounts", b"{oops", token=token), 400, "malformed-json")
    resp = post_raw(http, "/accounts", _padded_account_body(65537), token=token)
    assert_problem(resp, 413, "payload-too-large")
    resp = post_raw(http, "/accounts", b"product=spending", "text/plain", token=token)
    assert_problem(resp, 415, "unsupported-media-type")


def test_idempotency_key_before_session(http: httpx.Client, token: str) -> None:
    resp = p2p_transfer(http, None, "per_x", "1.00", token=token, from_account_id="acc_x")
    assert_problem(resp, 400, "idempotency-key-required")


@pytest.mark.parametrize(
    ("session", "code"),
    [(None, "session-required"), ("ses_does_not_exist", "invalid-session")],
)
def test_session_before_schema(http: httpx.Client, token: str, session: str | None, code: str) -> None:
    before = account_count(http)
    for body in ({"product": "spending", "colour": "red"}, {"product": "bogus"}, {}):
        resp = call(http, "POST", "/accounts", token=token, session=session, json_body=body)
        assert_problem(resp, 401, code)
    assert account_count(http) == before


def test_session_type_before_resource(http: httpx.Client, anon: tuple[str, str]) -> None:
    tok, ses = anon
    resp = call(http, "GET", "/persons/per_nope/kyc/questions", token=tok, session=ses)
    assert_problem(resp, 403, "session-type-not-allowed")


def test_resource_before_binding(http: httpx.Client, anon: tuple[str, str]) -> None:
    tok, ses = anon
    assert_problem(call(http, "GET", "/cards/card_nope", token=tok, session=ses), 404, "card-not-found")
    resp = send_event(http, tok, "acc_nope", {"event_type": "password.changed"}, session=ses)
    assert_problem(resp, 404, "account-not-found")


def test_binding_before_pii_and_pii_before_schema(http: httpx.Client, token: str) -> None:
    a = journey(http, until="account")
    b = journey(http, persona_index=1, token=token, until="account")
    # a's account session on b's account: not bound, whatever the body holds
    body = {"event_type": "bogus", "details": {"ssn": "000-00-0000"}}
    resp = send_event(http, token, b.account_id, body, session=a.account_session)
    assert_problem(resp, 403, "session-not-bound")
    # bound: clear-text PII answers before the unknown event type and the unknown field
    body = {"event_type": "bogus", "extra": 1, "details": {"ssn": ECHO}}
    resp = send_event(http, token, a.account_id, body, session=a.account_session)
    assert_problem(resp, 422, "pii-must-be-encrypted")


def test_resource_before_schema(http: httpx.Client, token: str) -> None:
    resp = send_event(http, token, "acc_nope", {"event_type": "bogus", "colour": 1})
    assert_problem(resp, 404, "account-not-found")


def test_unknown_field_is_the_first_schema_error(http: httpx.Client, anon: tuple[str, str]) -> None:
    tok, ses = anon
    resp = call(http, "POST", "/accounts", token=tok, session=ses, json_body={"product": 5, "colour": "red"})
    assert_problem(resp, 422, "unknown-field")


def test_schema_before_decryption(http: httpx.Client, token: str) -> None:
    resp = create_session(http, token, None, "bogus", encrypted_data="garbage")
    body = assert_problem(resp, 422, "unknown-session-type")
    assert body["allowed"] == ["anonymous", "account", "person"]


# --- svc-assumptions ---------------------------------------------------------------------------


def test_svc_assumptions_names_register_entries(http: httpx.Client, token: str) -> None:
    from kit import register

    ids = {entry["id"] for entry in register.assumptions()}
    answers = [
        token_response(http),
        http.post("/accounts/acc_1/savings/close"),
        call(http, "GET", "/sessions/user_session_initialization_data", token=token),
    ]
    seen = 0
    for resp in answers:
        value = resp.headers.get("svc-assumptions")
        if value is None:
            continue
        seen += 1
        named = [part.strip() for part in value.split(",")]
        for item in named:
            assert re.fullmatch(r"A\d\d", item), value
            assert item in ids, f"{item} is not in the register"
    assert seen, "no answer carried svc-assumptions (A28: responses carry it)"


def test_api_version_value(http: httpx.Client) -> None:
    assert http.get("/nowhere").headers["svc-api-version"] == API_VERSION
