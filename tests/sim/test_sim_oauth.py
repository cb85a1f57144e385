"""Partner level (A01-A03): the OAuth token endpoint, bearer tokens, the deprecated endpoints."""

from __future__ import annotations

import httpx
import pytest

from tests.sim.helpers.contract import DEPRECATION, PARTNER_A, PARTNER_B, SUCCESSOR_LINK
from tests.sim.helpers.control import advance
from tests.sim.helpers.wire import (
    assert_oauth_error,
    assert_problem,
    basic_auth,
    call,
    partner_token,
    token_response,
)

INIT = "/sessions/user_session_initialization_data"
LEGACY = "/authorization/server_api/access_tokens"


def bearer_ok(http: httpx.Client, tok: str) -> bool:
    resp = call(http, "GET", INIT, token=tok)
    if resp.status_code == 200:
        return True
    assert_problem(resp, 401, "invalid-partner-token")
    assert 'error="invalid_token"' in resp.headers.get("www-authenticate", "")
    return False


def assert_token_body(resp: httpx.Response) -> dict:
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"].split(";")[0] == "application/json"
    body = resp.json()
    assert set(body) == {"access_token", "token_type", "expires_in", "scope"}, body
    assert isinstance(body["access_token"], str) and len(body["access_token"]) >= 16
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 86400
    assert body["scope"] == "partner"
    return body


# --- POST /oauth/accesstoken -----


@pytest.mark.parametrize("partner", [PARTNER_A, PARTNER_B])
def test_client_credentials_by_basic_auth(http: httpx.Client, partner: tuple[str, str]) -> None:
    body = assert_token_body(token_response(http, *partner))
    assert bearer_ok(http, body["access_token"])


def test_client_credentials_in_the_form(http: httpx.Client) -> None:
    resp = http.post(
        "/oauth/accesstoken",
        data={"grant_type": "client_credentials", "client_id": PARTNER_A[0], "client_secret": PARTNER_A[1]},
    )
    body = assert_token_body(resp)
    assert bearer_ok(http, body["access_token"])


def test_token_answers_are_not_cacheable(http: httpx.Client) -> None:
    # RFC 6749 §5.1: Cache-Control: no-store on answers holding tokens.
    resp = token_response(http)
    assert "no-store" in resp.headers.get("cache-control", "")


def test_tokens_are_random_and_a_new_one_does_not_revoke_older_ones(http: httpx.Client) -> None:
    first, second = partner_token(http), partner_token(http)
    assert first != second
    assert bearer_ok(http, first)
    assert bearer_ok(http, second)


def test_both_basic_and_form_credentials_is_invalid_request(http: httpx.Client) -> None:
    resp = http.post(
        "/oauth/accesstoken",
        auth=PARTNER_A,
        data={"grant_type": "client_credentials", "client_id": PARTNER_A[0], "client_secret": PARTNER_A[1]},
    )
    assert_oauth_error(resp, 400, "invalid_request")


@pytest.mark.parametrize(
    ("client_id", "secret"),
    [
        (PARTNER_A[0], "wrong"),
        ("nobody", PARTNER_A[1]),
        (PARTNER_A[0], PARTNER_B[1]),
        (PARTNER_B[0], PARTNER_A[1]),
    ],
)
def test_wrong_basic_credentials_are_401_invalid_client(
    http: httpx.Client, client_id: str, secret: str
) -> None:
    resp = token_response(http, client_id, secret)
    assert_oauth_error(resp, 401, "invalid_client")
    assert resp.headers.get("www-authenticate", "").lower().startswith("basic")
    assert "no-store" in resp.headers.get("cache-control", "no-store")


def test_wrong_form_credentials_are_401_invalid_client(http: httpx.Client) -> None:
    resp = http.post(
        "/oauth/accesstoken",
        data={"grant_type": "client_credentials", "client_id": PARTNER_A[0], "client_secret": "no"},
    )
    assert_oauth_error(resp, 401, "invalid_client")


def test_no_client_authentication_is_401_invalid_client(http: httpx.Client) -> None:
    resp = http.post("/oauth/accesstoken", data={"grant_type": "client_credentials"})
    assert_oauth_error(resp, 401, "invalid_client")


@pytest.mark.parametrize("grant", ["password", "authorization_code", "refresh_token", "bogus"])
def test_unsupported_grant_type(http: httpx.Client, grant: str) -> None:
    resp = http.post("/oauth/accesstoken", auth=PARTNER_A, data={"grant_type": grant})
    assert_oauth_error(resp, 400, "unsupported_grant_type")


