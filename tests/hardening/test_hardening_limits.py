"""Limits (issue #6, item 7), each read from the assumptions register, not restated here:
A22 request body size, A33 encrypted field size, A32 session creations per device."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from kit import register
from tests.sim.helpers.control import advance, snapshot
from tests.sim.helpers.encryption import Device, encrypt_for_server
from tests.sim.helpers.journeys import create_session, journey
from tests.sim.helpers.wire import assert_problem, init_data, money, post_raw

MAX_BODY = int(register.value("A22")["max_body_bytes"])
MAX_JWE = int(register.value("A33")["max_jwe_bytes"])
RATE = int(register.value("A32")["max_sessions_per_device_per_minute"])


def _padded(body: dict[str, Any], size: int) -> bytes:
    raw = json.dumps(body).encode()
    return raw + b" " * (size - len(raw))  # trailing whitespace: still the same JSON


@pytest.mark.parametrize("route", ["p2p", "subscriptions"])
@pytest.mark.parametrize(("extra", "refused"), [(0, False), (1, True)])
def test_body_limit_a22(http: httpx.Client, route: str, extra: int, refused: bool) -> None:
    a = journey(http)
    b = journey(http, token=a.token, persona_index=1)
    path, session, body = {
        "p2p": (
            "/p2p/transfers",
            a.person_session,
            {"from_account_id": a.account_id, "to_person_id": b.person_id, "amount": money("3.00")},
        ),
        "subscriptions": (
            "/webhooks/subscriptions",
            None,
            {"url": "http://127.0.0.1:9/h", "events": ["card.closed"]},
        ),
    }[route]
    before = snapshot(http)
    resp = post_raw(http, path, _padded(body, MAX_BODY + extra), token=a.token, session=session, idem="a22")
    if refused:
        assert_problem(resp, 413, "payload-too-large")
        assert snapshot(http) == before
    else:
        assert resp.status_code == 201, resp.text


def _jwe_of_length(init: dict[str, Any], device: Device, target: int, *, above: bool) -> str:
    """A valid JWE (unknown plaintext fields are ignored) of exactly ``target`` characters,
    or of the nearest length the base64url encoding allows on the chosen side."""
    plaintext = device.plaintext(init["nonce"])
    base = len(encrypt_for_server(init, {**plaintext, "pad": ""}))
    guess = max(0, (target - base) * 3 // 4)
    best = None
    for pad in range(max(0, guess - 8), guess + 8):
        token = encrypt_for_server(init, {**plaintext, "pad": "x" * pad})
        if (not above and len(token) <= target) or (above and len(token) > target and best is None):
            best = token
    assert best is not None
    return best


def test_encrypted_field_limit_a33(http: httpx.Client, token: str) -> None:
    device = Device()
    init = init_data(http, token)
    at_limit = _jwe_of_length(init, device, MAX_JWE, above=False)
    assert MAX_JWE - 3 <= len(at_limit) <= MAX_JWE
    ok = create_session(http, token, device, encrypted_data=at_limit)
    assert ok.status_code == 201, ok.text

    init = init_data(http, token)
    over = _jwe_of_length(init, device, MAX_JWE, above=True)
    assert MAX_JWE < len(over) <= MAX_JWE + 3
    assert_problem(create_session(http, token, device, encrypted_data=over), 400, "invalid-encrypted-data")
    # refused before any decryption: the nonce inside is still unused
    again = create_session(http, token, device, init=init)
    assert again.status_code == 201, again.text


def test_session_rate_a32(http: httpx.Client, token: str) -> None:
    device = Device("rate-limited-device")
    for _ in range(RATE):
        assert create_session(http, token, device, alg="ECDH-ES+A256KW").status_code == 201
    resp = create_session(http, token, device, alg="ECDH-ES+A256KW")
    assert_problem(resp, 429, "rate-limited")
    retry_after = resp.headers.get("retry-after", "")
    assert retry_after.isdigit() and 0 < int(retry_after) <= 60, retry_after
    # per device: another device is not limited
    assert create_session(http, token, Device(), alg="ECDH-ES+A256KW").status_code == 201
    # a minute of simulator time, not of wall time
    advance(http, 59)
    assert_problem(create_session(http, token, device, alg="ECDH-ES+A256KW"), 429, "rate-limited")
    advance(http, 1)
    assert create_session(http, token, device, alg="ECDH-ES+A256KW").status_code == 201
