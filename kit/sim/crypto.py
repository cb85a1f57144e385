"""The simulator's JOSE: the only simulator module importing joserfc (register A04, A24).

Keys are derived from the seed, so the same seed publishes the same JWK set (and the same
``kid`` values) run after run; a server whose keys must not follow from its seed (named partners,
or bound beyond loopback: ``Settings.secret_keys``) derives them from its secret instead
(:meth:`SimKeys.from_secret`), and those never go to the key cache. Every decrypt and verify
allow-lists its algorithms, and the protected header is checked here before joserfc sees the
token: joserfc, given a single key, ignores the token's ``kid`` and the key's ``alg``. The common
token (RSA-OAEP-256, A256GCM, a header of ``alg``, ``enc`` and ``kid``) is decrypted with
``cryptography``'s primitives as joserfc decrypts it (``_short_path``); anything else, and every
refusal, is joserfc's.

The payloads it seals and opens are spelled as the simulator's dialect spells them, through one
object (:class:`Payloads`): the member names inside a JWE to a device or a webhook's signed body
(A68), a partner's decrypted JWE read back in the simulator's names, the webhook signature's
header and algorithm (A24).

    >>> keys = SimKeys.from_seed(7)  # doctest: +SKIP
    >>> keys.decrypt(token)  # a client's JWE to keys.encryption_jwks()  # doctest: +SKIP
    b'{"nonce": ...}'
"""

from __future__ import annotations

import hashlib
import hmac
import json
from functools import cached_property, lru_cache
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from joserfc import jwe, jws
from joserfc.jwk import ECKey, RSAKey
from joserfc.util import urlsafe_b64decode as _strict_b64decode

from kit import register
from kit._dialect import DEFAULT, Dialect
from kit._headers import HeaderNames
from kit._jose import b64decode, signing_registry
from kit.sim.keycache import load_private, seeded_rsa_pem

_KEYS = register.value("A04")
(CONTENT_ENCRYPTION,) = _KEYS["content_encryption"]
RSA_ALG, EC_ALG = _KEYS["key_algorithms"]
RSA_BITS = int(_KEYS["rsa_bits"])
SIGNING_ALG: str = register.value("A24")["algorithm"]
# Header parameters a client JWE may carry; anything else (zip, jku, jwk, x5u, x5c, crit…)
# is refused (A04).
_ALLOWED_JWE_HEADERS = frozenset({"alg", "enc", "kid", "epk", "apu", "apv", "typ", "cty"})
_P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
#: A device as the simulator knows it: its id and the RFC 7638 thumbprint of its key.
DeviceId = tuple[str, str]


# One registry per allowed algorithm, built once (an allow-list at every decrypt).
_FROM_CLIENT = {alg: jwe.JWERegistry(algorithms=[alg, CONTENT_ENCRYPTION]) for alg in (RSA_ALG, EC_ALG)}


#: RSA-OAEP-256's padding (RFC 7518 4.3), as joserfc decrypts it.
_OAEP_256 = padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
#: The header of the JWEs the short path takes (what the kit and the SDKs send); any other goes
#: to joserfc whole.
_SHORT_PATH_HEADER = frozenset({"alg", "enc", "kid"})
#: How many such headers a key pair remembers, and the longest remembered (``SimKeys._read_header``).
_HEADERS_REMEMBERED = 64
_HEADER_REMEMBERED_CHARS = 512


