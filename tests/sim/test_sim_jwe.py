"""The JWE allow-list (A04), nonces and device keys on ``POST /sessions``.

Every refused JWE is 400 ``invalid-encrypted-data`` with one fixed ``detail``. A JWE that
is refused was not decrypted: its nonce is still good afterwards. A nonce is used up once
its JWE decrypts, whatever happens next.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from joserfc import jwe
from joserfc.jwe import JWERegistry
from joserfc.jwk import ECKey

from tests.sim.helpers.contract import PARTNER_B
from tests.sim.helpers.control import advance
from tests.sim.helpers.encryption import Device, encrypt_for_server, load_key, raw_jwe, server_key, tamper
from tests.sim.helpers.journeys import create_session, journey
from tests.sim.helpers.wire import assert_problem, b64u, call, init_data, partner_token


@pytest.fixture
def http(both_decrypt_modes: Any) -> Any:
    """Every test here runs with JWEs decrypted on the event loop and in a worker process."""
    return both_decrypt_modes


Maker = Callable[[dict[str, Any], dict[str, Any]], str]


def _rsa(init: dict[str, Any]) -> dict[str, Any]:
    return server_key(init, "RSA-OAEP-256")


def _ec(init: dict[str, Any]) -> dict[str, Any]:
    return server_key(init, "ECDH-ES+A256KW")


def _hdr(init: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"alg": "RSA-OAEP-256", "enc": "A256GCM", "kid": _rsa(init)["kid"], **extra}


def _joserfc(protected: dict[str, Any], pt: dict[str, Any], key: Any, algs: list[str]) -> str:
    return jwe.encrypt_compact(protected, json.dumps(pt).encode(), key, registry=JWERegistry(algorithms=algs))


def _foreign_ec(init: dict[str, Any], pt: dict[str, Any]) -> str:
    key = load_key("foreign_ec_p256")
    return _joserfc(
        {"alg": "ECDH-ES+A256KW", "enc": "A256GCM", "kid": _ec(init)["kid"]},
        pt,
        key,
        ["ECDH-ES+A256KW", "A256GCM"],
    )


BAD_JWES: dict[str, Maker] = {
    "rsa1_5": lambda i, p: raw_jwe({**_hdr(i), "alg": "RSA1_5"}, p, _rsa(i), wrap="RSA1_5"),
    "rsa-oaep-sha1": lambda i, p: raw_jwe({**_hdr(i), "alg": "RSA-OAEP"}, p, _rsa(i), wrap="RSA-OAEP"),
    "dir": lambda i, p: raw_jwe({**_hdr(i), "alg": "dir"}, p, None, wrap="none"),
    "none": lambda i, p: raw_jwe({**_hdr(i), "alg": "none"}, p, None, wrap="none"),
    "enc-a128gcm": lambda i, p: raw_jwe({**_hdr(i), "enc": "A128GCM"}, p, _rsa(i), cek_len=16),
    "enc-a256cbc": lambda i, p: raw_jwe({**_hdr(i), "enc": "A256CBC-HS512"}, p, _rsa(i), cek_len=32),
    "ec-enc-a128gcm": lambda i, p: _joserfc(
        {"alg": "ECDH-ES+A256KW", "enc": "A128GCM", "kid": _ec(i)["kid"]},
        p,
        ECKey.import_key(_ec(i)),
        ["ECDH-ES+A256KW", "A128GCM"],
    ),
    "ecdh-es-direct": lambda i, p: _joserfc(
        {"alg": "ECDH-ES", "enc": "A256GCM", "kid": _ec(i)["kid"]},
        p,
        ECKey.import_key(_ec(i)),
        ["ECDH-ES", "A256GCM"],
    ),
    "ecdh-es-a128kw": lambda i, p: _joserfc(
        {"alg": "ECDH-ES+A128KW", "enc": "A256GCM", "kid": _ec(i)["kid"]},
        p,
        ECKey.import_key(_ec(i)),
        ["ECDH-ES+A128KW", "A256GCM"],
    ),
    "unknown-kid": lambda i, p: raw_jwe(_hdr(i, kid="no-such-kid"), p, _rsa(i)),
    "no-kid": lambda i, p: raw_jwe({"alg": "RSA-OAEP-256", "enc": "A256GCM"}, p, _rsa(i)),
    "kid-of-the-other-key": lambda i, p: raw_jwe(_hdr(i, kid=_ec(i)["kid"]), p, _rsa(i)),
    "zip": lambda i, p: raw_jwe(_hdr(i, zip="DEF"), p, _rsa(i), deflate=True),
    "jku": lambda i, p: raw_jwe(_hdr(i, jku="https://127.0.0.1/jwks"), p, _rsa(i)),
    "jwk": lambda i, p: raw_jwe(_hdr(i, jwk=_rsa(i)), p, _rsa(i)),
    "x5u": lambda i, p: raw_jwe(_hdr(i, x5u="https://127.0.0.1/x5"), p, _rsa(i)),
    "x5c": lambda i, p: raw_jwe(_hdr(i, x5c=["MIIB"]), p, _rsa(i)),
    "crit": lambda i, p: raw_jwe(_hdr(i, crit=["exp"], exp=1), p, _rsa(i)),
    "never-issued-rsa-key": lambda i, p: raw_jwe(
        _hdr(i), p, load_key("foreign_rsa_2048").as_dict(private=False)
    ),
    "never-issued-ec-key": _foreign_ec,
    "tampered-header": lambda i, p: _retag_header(encrypt_for_server(i, p)),
    "tampered-encrypted-key": lambda i, p: tamper(encrypt_for_server(i, p), 1),
    "tampered-iv": lambda i, p: tamper(encrypt_for_server(i, p), 2),
    "tampered-ciphertext": lambda i, p: tamper(encrypt_for_server(i, p), 3),
    "tampered-tag": lambda i, p: tamper(encrypt_for_server(i, p), 4),
    "tampered-ec-ciphertext": lambda i, p: tamper(encrypt_for_server(i, p, "ECDH-ES+A256KW"), 3),
    "truncated-tag": lambda i, p: _cut_tag(encrypt_for_server(i, p)),
    "four-parts": lambda i, p: encrypt_for_server(i, p).rsplit(".", 1)[0],
    "six-parts": lambda i, p: encrypt_for_server(i, p) + ".AAAA",
    "not-a-jwe": lambda i, p: "not a jwe at all",
    "five-empty-parts": lambda i, p: "....",
    "garbage-base64": lambda i, p: "!!!.@@@.###.$$$.%%%",
    "header-not-json": lambda i, p: b64u(b"not json") + ".AA.AA.AA.AA",
    "header-json-array": lambda i, p: b64u(b'["RSA-OAEP-256"]') + ".AA.AA.AA.AA",
    "a-jws": lambda i, p: b64u(b'{"alg":"ES256"}') + "." + b64u(b"{}") + ".c2ln",
    "json-serialization": lambda i, p: json.dumps({"protected": "e30", "ciphertext": "AA"}),
}


def _retag_header(token: str) -> str:
    parts = token.split(".")
    header = json.loads(b64u_decode_str(parts[0]))
    parts[0] = b64u(json.dumps(header, indent=1).encode())  # same header, other bytes: new AAD
    return ".".join(parts)


def b64u_decode_str(text: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _cut_tag(token: str) -> str:
    parts = token.split(".")
    parts[4] = parts[4][:10]
    return ".".join(parts)


def _post(http: httpx.Client, token: str, encrypted: str) -> httpx.Response:
    """``POST /sessions`` (anonymous, fixed) with ``encrypted`` as the encrypted data."""
    return create_session(http, token, None, encrypted_data=encrypted)


def reference_detail(http: httpx.Client, token: str) -> str:
    resp = _post(http, token, "definitely.not.a.valid.jwe")
    return assert_problem(resp, 400, "invalid-encrypted-data")["detail"]


@pytest.mark.parametrize("case", sorted(BAD_JWES))
def test_refused_jwe_is_invalid_encrypted_data_and_leaves_the_nonce(
    http: httpx.Client, token: str, case: str
) -> None:
    init = init_data(http, token)
    device = Device()
    plaintext = device.plaintext(init["nonce"])
    resp = _post(http, token, BAD_JWES[case](init, plaintext))
    body = assert_problem(resp, 400, "invalid-encrypted-data", not_echo=(init["nonce"],))
    assert body["detail"] == reference_detail(http, token), "one fixed detail for every case"
    assert "errors" not in body or not any(init["nonce"] in json.dumps(e) for e in body["errors"])
    # Refused, so not decrypted: the nonce is still good.
    resp = _post(http, token, encrypt_for_server(init, plaintext))
    assert resp.status_code == 201, resp.text


@pytest.mark.parametrize("case", ["rsa1_5", "dir", "unknown-kid", "zip", "tampered-tag"])
def test_refused_jwe_in_person_pii(http: httpx.Client, token: str, case: str) -> None:
    j = journey(http, until="account")
    init = init_data(http, token)
    pii = {"first_name": "A", "last_name": "B", "date_of_birth": "1990-01-01", "national_id": "000-00-0000"}
    path = f"/accounts/{j.account_id}/persons"
    body = {"encrypted_pii": BAD_JWES[case](init, pii)}
    resp = call(http, "POST", path, token=token, session=j.account_session, json_body=body)
    body = assert_problem(resp, 400, "invalid-encrypted-data")
    assert body["detail"] == reference_detail(http, token)


@pytest.mark.parametrize("alg", ["RSA-OAEP-256", "ECDH-ES+A256KW"])
def test_valid_jwe_with_unknown_plaintext_fields_is_accepted(
    http: httpx.Client, token: str, alg: str
) -> None:
    init = init_data(http, token)
    device = Device()
    plaintext = {**device.plaintext(init["nonce"]), "colour": "red"}
    plaintext["device"] = {**plaintext["device"], "extra": 1}
    resp = _post(http, token, encrypt_for_server(init, plaintext, alg))
    assert resp.status_code == 201, resp.text


# --- nonces -----


def test_nonce_is_single_use(http: httpx.Client, token: str) -> None:
    init = init_data(http, token)
    device = Device()
    assert create_session(http, token, device, init=init).status_code == 201
    resp = create_session(http, token, device, init=init)
    assert_problem(resp, 400, "nonce-invalid", not_echo=(init["nonce"],))


def test_nonce_is_valid_until_just_before_expiry(http: httpx.Client, token: str) -> None:
    init = init_data(http, token)
    advance(http, 299)
    assert create_session(http, token, Device(), init=init).status_code == 201


@pytest.mark.parametrize("seconds", [300, 301, 3600])
def test_expired_nonce_is_nonce_invalid(http: httpx.Client, token: str, seconds: int) -> None:
    init = init_data(http, token)
    advance(http, seconds)
    assert_problem(create_session(http, token, Device(), init=init), 400, "nonce-invalid")


def test_nonce_of_another_partner_is_nonce_invalid(http: httpx.Client, token: str) -> None:
    other = partner_token(http, *PARTNER_B)
    init_b = init_data(http, other)
    init_a = init_data(http, token)
    device = Device()
    pt = device.plaintext(init_b["nonce"])
    resp = create_session(http, token, device, encrypted_data=encrypt_for_server(init_a, pt))
    assert_problem(resp, 400, "nonce-invalid")


@pytest.mark.parametrize("nonce", [None, "", "made-up-nonce", 12345])
def test_missing_or_made_up_nonce_is_nonce_invalid(http: httpx.Client, token: str, nonce: Any) -> None:
    init = init_data(http, token)
    device = Device()
    pt = device.plaintext(None)
    if nonce is not None:
        pt["nonce"] = nonce
    resp = create_session(http, token, device, encrypted_data=encrypt_for_server(init, pt))
    if isinstance(nonce, int):
        # a wrong JSON type inside the plaintext may be a plaintext schema error instead
        assert resp.status_code in (400, 422), resp.text
        assert resp.json()["code"] in ("nonce-invalid", "validation-error")
    else:
        assert_problem(resp, 400, "nonce-invalid")


# --- device keys -----


def _bad_keys() -> dict[str, dict[str, Any]]:
    ec = ECKey.generate_key("P-256", private=True)
    with_d = dict(ec.as_dict(private=True), use="enc")
    p384 = dict(load_key("device_ec_p384").as_dict(private=False), use="enc")
    rsa = dict(load_key("device_rsa_2048").as_dict(private=False), use="enc")
    rsa_private = dict(load_key("device_rsa_2048").as_dict(private=True), use="enc")
    broken = dict(ec.as_dict(private=False), use="enc", x="AAAA")
    not_on_curve = dict(ec.as_dict(private=False), use="enc")
    raw_y = bytearray(b64u_decode_str(not_on_curve["y"]))
    raw_y[-1] ^= 1
    not_on_curve["y"] = b64u(bytes(raw_y))
    oct_key = {"kty": "oct", "k": b64u(b"0" * 32), "use": "enc"}
    return {
        "ec-with-private-d": with_d,
        "ec-p384": p384,
        "rsa-public": rsa,
        "rsa-private": rsa_private,
        "ec-short-x": broken,
        "ec-not-on-curve": not_on_curve,
        "oct": oct_key,
    }


BAD_DEVICE_KEYS = _bad_keys()


@pytest.mark.parametrize("case", sorted(BAD_DEVICE_KEYS))
def test_bad_device_key_is_invalid_device_key_and_uses_up_the_nonce(
    http: httpx.Client, token: str, case: str
) -> None:
    init = init_data(http, token)
    device = Device()
    pt = device.plaintext(init["nonce"], jwk=BAD_DEVICE_KEYS[case])
    resp = create_session(http, token, device, encrypted_data=encrypt_for_server(init, pt))
    assert_problem(resp, 400, "invalid-device-key")
    # the JWE decrypted: its nonce is used up even though the request failed
    resp = create_session(http, token, device, init=init)
    assert_problem(resp, 400, "nonce-invalid")


def test_nonce_is_checked_before_the_device_key(http: httpx.Client, token: str) -> None:
    init = init_data(http, token)
    device = Device()
    pt = device.plaintext("made-up", jwk=BAD_DEVICE_KEYS["rsa-public"])
    resp = create_session(http, token, device, encrypted_data=encrypt_for_server(init, pt))
    assert_problem(resp, 400, "nonce-invalid")


@pytest.mark.parametrize(
    ("mutate", "code"),
    [
        (lambda pt: pt["device"].update(platform="symbian"), "unknown-platform"),
        (lambda pt: pt["device"].update(platform=5), "validation-error"),
        (lambda pt: pt["device"].pop("device_id"), "validation-error"),
        (lambda pt: pt["device"].update(device_id=""), "validation-error"),
        (lambda pt: pt.pop("device"), "validation-error"),
    ],
)
def test_plaintext_schema_errors_use_up_the_nonce(
    http: httpx.Client, token: str, mutate: Callable[[dict[str, Any]], Any], code: str
) -> None:
    init = init_data(http, token)
    device = Device()
    pt = device.plaintext(init["nonce"])
    mutate(pt)
    resp = create_session(http, token, device, encrypted_data=encrypt_for_server(init, pt))
    body = assert_problem(resp, 422, code)
    fields = [e["field"] for e in body.get("errors", [])]
    if code == "validation-error":
        assert fields and all(f == "/encrypted_data" for f in fields), body
    else:
        assert body["allowed"] == ["ios", "android", "web"]
    assert_problem(create_session(http, token, device, init=init), 400, "nonce-invalid")


def test_plaintext_error_message_names_the_inner_path(http: httpx.Client, token: str) -> None:
    init = init_data(http, token)
    device = Device()
    pt = device.plaintext(init["nonce"])
    pt["device"]["os_version"] = 17
    resp = create_session(http, token, device, encrypted_data=encrypt_for_server(init, pt))
    body = assert_problem(resp, 422, "validation-error")
    assert body["errors"][0]["field"] == "/encrypted_data"
    assert "os_version" in body["errors"][0]["message"]


def test_plaintext_not_an_object_is_validation_error(http: httpx.Client, token: str) -> None:
    init = init_data(http, token)
    resp = create_session(http, token, Device(), encrypted_data=encrypt_for_server(init, [1, 2]))
    body = assert_problem(resp, 422, "validation-error")
    assert body["errors"][0]["field"] == "/encrypted_data"
