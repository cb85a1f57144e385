"""Device crypto: allow-listed algorithms, header checks, kid set, both server key types."""

from __future__ import annotations

import json

import pytest
from joserfc import jwe
from joserfc.jwe import JWERegistry
from joserfc.jwk import ECKey, RSAKey

from kit.crypto import Device, ServerKeys, protected_header
from kit.errors import ConfigError, CryptoError

REG = JWERegistry(algorithms=["ECDH-ES+A256KW", "RSA-OAEP-256", "RSA-OAEP", "A256GCM", "A128GCM"])


def _to_device(device: Device, plaintext: dict, **header: object) -> str:
    public = ECKey.import_key(device.public_jwk())
    protected = {"alg": "ECDH-ES+A256KW", "enc": "A256GCM", "kid": device.kid, **header}
    return jwe.encrypt_compact(protected, json.dumps(plaintext).encode(), public, registry=REG)


def test_device_decrypts_what_is_encrypted_to_it() -> None:
    device = Device(device_id="d1")
    token = _to_device(device, {"session_token": "ses_x"})
    value = device.decrypt(token, label="session")
    assert value.reveal() == {"session_token": "ses_x"}
    assert "ses_x" not in repr(value)


def test_device_public_jwk_has_no_private_part() -> None:
    jwk = Device().public_jwk()
    assert "d" not in jwk and jwk["kty"] == "EC" and jwk["crv"] == "P-256" and jwk["use"] == "enc"


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ({"kid": "someone-else"}, "another key"),
        ({"enc": "A128GCM"}, "only ECDH-ES"),
        ({"jku": "https://evil.invalid/jwks"}, "forbidden header"),
    ],
)
def test_device_refuses_wrong_headers(header: dict, reason: str) -> None:
    device = Device()
    token = _to_device(device, {"a": 1}, **header)  # a valid JWE for the device's key…
    with pytest.raises(CryptoError, match=reason):  # …refused for its header alone
        device.decrypt(token)


def test_device_refuses_another_algorithm() -> None:
    device = Device()
    rsa = RSAKey.generate_key(2048, private=True)
    token = jwe.encrypt_compact({"alg": "RSA-OAEP-256", "enc": "A256GCM"}, b"{}", rsa, registry=REG)
    with pytest.raises(CryptoError, match="only ECDH-ES"):
        device.decrypt(token)


@pytest.mark.parametrize("garbage", ["", "abc", "a.b.c.d.e", "eyJhbGciOiJub25lIn0....", "....."])
def test_malformed_strings_are_crypto_errors(garbage: str) -> None:
    with pytest.raises(CryptoError):
        Device().decrypt(garbage)


def test_tampered_ciphertext_is_refused() -> None:
    device = Device()
    parts = _to_device(device, {"a": 1}).split(".")
    parts[3] = parts[3][:-2] + ("AA" if parts[3][-2:] != "AA" else "BB")
    with pytest.raises(CryptoError):
        device.decrypt(".".join(parts))


def test_another_devices_token_is_refused() -> None:
    a, b = Device(), Device()
    token = _to_device(a, {"a": 1})
    with pytest.raises(CryptoError):
        b.decrypt(token)


def _server_jwks() -> tuple[dict, RSAKey, ECKey]:
    rsa = RSAKey.generate_key(2048, private=True)
    ec = ECKey.generate_key("P-256", private=True)
    keys = [
        {**rsa.as_dict(private=False), "kid": "enc-rsa-1", "use": "enc", "alg": "RSA-OAEP-256"},
        {**ec.as_dict(private=False), "kid": "enc-ec-1", "use": "enc", "alg": "ECDH-ES+A256KW"},
    ]
    return {"keys": keys}, rsa, ec


@pytest.mark.parametrize("alg", ["RSA-OAEP-256", "ECDH-ES+A256KW"])
def test_server_keys_encrypt_with_kid_and_alg(alg: str) -> None:
    jwks, rsa, ec = _server_jwks()
    keys = ServerKeys()
    keys.update(jwks)
    token = keys.encrypt({"nonce": "n"}, alg=alg)
    header = protected_header(token)
    assert header["alg"] == alg and header["enc"] == "A256GCM"
    assert header["kid"] == ("enc-rsa-1" if alg == "RSA-OAEP-256" else "enc-ec-1")
    private = rsa if alg == "RSA-OAEP-256" else ec
    plaintext = jwe.decrypt_compact(token, private, registry=REG).plaintext or b""
    assert json.loads(plaintext) == {"nonce": "n"}


def test_server_keys_import_each_jwk_once() -> None:
    jwks, _, _ = _server_jwks()
    keys = ServerKeys()
    keys.update(jwks)
    first = keys.select("RSA-OAEP-256").key
    keys.update(json.loads(json.dumps(jwks)))
    assert keys.select("RSA-OAEP-256").key is first


def test_server_keys_refuse_other_algorithms() -> None:
    jwks, _, _ = _server_jwks()
    keys = ServerKeys()
    keys.update(jwks)
    with pytest.raises(ConfigError):
        keys.encrypt({}, alg="RSA1_5")
    with pytest.raises(CryptoError):
        ServerKeys().encrypt({}, alg="RSA-OAEP-256")