def _short_path(private_key: RSAPrivateKey, parts: list[str], registry: jwe.JWERegistry) -> bytes | None:
    """The plaintext of a compact RSA-OAEP-256 + A256GCM JWE whose header is checked already,
    decrypted with ``cryptography``'s primitives as joserfc decrypts it (RFC 7516 5.2), or None.

    Beside the RSA decrypt, joserfc's own checks and objects cost a measurable share of a
    session. FIXES: "the common RSA-OAEP-256 + A256GCM JWE ... decrypted with cryptography's
    primitives" (parity: ``tests/sim/test_sim_jwe_short_path.py``). This path accepts only
    what joserfc accepts with the same plaintext: the same size limits (the registry's own
    checks), the same strict base64url, a 96-bit IV, a 128-bit tag, a 256-bit CEK, the
    protected header as the AAD. On anything else, or any failure, it answers None and joserfc
    decides, so every refusal stays joserfc's.
    """
    try:
        header, encrypted_key, iv, ciphertext, tag = (part.encode("ascii") for part in parts)
        registry.validate_protected_header_size(header)
        registry.validate_encrypted_key_size(encrypted_key)
        registry.validate_initialization_vector_size(iv)
        registry.validate_ciphertext_size(ciphertext)
        registry.validate_auth_tag_size(tag)
        _strict_b64decode(header)  # as joserfc reads it (the parsed header was checked already)
        iv_bytes, tag_bytes = _strict_b64decode(iv), _strict_b64decode(tag)
        if len(iv_bytes) != 12 or len(tag_bytes) != 16:
            return None
        cek = private_key.decrypt(_strict_b64decode(encrypted_key), _OAEP_256)
        if len(cek) != 32:
            return None
        return AESGCM(cek).decrypt(iv_bytes, _strict_b64decode(ciphertext) + tag_bytes, header)
    except Exception:  # joserfc's verdict, whatever it is
        return None


class CryptoError(Exception):
    """A JWE that must be refused. The message is for logs only, never the wire."""


class DeviceKeyError(Exception):
    """A device JWK set that is not exactly one public EC P-256 key."""


def _seeded_ec(seed: int, purpose: str) -> ECKey:
    digest = hashlib.sha256(f"kit-sim:{seed}:{purpose}".encode()).digest()
    scalar = int.from_bytes(digest, "big") % (_P256_ORDER - 1) + 1
    return ECKey.import_key(ec.derive_private_key(scalar, ec.SECP256R1()))


@lru_cache(maxsize=8)  # as keys_for: the last few seeds, not every seed a shared server saw
def _seeded_rsa(seed: int) -> RSAKey:
    # generated once per seed and user, then read from the cache (kit.sim.keycache)
    return RSAKey.import_key(load_private(seeded_rsa_pem(seed, RSA_BITS)))


def _secret_ec(secret: bytes, purpose: str) -> ECKey:
    digest = hmac.digest(secret, f"kit-sim:ec:{purpose}".encode(), "sha256")
    scalar = int.from_bytes(digest, "big") % (_P256_ORDER - 1) + 1
    return ECKey.import_key(ec.derive_private_key(scalar, ec.SECP256R1()))


def _secret_rsa(secret: bytes) -> RSAKey:
    """The RSA key of a secret: pycryptodome's generation drawing from a SHAKE-256 stream of it
    (the same secret, the same key; nobody without it can derive it). Never cached on disk."""
    from Crypto.Hash import SHAKE256
    from Crypto.PublicKey import RSA

    stream = SHAKE256.new(b"kit-sim:rsa:" + secret)
    return RSAKey.import_key(load_private(RSA.generate(RSA_BITS, randfunc=stream.read).export_key("PEM")))


