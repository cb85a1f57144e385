"""Device cryptography: the counterpart of the partner's client-side SDK (spec rule 3).

The only client module that imports joserfc; callers never see its types. Algorithms are
allow-listed at every encrypt, decrypt and verify, and protected headers are checked here
because joserfc's ``decrypt_compact`` with a single key ignores ``kid`` and the key's ``alg``
(joserfc 1.x). Malformed compact strings raise a plain ``ValueError`` in joserfc: both that and
``JoseError`` become :class:`~kit.errors.CryptoError` (or a webhook verification error).

- :class:`Device` — one install of the partner app: id, metadata and an EC P-256 key pair
  held in memory only.
- :class:`ServerKeys` — the server's encryption keys from init data (the wire contract), each JWK
  imported once and kept.
- :class:`WebhookKeys` — the server's ES256 signing keys from ``GET /webhooks/jwks``.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from joserfc import jwe, jws
from joserfc.errors import JoseError
from joserfc.jwe import JWERegistry
from joserfc.jwk import ECKey, Key, RSAKey
from joserfc.jws import JWSRegistry

from kit._jose import b64decode, signing_registry
from kit._sensitive import Sensitive
from kit.errors import (
    ConfigError,
    CryptoError,
    SignatureInvalid,
    SignatureMalformed,
    UnknownSigningKey,
)

__all__ = [
    "ENC",
    "SERVER_ALGS",
    "Device",
    "ServerKeys",
    "WebhookKeys",
    "protected_header",
]

ENC = "A256GCM"
#: Algorithms the client may encrypt to the server with (the wire contract), default first.
SERVER_ALGS = ("RSA-OAEP-256", "ECDH-ES+A256KW")
#: The only algorithm the server encrypts to the device with (session tokens, KYC questions).
DEVICE_ALG = "ECDH-ES+A256KW"
WEBHOOK_ALG = "ES256"
# Headers that would let a token pick its own key or hide processing rules (the wire contract).
FORBIDDEN_HEADERS = frozenset({"zip", "jku", "jwk", "x5u", "x5c", "x5t", "x5t#S256", "crit"})

_TO_SERVER = {alg: JWERegistry(algorithms=[alg, ENC]) for alg in SERVER_ALGS}
_TO_DEVICE = JWERegistry(algorithms=[DEVICE_ALG, ENC])
_WEBHOOK = JWSRegistry(algorithms=[WEBHOOK_ALG], strict_check_header=False)


def protected_header(compact: str) -> dict[str, Any]:
    """The decoded protected header of a compact JWE or JWS (no verification).

    Raises:
        ValueError: the string is not a compact serialization with a JSON object header.
    """
    if not isinstance(compact, str) or compact.count(".") not in (2, 4):
        raise ValueError("not a compact JOSE serialization")
    try:
        header = json.loads(b64decode(compact.split(".", 1)[0]))
    except (ValueError, TypeError) as exc:
        raise ValueError("the protected header is not base64url JSON") from exc
    if not isinstance(header, dict):
        raise ValueError("the protected header is not a JSON object")
    return header


class Device:
    """One install of the partner app: an id, metadata and an EC P-256 key pair in memory.

    The private key never leaves this object: no accessor returns it, ``repr`` shows only the
    id and the key's RFC 7638 thumbprint, and pickling is refused.

    Example::

        >>> d = Device(device_id="dev-1", platform="ios", model="iPhone15,2", os_version="17.2")
        >>> d.public_jwk()["crv"]
        'P-256'

    Raises:
        ConfigError: an unknown platform.
    """

    PLATFORMS = ("ios", "android", "web")

    def __init__(
        self,
        *,
        device_id: str | None = None,
        platform: str = "ios",
        model: str = "kit-simulated",
        os_version: str = "1.0",
    ) -> None:
        if platform not in self.PLATFORMS:
            raise ConfigError(
                f"device platform {platform!r} is not allowed; allowed: {', '.join(self.PLATFORMS)}"
            )
        self.device_id = device_id or f"dev-{secrets.token_hex(8)}"
        self.platform = platform
        self.model = model
        self.os_version = os_version
        self._key: ECKey = ECKey.generate_key("P-256", parameters={"use": "enc"}, private=True)
        self.kid: str = self._key.thumbprint()

    def __repr__(self) -> str:
        return f"Device(device_id={self.device_id!r}, platform={self.platform!r}, kid={self.kid!r})"

    def __reduce__(self) -> Any:
        raise TypeError("a Device holds a private key and cannot be pickled")

    def metadata(self) -> dict[str, str]:
        """The ``device`` object of the session plaintext (the wire contract)."""
        return {
            "device_id": self.device_id,
            "platform": self.platform,
            "model": self.model,
            "os_version": self.os_version,
        }

    def public_jwk(self) -> dict[str, Any]:
        """The device's public key as a JWK (``use: enc``, ``kid`` = RFC 7638 thumbprint)."""
        jwk = dict(self._key.as_dict(private=False))
        jwk.update({"use": "enc", "kid": self.kid})
        return jwk

    def jwks(self) -> dict[str, Any]:
        """``{"keys": [public JWK]}`` for the session request's ``device_jwks``."""
        return {"keys": [self.public_jwk()]}

    def decrypt(self, token: str, *, label: str = "decrypted") -> Sensitive[Any]:
        """Decrypt a JWE the server made for this device; the JSON plaintext, wrapped.

        Only ``ECDH-ES+A256KW`` + ``A256GCM`` is accepted; ``kid``, when present, must be this
        device's; ``zip``, ``jku``, ``jwk``, ``x5u``, ``x5c`` and ``crit`` are refused.

        Raises:
            CryptoError: for anything else, a malformed string, or a failed tag check.
        """
        try:
            header = protected_header(token)
        except ValueError as exc:
            raise CryptoError("the encrypted data from the server is malformed") from exc
        if token.count(".") != 4:
            raise CryptoError("the encrypted data from the server is not a compact JWE")
        if header.get("alg") != DEVICE_ALG or header.get("enc") != ENC:
            raise CryptoError(
                f"the server's JWE uses {header.get('alg')!r}/{header.get('enc')!r}; "
                f"only {DEVICE_ALG}/{ENC} is accepted"
            )
        if FORBIDDEN_HEADERS & header.keys():
            raise CryptoError("the server's JWE carries a forbidden header")
        if "kid" in header and header["kid"] != self.kid:
            raise CryptoError("the server's JWE is for another key (kid)")
        try:
            obj = jwe.decrypt_compact(token, self._key, registry=_TO_DEVICE)
            value = json.loads(obj.plaintext or b"null")
        except (JoseError, ValueError, TypeError) as exc:
            raise CryptoError("the server's JWE did not decrypt with this device's key") from exc
        return Sensitive(value, label=label)


