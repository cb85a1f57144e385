"""JOSE by hand, with joserfc and ``cryptography`` directly: the device and its key pair,
JWEs to the server's published keys and from the server to the device, and hand-made or
tampered JWEs for the allow-list tests."""

from __future__ import annotations

import json
import os
import uuid
import zlib
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicNumbers
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from joserfc import jwe
from joserfc.jwe import JWERegistry
from joserfc.jwk import ECKey, RSAKey

from tests.sim.helpers.contract import FORBIDDEN_JWE_HEADERS
from tests.sim.helpers.wire import b64u, b64u_decode

KEYS_DIR = Path(__file__).resolve().parents[2] / "keys"

SERVER_JWE = JWERegistry(algorithms=["RSA-OAEP-256", "ECDH-ES+A256KW", "A256GCM"])
DEVICE_JWE = JWERegistry(algorithms=["ECDH-ES+A256KW", "A256GCM"])


def load_key(name: str) -> ECKey | RSAKey:
    data = json.loads((KEYS_DIR / f"{name}.json").read_text())
    return RSAKey.import_key(data) if data["kty"] == "RSA" else ECKey.import_key(data)


class Device:
    """A device: id, metadata and an EC P-256 key pair held in memory (register A09)."""

    def __init__(
        self,
        device_id: str | None = None,
        *,
        platform: str = "ios",
        model: str = "TestPhone 1",
        os_version: str = "17.2",
        key: ECKey | None = None,
    ) -> None:
        self.device_id = device_id or f"dev-{uuid.uuid4().hex[:16]}"
        self.platform = platform
        self.model = model
        self.os_version = os_version
        self.key = key or ECKey.generate_key("P-256", private=True)

    @classmethod
    def for_persona(cls, persona: dict[str, Any], **kw: Any) -> Device:
        dev = persona.get("device") or {}
        return cls(
            dev.get("device_id"),
            platform=dev.get("platform", "ios"),
            model=dev.get("model", "TestPhone 1"),
            os_version=dev.get("os_version", "17.2"),
            **kw,
        )

    def public_jwk(self) -> dict[str, Any]:
        jwk = dict(self.key.as_dict(private=False))
        jwk["use"] = "enc"
        return jwk

    def device_data(self) -> dict[str, str]:
        return {
            "device_id": self.device_id,
            "platform": self.platform,
            "model": self.model,
            "os_version": self.os_version,
        }

    def plaintext(
        self,
        nonce: str | None,
        *,
        account_id: str | None = None,
        person_id: str | None = None,
        jwk: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The plaintext of ``encrypted_data`` for ``POST /sessions``."""
        body: dict[str, Any] = {
            "device": self.device_data(),
            "device_jwks": {"keys": [jwk if jwk is not None else self.public_jwk()]},
        }
        if nonce is not None:
            body["nonce"] = nonce
        if account_id is not None:
            body["account_id"] = account_id
        if person_id is not None:
            body["person_id"] = person_id
        return body

    def decrypt(self, token: str) -> dict[str, Any]:
        return decrypt_from_server(self, token)


_imported: dict[str, Any] = {}


def server_key(init: dict[str, Any], alg: str = "RSA-OAEP-256") -> dict[str, Any]:
    """The init data's public JWK for ``alg``."""
    for key in init["jwks"]["keys"]:
        if key.get("alg") == alg:
            return key
    raise AssertionError(f"no key with alg {alg} in {init['jwks']}")


def _import(jwk: dict[str, Any]) -> Any:
    cache_key = json.dumps(jwk, sort_keys=True)
    if cache_key not in _imported:
        cls = RSAKey if jwk["kty"] == "RSA" else ECKey
        _imported[cache_key] = cls.import_key(jwk)
    return _imported[cache_key]


def encrypt_for_server(init: dict[str, Any], plaintext: Any, alg: str = "RSA-OAEP-256") -> str:
    """A compact JWE of ``plaintext`` (JSON) to the server's key for ``alg``, kid set."""
    jwk = server_key(init, alg)
    data = plaintext if isinstance(plaintext, bytes) else json.dumps(plaintext).encode()
    return jwe.encrypt_compact(
        {"alg": alg, "enc": "A256GCM", "kid": jwk["kid"]}, data, _import(jwk), registry=SERVER_JWE
    )


def protected_header(token: str) -> dict[str, Any]:
    return json.loads(b64u_decode(token.split(".")[0]))


def decrypt_from_server(device: Device, token: str) -> dict[str, Any]:
    """Decrypt a JWE the server sent to ``device`` (ECDH-ES+A256KW + A256GCM only)."""
    assert isinstance(token, str) and token.count(".") == 4, token
    header = protected_header(token)
    assert header.get("alg") == "ECDH-ES+A256KW", header
    assert header.get("enc") == "A256GCM", header
    for name in FORBIDDEN_JWE_HEADERS:
        assert name not in header, header
    obj = jwe.decrypt_compact(token, device.key, registry=DEVICE_JWE)
    return json.loads(obj.plaintext)


def _rsa_padding(wrap: str) -> Any:
    if wrap == "RSA-OAEP-256":
        return padding.OAEP(padding.MGF1(hashes.SHA256()), hashes.SHA256(), None)
    if wrap == "RSA-OAEP":
        return padding.OAEP(padding.MGF1(hashes.SHA1()), hashes.SHA1(), None)
    if wrap == "RSA1_5":
        return padding.PKCS1v15()
    raise ValueError(wrap)


def raw_jwe(
    header: dict[str, Any],
    plaintext: Any,
    rsa_jwk: dict[str, Any] | None,
    *,
    wrap: str = "RSA-OAEP-256",
    cek_len: int = 32,
    deflate: bool = False,
) -> str:
    """A hand-made compact JWE with any protected header (for the allow-list tests).

    ``wrap`` says how the CEK is carried: ``RSA-OAEP-256``, ``RSA-OAEP``, ``RSA1_5`` (to
    ``rsa_jwk``) or ``none`` (empty encrypted key, as for ``dir``). Content: AES-GCM.
    """
    data = plaintext if isinstance(plaintext, bytes) else json.dumps(plaintext).encode()
    if deflate:
        comp = zlib.compressobj(wbits=-15)
        data = comp.compress(data) + comp.flush()
    cek = AESGCM.generate_key(bit_length=cek_len * 8)
    if wrap == "none":
        encrypted_key = b""
    else:
        assert rsa_jwk is not None
        pub = RSAPublicNumbers(
            int.from_bytes(b64u_decode(rsa_jwk["e"]), "big"),
            int.from_bytes(b64u_decode(rsa_jwk["n"]), "big"),
        ).public_key()
        encrypted_key = pub.encrypt(cek, _rsa_padding(wrap))
    protected = b64u(json.dumps(header).encode())
    iv = os.urandom(12)
    sealed = AESGCM(cek).encrypt(iv, data, protected.encode("ascii"))
    ciphertext, tag = sealed[:-16], sealed[-16:]
    return ".".join([protected, b64u(encrypted_key), b64u(iv), b64u(ciphertext), b64u(tag)])


def tamper(token: str, part: int) -> str:
    """Flip one byte in the middle of part ``part`` of a compact JWE."""
    parts = token.split(".")
    raw = bytearray(b64u_decode(parts[part]))
    assert raw, f"part {part} is empty"
    raw[len(raw) // 2] ^= 0x01
    parts[part] = b64u(bytes(raw))
    return ".".join(parts)