class SimKeys:
    """The simulator's own key pairs: its encryption keys (their public halves published in
    init data, which a client reads as :class:`kit.crypto.ServerKeys`) and its webhook signing
    key; ``seeded``: derived from a seed (anyone knowing it can derive them), else from a secret."""

    def __init__(self, rsa: RSAKey, ec: ECKey, signing: ECKey, seeded: bool = True) -> None:
        self.rsa, self.ec, self.signing, self.seeded = rsa, ec, signing, seeded

    @classmethod
    def from_seed(cls, seed: int) -> SimKeys:
        return cls(
            rsa=_seeded_rsa(seed),
            ec=_seeded_ec(seed, "enc"),
            signing=_seeded_ec(seed, "sig"),
        )

    @classmethod
    def from_secret(cls, secret: bytes) -> SimKeys:
        """Keys derived from a server's secret (32 random bytes, ``kit.sim.atrest``)."""
        return cls(
            rsa=_secret_rsa(secret),
            ec=_secret_ec(secret, "enc"),
            signing=_secret_ec(secret, "sig"),
            seeded=False,
        )

    def __repr__(self) -> str:  # keys never appear in a repr
        return f"SimKeys(kids={[self.rsa_kid, self.ec_kid, self.signing_kid]})"

    @cached_property
    def _rsa_private(self) -> RSAPrivateKey:
        key = self.rsa.private_key
        assert isinstance(key, RSAPrivateKey)
        return key

    @cached_property  # a thumbprint per request was measurable: compute it once
    def rsa_kid(self) -> str:
        return "enc-rsa-" + self.rsa.thumbprint()[:16]

    @cached_property  # a thumbprint per request was measurable: compute it once
    def ec_kid(self) -> str:
        return "enc-ec-" + self.ec.thumbprint()[:16]

    @cached_property  # a thumbprint per request was measurable: compute it once
    def signing_kid(self) -> str:
        return "sig-ec-" + self.signing.thumbprint()[:16]

    def encryption_jwks(self) -> dict[str, Any]:
        """Public JWK set of init data: RSA-2048 (RSA-OAEP-256) and EC P-256 (ECDH-ES+A256KW), A04."""
        return json.loads(self._encryption_jwks_json)  # a fresh copy: callers may change it

    @cached_property
    def encryption_jwks_compact(self) -> bytes:
        """:meth:`encryption_jwks` as every JSON answer encodes it (compact, UTF-8), made once:
        init data splices it into its body rather than copying and encoding the modulus again."""
        return json.dumps(
            json.loads(self._encryption_jwks_json), separators=(",", ":"), ensure_ascii=False
        ).encode()

    @cached_property
    def _encryption_jwks_json(self) -> str:
        # Serializing the RSA modulus for every init data request was measurable: do it once.
        return json.dumps(
            {
                "keys": [
                    {**self.rsa.as_dict(private=False), "kid": self.rsa_kid, "use": "enc", "alg": RSA_ALG},
                    {**self.ec.as_dict(private=False), "kid": self.ec_kid, "use": "enc", "alg": EC_ALG},
                ]
            }
        )

    def signer(self, algorithm: str = SIGNING_ALG) -> tuple[Any, str]:
        """The webhook signing key for ``algorithm`` (A24; a dialect may choose another) and its
        kid. ES256's is :attr:`signing`; the others are derived from it, the same run after run."""
        if algorithm == SIGNING_ALG:
            return self.signing, self.signing_kid
        found = self._signers.get(algorithm)
        if found is None:
            key = _derived_signing_key(self.signing, algorithm, cached=self.seeded)
            found = self._signers[algorithm] = (key, f"sig-{algorithm.lower()}-" + key.thumbprint()[:16])
        return found

    @cached_property
    def _signers(self) -> dict[str, tuple[Any, str]]:
        return {}

    def signing_jwks(self, algorithm: str = SIGNING_ALG) -> dict[str, Any]:
        """Public JWK set for webhook signatures (``GET /webhooks/jwks``)."""
        key, kid = self.signer(algorithm)
        return {"keys": [{**key.as_dict(private=False), "kid": kid, "use": "sig", "alg": algorithm}]}

    def decrypt(self, token: object) -> bytes:
        """Decrypt a client JWE sent to one of our keys, or raise :class:`CryptoError`."""
        if not isinstance(token, str):
            raise CryptoError("not a string")
        parts = token.split(".")
        if len(parts) != 5:
            raise CryptoError("not a compact JWE")
        if parts[0] in self._short_headers:
            alg, short = RSA_ALG, True
        else:
            alg, short = self._read_header(parts[0])
        if short:
            plaintext = _short_path(self._rsa_private, parts, _FROM_CLIENT[alg])
            if plaintext is not None:
                return plaintext
        key: RSAKey | ECKey = self.rsa if alg == RSA_ALG else self.ec
        try:
            return jwe.decrypt_compact(token, key, registry=_FROM_CLIENT[alg]).plaintext or b""
        except Exception as exc:  # joserfc raises JoseError, ValueError and others
            raise CryptoError(type(exc).__name__) from exc

    def _read_header(self, segment: str) -> tuple[str, bool]:
        """The algorithm a JWE's protected header names for one of our keys, and whether the
        short path may take the token; a :class:`CryptoError` for a header refused (A04).

        A header the short path takes (``alg``, ``enc`` and our RSA key's ``kid``, nothing
        else) is remembered, so that the next token with the same header is not read again: a
        client sends the same one every time. Only accepted headers are remembered, at most
        :data:`_HEADERS_REMEMBERED` (then forgotten together), each of at most
        :data:`_HEADER_REMEMBERED_CHARS`; the short path still checks the segment's encoding.
        FIXES: "a JWE header the short path took is not read again".
        """
        try:
            header = json.loads(b64decode(segment))
        except (ValueError, UnicodeDecodeError) as exc:
            raise CryptoError("unreadable protected header") from exc
        if not isinstance(header, dict):
            raise CryptoError("protected header is not an object")
        extra = set(header) - _ALLOWED_JWE_HEADERS
        if extra:
            raise CryptoError(f"forbidden header parameters {sorted(extra)}")
        if header.get("enc") != CONTENT_ENCRYPTION:
            raise CryptoError("content encryption not allowed")
        kid, alg = header.get("kid"), header.get("alg")
        if kid == self.ec_kid and alg == EC_ALG:
            return alg, False
        if kid != self.rsa_kid or alg != RSA_ALG:
            raise CryptoError("unknown kid or algorithm not allowed for it")
        short = header.keys() <= _SHORT_PATH_HEADER
        if short and len(segment) <= _HEADER_REMEMBERED_CHARS:
            if len(self._short_headers) >= _HEADERS_REMEMBERED:
                self._short_headers.clear()
            self._short_headers.add(segment)
        return alg, short

    @cached_property
    def _short_headers(self) -> set[str]:
        """The protected headers (encoded) the short path took before (:meth:`_read_header`)."""
        return set()

    def sign_detached(self, payload: bytes, *, iat: int, event_id: str, algorithm: str = SIGNING_ALG) -> str:
        """An RFC 7515 Appendix F detached JWS (``header..signature``) over ``payload``."""
        key, kid = self.signer(algorithm)
        protected = {"alg": algorithm, "kid": kid, "iat": iat, "svc_event_id": event_id}
        compact = jws.serialize_compact(protected, payload, key, registry=signing_registry(algorithm))
        header, _, signature = compact.split(".")
        return f"{header}..{signature}"


