"""The simulator speaking the second dialect (data/choices/camel.toml), over HTTP: other paths
(A67), camelCase names (A68), other header names, the form-post client authentication (A01),
session values (A05, A06), EdDSA signing keys (A24), generic codes (A64)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kit import _choices
from kit._dialect import Dialect
from kit.sim.dialect import Spoken, speaking
from tests.sim.helpers.clients import embedded, plain_client
from tests.sim.helpers.contract import PARTNER_A
from tests.sim.helpers.encryption import Device, decrypt_from_server, encrypt_for_server

CAMEL_FILE = Path(__file__).resolve().parents[2] / "data" / "choices" / "camel.toml"
OVERLAY = _choices.load(CAMEL_FILE)
CAMEL = Dialect.of(OVERLAY)
CLIENT = PARTNER_A


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    yield from embedded(seed=7, choices=OVERLAY)


@pytest.fixture
def http(server: Any) -> Iterator[httpx.Client]:
    yield from plain_client(server)


def token_of(http: httpx.Client) -> str:
    resp = http.post(
        "/oauth/accesstoken",
        data={"grant_type": "client_credentials", "client_id": CLIENT[0], "client_secret": CLIENT[1]},
    )
    assert resp.status_code == 200, resp.text
    return str(resp.json()["access_token"])


def partner(token: str, **more: str) -> dict[str, str]:
    return {"X-Partner-Authorization": f"Token {token}", **more}


def anonymous_session(http: httpx.Client, token: str, device: Device) -> httpx.Response:
    init = http.get("/sessions/user_session_initialization_data", headers=partner(token)).json()
    plaintext = CAMEL.to_wire(device.plaintext(init["nonce"]))
    body = {
        "sessionType": "ANONYMOUS",
        "expirationStrategy": "ROLLING",
        "encryptedData": encrypt_for_server(init, plaintext),
    }
    return http.post("/sessions", json=body, headers=partner(token))


def test_the_register_spelling_wraps_nothing() -> None:
    app = object()
    assert speaking(app, Dialect.of(None)) is app
    assert isinstance(speaking(app, CAMEL), Spoken)


def test_the_token_endpoint_takes_the_form_and_refuses_basic(http: httpx.Client) -> None:
    basic = http.post("/oauth/accesstoken", data={"grant_type": "client_credentials"}, auth=CLIENT)
    assert basic.status_code == 401 and basic.json()["error"] == "invalid_client"
    form = http.post(
        "/oauth/accesstoken",
        data={"grant_type": "client_credentials", "client_id": CLIENT[0], "client_secret": CLIENT[1]},
    )
    assert form.status_code == 200 and set(form.json()) == {
        "access_token",
        "token_type",
        "expires_in",
        "scope",
    }
    assert form.headers["X-Request-Id"].startswith("req_") and "svc-request-id" not in form.headers
    assert form.headers["X-Api-Version"] and "svc-api-version" not in form.headers


def test_basic_refused_by_a_form_post_server_still_challenges_basic(http: httpx.Client) -> None:
    """RFC 6749 §5.2: a client that authenticated by the Authorization header gets a 401 whose
    ``WWW-Authenticate`` names that scheme, even where the dialect takes the form only (A01)."""
    basic = http.post("/oauth/accesstoken", data={"grant_type": "client_credentials"}, auth=CLIENT)
    assert basic.status_code == 401 and basic.json()["error"] == "invalid_client"
    assert basic.headers["WWW-Authenticate"] == "Basic"


def test_the_partner_token_travels_in_the_dialects_header_and_scheme(http: httpx.Client) -> None:
    token = token_of(http)
    ours = http.get("/v2/webhook-keys", headers={"Authorization": f"Bearer {token}"})
    assert ours.status_code == 401 and ours.json()["code"] == "unauthorized"
    assert ours.headers["WWW-Authenticate"].startswith("Token")
    theirs = http.get("/v2/webhook-keys", headers=partner(token))
    assert theirs.status_code == 200
    (key,) = theirs.json()["keys"]
    assert key["alg"] == "EdDSA" and key["kty"] == "OKP" and key["use"] == "sig"


def test_a_moved_operation_answers_at_its_path_only(http: httpx.Client) -> None:
    token = token_of(http)
    assert http.get("/webhooks/jwks", headers=partner(token)).json()["code"] == "not-found"
    card = http.get("/v2/payment-cards/card_nope", headers=partner(token))
    assert card.status_code == 404 and card.json()["code"] == "not-found"  # card-not-found, generic
    wrong_method = http.delete("/v2/payment-cards/card_nope", headers=partner(token))
    assert wrong_method.status_code == 405


def test_a_session_journey_in_camel_case(http: httpx.Client) -> None:
    token = token_of(http)
    device = Device()
    created = anonymous_session(http, token, device)
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["sessionType"] == "ANONYMOUS" and body["expirationStrategy"] == "ROLLING"
    assert body["token"].startswith("ses_") and "session_token" not in body and "expiresAt" in body
    assert created.headers["X-Session-Expires-At"]
    account = http.post(
        "/v2/accounts",
        json={"product": "spending"},
        headers=partner(token, **{"svc-session-id": body["token"]}),
    )
    assert account.status_code == 201, account.text
    assert account.json()["accountId"].startswith("acc_") and "createdAt" in account.json()


def test_bad_input_is_refused_with_the_dialects_pointer_and_changes_nothing(http: httpx.Client) -> None:
    token = token_of(http)
    before = http.get("/_sim/ledger").json()
    device = Device()
    session = anonymous_session(http, token, device).json()["token"]
    refused = http.post(
        "/v2/accounts",
        json={"product": "spending", "openingNote": "x"},
        headers=partner(token, **{"svc-session-id": session}),
    )
    assert refused.status_code == 422 and refused.json()["code"] == "invalid-request"  # unknown-field
    assert [e["field"] for e in refused.json()["errors"]] == ["/openingNote"]
    assert http.get("/_sim/ledger").json() == before


def test_encrypted_payloads_carry_the_dialects_names(http: httpx.Client) -> None:
    token = token_of(http)
    device = Device(device_id="dev-camel-bound")
    session = anonymous_session(http, token, device).json()["token"]
    account = http.post(
        "/v2/accounts", json={"product": "spending"}, headers=partner(token, **{"svc-session-id": session})
    )
    account_id = account.json()["accountId"]
    init = http.get("/sessions/user_session_initialization_data", headers=partner(token)).json()
    plaintext = CAMEL.to_wire(device.plaintext(init["nonce"], account_id=account_id))
    body = {
        "sessionType": "ACCOUNT",
        "expirationStrategy": "ABSOLUTE",
        "encryptedData": encrypt_for_server(init, plaintext),
    }
    # a bound device opens an account session directly: its token comes sealed to the device
    opened = http.post("/sessions", json=body, headers=partner(token))
    assert opened.status_code == 201, opened.text
    assert "token" not in opened.json()
    sealed = decrypt_from_server(device, opened.json()["encryptedSessionToken"])
    assert set(sealed) == {"token"} and sealed["token"].startswith("ses_")


def test_the_openapi_document_follows_the_dialect(http: httpx.Client) -> None:
    doc = http.get("/openapi.json").json()
    assert "/v2/accounts" in doc["paths"] and "/accounts" not in doc["paths"]
    assert "delete" in doc["paths"]["/v2/sessions/current"] and "delete" not in doc["paths"]["/sessions"]
    created = doc["components"]["schemas"]["SessionCreated"]["properties"]
    assert {"token", "sessionType", "expiresAt"} <= set(created)
    headers = doc["paths"]["/v2/accounts"]["post"]["responses"]["201"]["headers"]
    assert "X-Request-Id" in headers and "svc-request-id" not in headers


def test_request_headers_are_read_under_the_dialects_names_only(http: httpx.Client) -> None:
    token = token_of(http)
    ours = http.get("/v2/webhook-keys", headers=partner(token, **{"svc-api-version": "1.1.0"}))
    theirs = http.get("/v2/webhook-keys", headers=partner(token, **{"X-Api-Version": "1.1.0"}))
    assert ours.headers["X-Api-Version"] == "1.2.0-20221215"  # our name is not this server's
    assert theirs.headers["X-Api-Version"] == "1.1.0"


def _unexpected_failure(overlay: _choices.Overlay, version_header: str) -> httpx.Response:
    """The answer of a route that raises, on a simulator speaking ``overlay``."""
    import asyncio

    from kit.sim import Settings, create_app
    from tests.sim.helpers.wire import IN_PROCESS

    app = create_app(Settings(choices=overlay, allowed_hosts=IN_PROCESS))

    @app.fastapi().get("/v2/_explode")
    async def explode() -> None:
        raise RuntimeError("internals")

    async def get() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://sim") as client:
            return await client.get("/v2/_explode", headers={version_header: "1.1.0"})

    return asyncio.run(get())


def test_an_unexpected_failure_is_answered_in_the_dialects_spelling() -> None:
    resp = _unexpected_failure(OVERLAY, "X-Api-Version")
    assert resp.status_code == 500 and resp.json()["code"] == "internal-error"
    assert resp.headers["X-Request-Id"].startswith("req_") and "svc-request-id" not in resp.headers
    assert resp.headers["X-Api-Version"] == "1.1.0" and "A21" in resp.headers["X-Assumptions"]


#: A64 renaming the 500's own code: alone, and with the second dialect's other choices.
SERVER_ERROR = {"A64": {"codes": {"internal-error": "server-error"}}}
WITH_CAMEL = {
    **OVERLAY.values,
    "A64": {"codes": {**OVERLAY.values["A64"]["codes"], **SERVER_ERROR["A64"]["codes"]}},
}


@pytest.mark.parametrize(
    ("values", "version_header"),
    [(SERVER_ERROR, "svc-api-version"), (WITH_CAMEL, "X-Api-Version")],
    ids=["codes-only", "camel"],
)
def test_an_unexpected_failures_code_is_renamed_as_any_problems(values: Any, version_header: str) -> None:
    """A64 renames the 500's code (``internal-error``) as it renames any other problem's, with
    or without a dialect's other names: its ``code`` and the end of its ``type``."""
    resp = _unexpected_failure(_choices.parse(values), version_header)
    problem = resp.json()
    assert resp.status_code == 500 and problem["code"] == "server-error", problem
    assert problem["type"].endswith(":server-error") and "internal-error" not in resp.text
    assert int(resp.headers["content-length"]) == len(resp.content)