def test_missing_grant_type_is_invalid_request(http: httpx.Client) -> None:
    resp = http.post("/oauth/accesstoken", auth=PARTNER_A, data={})
    assert_oauth_error(resp, 400, "invalid_request")


def test_token_endpoint_ignores_idempotency_keys(http: httpx.Client) -> None:
    # A20: every partner POST may carry Idempotency-Key, "except the token endpoints".
    one = http.post(
        "/oauth/accesstoken",
        auth=PARTNER_A,
        headers={"Idempotency-Key": "k1"},
        data={"grant_type": "client_credentials"},
    )
    two = http.post(
        "/oauth/accesstoken",
        auth=PARTNER_A,
        headers={"Idempotency-Key": "k1"},
        data={"grant_type": "client_credentials"},
    )
    assert one.status_code == two.status_code == 200
    assert one.json()["access_token"] != two.json()["access_token"]
    assert "idempotent-replayed" not in two.headers


# --- clear-text personal data: refused in the token endpoints' own shape (A01, A11, A21) -----

PII_PARAMETERS = [
    ("form", "date_of_birth", "1950-03-14"),
    ("form", "national_identification_no", "123-45-6789"),
    ("form", "note", "born 1950-03-14"),
    ("query", "ssn", "123456789"),
    ("query", "dob", "1950-03-14"),
]


def stores(http: httpx.Client) -> dict:
    return dict(http.get("/_sim/health").json()["stores"])


@pytest.mark.parametrize("path", ["/oauth/accesstoken", LEGACY])
@pytest.mark.parametrize(("where", "name", "value"), PII_PARAMETERS)
def test_clear_personal_data_is_400_invalid_request_and_issues_no_token(
    http: httpx.Client, path: str, where: str, name: str, value: str
) -> None:
    before = stores(http)
    form = {"grant_type": "client_credentials", **({name: value} if where == "form" else {})}
    params = {name: value} if where == "query" else None
    resp = http.post(path, data=form, params=params, auth=PARTNER_A)
    body = assert_oauth_error(resp, 400, "invalid_request")  # RFC 6749, never a 422 problem
    assert f"The {where} parameter {name} is personal data" in body["error_description"]
    assert value not in resp.text
    assert "A11" in resp.headers["svc-assumptions"].split(",")
    assert stores(http) == before  # no token issued


# --- bearer tokens -----


def test_missing_bearer_is_401_without_error_attribute(http: httpx.Client) -> None:
    resp = http.get(INIT)
    assert_problem(resp, 401, "invalid-partner-token")
    challenge = resp.headers.get("www-authenticate", "")
    assert challenge.startswith("Bearer"), challenge
    assert "error=" not in challenge, challenge


@pytest.mark.parametrize(
    "authorization",
    ["Bearer not-a-token", "Bearer tok_0000000000000000", basic_auth()],
)
def test_unknown_bearer_is_401_invalid_token(http: httpx.Client, authorization: str) -> None:
    resp = http.get(INIT, headers={"Authorization": authorization})
    assert_problem(resp, 401, "invalid-partner-token")
    challenge = resp.headers.get("www-authenticate", "")
    if authorization.startswith("Bearer"):
        assert challenge.startswith("Bearer") and 'error="invalid_token"' in challenge, challenge
    else:
        assert challenge.startswith("Bearer"), challenge


def test_token_expires_after_86400_seconds_of_simulator_time(http: httpx.Client) -> None:
    tok = partner_token(http)
    advance(http, 86399)
    assert bearer_ok(http, tok)
    advance(http, 1)
    assert not bearer_ok(http, tok)
    assert bearer_ok(http, partner_token(http))


def test_token_of_one_partner_is_not_valid_after_reset(http: httpx.Client) -> None:
    tok = partner_token(http)
    assert http.post("/_sim/reset", json={"seed": 7}).status_code == 200
    assert not bearer_ok(http, tok)


# --- deprecated endpoints -----


def assert_deprecated_headers(resp: httpx.Response) -> None:
    """Every answer of the legacy path: Deprecation (A03); the Link only on the POST's, whose
    replacement the seed names (endpoint.2); none on the DELETE's (endpoint.3 names none)."""
    assert resp.headers.get("deprecation") == DEPRECATION, dict(resp.headers)
    assert "A03" in resp.headers["svc-assumptions"].split(","), resp.headers["svc-assumptions"]
    if resp.request.method == "POST":
        assert resp.headers.get("link") == SUCCESSOR_LINK, resp.headers.get("link")
    else:
        assert "link" not in resp.headers, resp.headers.get("link")