def _derived_signing_key(signing: ECKey, algorithm: str, *, cached: bool = True) -> Any:
    """A signing key for ``algorithm`` derived from the ES256 key (deterministic); an RSA one
    goes to the key cache only when ``cached`` (a seeded key: never one derived from a secret)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from joserfc.jwk import OKPKey

    private = signing.private_key
    assert isinstance(private, ec.EllipticCurvePrivateKey)
    digest = hashlib.sha256(
        f"kit-sim:sig:{algorithm}:{private.private_numbers().private_value}".encode()
    ).digest()
    if algorithm in ("EdDSA", "Ed25519"):
        return OKPKey.import_key(Ed25519PrivateKey.from_private_bytes(digest))
    if algorithm == "ES384":
        order = (
            0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973
        )
        scalar = int.from_bytes(digest + hashlib.sha256(digest).digest(), "big") % (order - 1) + 1
        return ECKey.import_key(ec.derive_private_key(scalar, ec.SECP384R1()))
    if not cached:
        return _secret_rsa(digest)
    return RSAKey.import_key(load_private(seeded_rsa_pem(int.from_bytes(digest[:6], "big"), RSA_BITS)))


def device_key(jwks: object) -> tuple[ECKey, str]:
    """The device's public EC P-256 key and its RFC 7638 thumbprint, or DeviceKeyError."""
    if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list) or len(jwks["keys"]) != 1:
        raise DeviceKeyError("device_jwks must hold exactly one key")
    jwk = jwks["keys"][0]
    if not isinstance(jwk, dict) or jwk.get("kty") != "EC" or jwk.get("crv") != "P-256":
        raise DeviceKeyError("not an EC P-256 key")
    if "d" in jwk:
        raise DeviceKeyError("a private key was sent")
    if jwk.get("use", "enc") != "enc":
        raise DeviceKeyError("key use is not enc")
    x, y = jwk.get("x"), jwk.get("y")
    if not isinstance(x, str) or not isinstance(y, str):
        raise DeviceKeyError("x and y must be strings")
    return _device_key(x, y)