class _ServerKey(NamedTuple):
    kid: str
    alg: str
    key: Key


class ServerKeys:
    """The server's encryption keys (init data ``jwks``), each JWK imported once.

    Example::

        >>> keys = ServerKeys()
        >>> keys.update(init_data["jwks"])          # doctest: +SKIP
        >>> token = keys.encrypt({"nonce": "..."})   # doctest: +SKIP

    Raises:
        CryptoError: no key for the requested algorithm, or a JWK that does not import.
    """

    def __init__(self) -> None:
        self._by_kid: dict[str, _ServerKey] = {}
        self._fingerprints: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"ServerKeys(kids={sorted(self._by_kid)!r})"

    @property
    def kids(self) -> list[str]:
        return sorted(self._by_kid)

    def update(self, jwks: Mapping[str, Any]) -> None:
        """Import the keys of a JWK set not seen before (a known kid with the same JWK is kept)."""
        for raw in jwks.get("keys") or []:
            if not isinstance(raw, Mapping) or "kid" not in raw:
                continue
            kid = str(raw["kid"])
            fingerprint = json.dumps(raw, sort_keys=True)
            if self._fingerprints.get(kid) == fingerprint:
                continue
            alg = str(raw.get("alg", ""))
            if alg not in SERVER_ALGS:
                continue
            try:
                key: Key
                if raw.get("kty") == "RSA":
                    key = RSAKey.import_key(dict(raw))
                elif raw.get("kty") == "EC":
                    key = ECKey.import_key(dict(raw))
                else:
                    continue
            except (JoseError, ValueError, TypeError) as exc:
                raise CryptoError(f"the server's key {kid!r} does not import") from exc
            self._by_kid[kid] = _ServerKey(kid, alg, key)
            self._fingerprints[kid] = fingerprint

    def select(self, alg: str, kids: list[str] | None = None) -> _ServerKey:
        """The key for ``alg`` among ``kids`` (the ones the latest init data offered)."""
        for entry in self._by_kid.values():
            if entry.alg == alg and (kids is None or entry.kid in kids):
                return entry
        raise CryptoError(f"the server offers no {alg} key in its init data")

    def encrypt(self, plaintext: Any, *, alg: str = SERVER_ALGS[0], kids: list[str] | None = None) -> str:
        """Encrypt a JSON value to the server as a compact JWE (``kid`` set, ``enc`` A256GCM).

        Raises:
            ConfigError: an algorithm outside :data:`SERVER_ALGS`.
            CryptoError: no key for it.
        """
        if alg not in SERVER_ALGS:
            raise ConfigError(f"JWE algorithm {alg!r} is not allowed; allowed: {', '.join(SERVER_ALGS)}")
        entry = self.select(alg, kids)
        body = json.dumps(plaintext, separators=(",", ":")).encode()
        header = {"alg": alg, "enc": ENC, "kid": entry.kid}
        try:
            return jwe.encrypt_compact(header, body, entry.key, registry=_TO_SERVER[alg])
        except (JoseError, ValueError, TypeError) as exc:
            raise CryptoError("encryption to the server's key failed") from exc


