"""Session initialization data (register A04): the server's public keys and single-use nonces."""

from __future__ import annotations

from datetime import timedelta

import httpx

from tests.sim.helpers.contract import PARTNER_B
from tests.sim.helpers.control import clock_now, reset
from tests.sim.helpers.encryption import Device
from tests.sim.helpers.journeys import create_session
from tests.sim.helpers.wire import assert_problem, b64u_decode, call, init_data, parse_time, partner_token

INIT = "/sessions/user_session_initialization_data"
PRIVATE_MEMBERS = {"d", "p", "q", "dp", "dq", "qi", "oth", "k"}


def test_shape_of_init_data(http: httpx.Client, token: str) -> None:
    body = init_data(http, token)
    assert set(body) == {"jwks", "enc", "nonce", "nonce_expires_at"}, body
    assert body["enc"] == ["A256GCM"]
    assert isinstance(body["nonce"], str) and len(body["nonce"]) >= 16
    keys = body["jwks"]["keys"]
    assert len(keys) == 2
    rsa = [k for k in keys if k["kty"] == "RSA"]
    ec = [k for k in keys if k["kty"] == "EC"]
    assert len(rsa) == 1 and len(ec) == 1, keys
    for key in keys:
        assert not (set(key) & PRIVATE_MEMBERS), f"private material published: {sorted(key)}"
        assert isinstance(key.get("kid"), str) and key["kid"]
        assert key.get("use") == "enc"
    assert rsa[0]["alg"] == "RSA-OAEP-256"
    n = b64u_decode(rsa[0]["n"])
    assert len(n) == 256 and n[0] & 0x80, "RSA modulus must be 2048 bits"
    assert ec[0]["alg"] == "ECDH-ES+A256KW"
    assert ec[0]["crv"] == "P-256"
    assert len(b64u_decode(ec[0]["x"])) == 32 and len(b64u_decode(ec[0]["y"])) == 32
    assert rsa[0]["kid"] != ec[0]["kid"]


def test_nonce_expires_five_minutes_from_simulator_now(http: httpx.Client, token: str) -> None:
    now = clock_now(http)
    body = init_data(http, token)
    assert parse_time(body["nonce_expires_at"]) == now + timedelta(minutes=5)
    http.post("/_sim/clock/advance", json={"seconds": 1234})
    body = init_data(http, token)
    assert parse_time(body["nonce_expires_at"]) == now + timedelta(seconds=1234 + 300)


def test_each_call_issues_a_new_nonce(http: httpx.Client, token: str) -> None:
    nonces = {init_data(http, token)["nonce"] for _ in range(5)}
    assert len(nonces) == 5


def test_init_data_needs_the_partner_token(http: httpx.Client) -> None:
    assert_problem(http.get(INIT), 401, "invalid-partner-token")
    assert_problem(call(http, "GET", INIT, token="nope"), 401, "invalid-partner-token")


def test_both_published_keys_work(http: httpx.Client, token: str) -> None:
    for alg in ("RSA-OAEP-256", "ECDH-ES+A256KW"):
        resp = create_session(http, token, Device(), alg=alg)
        assert resp.status_code == 201, (alg, resp.text)


def test_kids_and_keys_are_deterministic_for_a_seed(http: httpx.Client) -> None:
    first = init_data(http, partner_token(http))["jwks"]
    reset(http, 7)
    second = init_data(http, partner_token(http))["jwks"]
    assert first == second


def test_both_partners_see_keys_and_nonces_of_their_own(http: httpx.Client) -> None:
    a = init_data(http, partner_token(http))
    b = init_data(http, partner_token(http, *PARTNER_B))
    assert a["nonce"] != b["nonce"]