@lru_cache(maxsize=4096)
def _device_key(x: str, y: str) -> tuple[ECKey, str]:
    # A device presents its key on every session it creates or promotes: imported and
    # thumbprinted once (benchmarks/bench.py FIXES, benchmark 1). Keyed by the point alone,
    # so the cache cannot mix up keys; failures are not cached (they raise).
    try:
        key = ECKey.import_key({"kty": "EC", "crv": "P-256", "x": x, "y": y})
        key.public_key  # noqa: B018 - forces the point onto the curve check
    except Exception as exc:
        raise DeviceKeyError(type(exc).__name__) from exc
    return key, key.thumbprint()


def encrypt_to_device(key: ECKey, payload: dict[str, Any]) -> str:
    """A JWE (ECDH-ES+A256KW, A256GCM) of ``payload`` to the device's public key."""
    protected = {"alg": EC_ALG, "enc": CONTENT_ENCRYPTION, "kid": key.thumbprint()}
    registry = jwe.JWERegistry(algorithms=[EC_ALG, CONTENT_ENCRYPTION])
    return jwe.encrypt_compact(protected, json.dumps(payload).encode(), key, registry=registry)


class Payloads:
    """The payloads the simulator seals and opens, spelled as ``dialect`` spells them (the
    personality's): the one place of its crypto, and of its routes, that reads the dialect.

        >>> Payloads().seal({"session_token": "t"})
        {'session_token': 't'}
    """

    def __init__(self, dialect: Dialect = DEFAULT) -> None:
        self.dialect = dialect
        #: The wire's header names (A24's signature, A27's version on a delivery).
        self.headers = HeaderNames.of(dialect)
        #: The algorithm a webhook delivery is signed with, and its keys published for (A24).
        self.signing_algorithm: str = dialect.chosen("A24", "algorithm")

    def seal(self, payload: dict[str, Any]) -> dict[str, Any]:
        """``payload`` (the simulator's member names) as it is sealed: a JWE's content or a
        webhook's signed body, in the dialect's names (A68)."""
        sealed: dict[str, Any] = self.dialect.to_wire(payload)
        return sealed

    def seal_to(self, key: ECKey, payload: dict[str, Any]) -> str:
        """A JWE of ``payload`` to the device ``key`` (:func:`encrypt_to_device`), its member
        names the dialect's (A68)."""
        return encrypt_to_device(key, self.seal(payload))

    def open(self, payload: dict[str, Any]) -> dict[str, Any]:
        """A payload opened (a partner's decrypted JWE, a delivery's body read back) in the
        simulator's member names (A68)."""
        opened: dict[str, Any] = self.dialect.from_wire(payload)
        return opened