def test_legacy_post_answers_like_the_oauth_endpoint(http: httpx.Client) -> None:
    resp = http.post(LEGACY, auth=PARTNER_A, data={"grant_type": "client_credentials"})
    body = assert_token_body(resp)
    assert_deprecated_headers(resp)
    assert bearer_ok(http, body["access_token"])


@pytest.mark.parametrize(
    ("kwargs", "status", "error"),
    [
        (
            {"auth": (PARTNER_A[0], "wrong"), "data": {"grant_type": "client_credentials"}},
            401,
            "invalid_client",
        ),
        ({"auth": PARTNER_A, "data": {"grant_type": "password"}}, 400, "unsupported_grant_type"),
        (
            {
                "auth": PARTNER_A,
                "data": {
                    "grant_type": "client_credentials",
                    "client_id": PARTNER_A[0],
                    "client_secret": PARTNER_A[1],
                },
            },
            400,
            "invalid_request",
        ),
    ],
)
def test_legacy_post_errors_are_rfc6749_with_deprecation(
    http: httpx.Client, kwargs: dict, status: int, error: str
) -> None:
    resp = http.post(LEGACY, **kwargs)
    assert_oauth_error(resp, status, error)
    assert_deprecated_headers(resp)
    if status == 401:
        assert resp.headers.get("www-authenticate", "").lower().startswith("basic")


def test_legacy_delete_revokes_the_bearer_token(http: httpx.Client) -> None:
    keep, gone = partner_token(http), partner_token(http)
    resp = http.delete(LEGACY, headers={"Authorization": f"Bearer {gone}"})
    assert resp.status_code == 204, resp.text
    assert resp.content == b""
    assert_deprecated_headers(resp)
    assert not bearer_ok(http, gone)
    assert bearer_ok(http, keep), "revoking one token must leave the others"


def test_legacy_delete_without_a_valid_token_is_401_with_deprecation(http: httpx.Client) -> None:
    for hdrs in ({}, {"Authorization": "Bearer nope"}):
        resp = http.delete(LEGACY, headers=hdrs)
        assert resp.status_code == 401, resp.text
        assert_deprecated_headers(resp)


def test_strict_mode_answers_410_endpoint_deprecated(strict_http: httpx.Client) -> None:
    tok = partner_token(strict_http)
    for resp in (
        strict_http.post(LEGACY, auth=PARTNER_A, data={"grant_type": "client_credentials"}),
        strict_http.post(LEGACY, auth=(PARTNER_A[0], "wrong"), data={"grant_type": "client_credentials"}),
        strict_http.delete(LEGACY, headers={"Authorization": f"Bearer {tok}"}),
    ):
        assert_problem(resp, 410, "endpoint-deprecated")
        assert_deprecated_headers(resp)
    assert bearer_ok(strict_http, tok), "a refused DELETE must not revoke the token"
    other = strict_http.get(LEGACY)  # another method: 405 before strict mode, still deprecated
    assert_problem(other, 405, "method-not-allowed")
    assert_deprecated_headers(other)


def test_the_legacy_delete_carries_no_successor_link(http: httpx.Client) -> None:
    """endpoint.3: the seed names no replacement for the DELETE (a token issuer is no successor of
    a revocation), whatever it answers; the POST keeps its Link (endpoint.2)."""
    tok = partner_token(http)
    for resp in (
        http.delete(LEGACY, headers={"Authorization": f"Bearer {tok}"}),  # 204
        http.delete(LEGACY),  # 401
    ):
        assert resp.headers.get("deprecation") == DEPRECATION
        assert "link" not in resp.headers, resp.headers.get("link")
    post = http.post(LEGACY, auth=PARTNER_A, data={"grant_type": "client_credentials"})
    assert post.headers.get("link") == SUCCESSOR_LINK


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "OPTIONS", "HEAD"])
def test_another_method_on_the_legacy_path_is_405_naming_both_methods_and_deprecated(
    http: httpx.Client, method: str
) -> None:
    resp = http.request(method, LEGACY)
    assert resp.status_code == 405, resp.text
    assert resp.headers["allow"] == "DELETE, POST"
    assert resp.headers.get("deprecation") == DEPRECATION
    assert "link" not in resp.headers
    names = resp.headers["svc-assumptions"].split(",")
    assert {"A03", "A44"} <= set(names), names
    if method != "HEAD":
        assert_problem(resp, 405, "method-not-allowed")


def test_strict_mode_keeps_the_oauth_endpoint(strict_http: httpx.Client) -> None:
    assert_token_body(token_response(strict_http))