def _import_okp(raw: dict[str, Any]) -> Key:
    from joserfc.jwk import OKPKey

    return OKPKey.import_key(raw)


#: A signature algorithm's key type and importer (A24's choice, or a dialect's).
_KEY_TYPES: dict[str, tuple[str, Callable[[dict[str, Any]], Key]]] = {
    "ES256": ("EC", ECKey.import_key),
    "ES384": ("EC", ECKey.import_key),
    "RS256": ("RSA", RSAKey.import_key),
    "PS256": ("RSA", RSAKey.import_key),
    "EdDSA": ("OKP", _import_okp),
    "Ed25519": ("OKP", _import_okp),
}


class WebhookKeys:
    """The server's webhook signing keys (``GET /webhooks/jwks``), each imported once.

    Example::

        >>> keys = WebhookKeys({"keys": []})
        >>> keys.kids
        []
    """

    def __init__(self, jwks: Mapping[str, Any] | None = None, *, algorithm: str = WEBHOOK_ALG) -> None:
        self._by_kid: dict[str, Key] = {}
        #: The one algorithm a signature may use (A24: ES256, or a dialect's).
        self.algorithm = algorithm
        self._registry = _WEBHOOK if algorithm == WEBHOOK_ALG else signing_registry(algorithm)
        if jwks:
            self.update(jwks)

    def __repr__(self) -> str:
        return f"WebhookKeys(kids={self.kids!r})"

    @property
    def kids(self) -> list[str]:
        return sorted(self._by_kid)

    def update(self, jwks: Mapping[str, Any]) -> None:
        """Import the keys of the algorithm's type (by kid) not seen before: EC for ES256 and
        ES384, RSA for RS256 and PS256, OKP for EdDSA."""
        kty, importer = _KEY_TYPES[self.algorithm]
        for raw in jwks.get("keys") or []:
            if not isinstance(raw, Mapping) or "kid" not in raw or raw.get("kty") != kty:
                continue
            kid = str(raw["kid"])
            if kid in self._by_kid:
                continue
            try:
                self._by_kid[kid] = importer(dict(raw))
            except (JoseError, ValueError, TypeError):
                continue

    def verify_detached(self, signature: str, payload: bytes) -> dict[str, Any]:
        """Verify an RFC 7515 Appendix F detached JWS (of :attr:`algorithm`) over ``payload``;
        return its header.

        Raises:
            SignatureMalformed: not ``header..signature`` with a JSON header.
            SignatureInvalid: another alg, ``b64``/``crit`` present, unknown kid, bad signature.
        """
        parts = signature.split(".")
        if len(parts) != 3 or parts[1] != "" or not parts[0] or not parts[2]:
            raise SignatureMalformed("the signature is not a detached JWS (header..signature)")
        try:
            header = protected_header(signature)
        except ValueError as exc:
            raise SignatureMalformed("the signature's protected header is not JSON") from exc
        if header.get("alg") != self.algorithm:
            raise SignatureInvalid(
                f"signature algorithm {header.get('alg')!r}; only {self.algorithm} is accepted"
            )
        if "b64" in header or "crit" in header:
            raise SignatureInvalid("the signature carries b64 or crit; neither is accepted")
        kid = header.get("kid")
        key = self._by_kid.get(kid) if isinstance(kid, str) else None
        if key is None:
            raise UnknownSigningKey(f"signing key {kid!r} is not in the JWK set")
        try:
            jws.deserialize_compact(signature, key, registry=self._registry, payload=payload)
        except (JoseError, ValueError, TypeError) as exc:
            raise SignatureInvalid("the signature does not verify") from exc
        return header
