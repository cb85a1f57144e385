"""The short path of RSA-OAEP-256 JWEs (``kit.sim.crypto._short_path``): the same verdicts as
joserfc's, token by token.

The short path decrypts the common token with ``cryptography``'s primitives and hands anything
else to joserfc; so for every token below, valid, tampered or oddly built, ``SimKeys.decrypt``
must give joserfc's plaintext, or refuse where joserfc refuses.
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from joserfc import jwe
from joserfc.jwk import RSAKey

from kit.sim import crypto
from kit.sim.crypto import CryptoError, SimKeys
from kit.sim.state import keys_for

_REGISTRY = jwe.JWERegistry(algorithms=["RSA-OAEP-256", "A256GCM"])


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _keys() -> SimKeys:
    return keys_for(7)


def _public(keys: SimKeys) -> RSAKey:
    return RSAKey.import_key(keys.rsa.as_dict(private=False))


def _token(keys: SimKeys, plaintext: bytes = b'{"nonce":"n"}', **extra: Any) -> str:
    header = {"alg": "RSA-OAEP-256", "enc": "A256GCM", "kid": keys.rsa_kid, **extra}
    return jwe.encrypt_compact(header, plaintext, _public(keys), registry=_REGISTRY)


def _built(keys: SimKeys, *, cek_bytes: int = 32, iv_bytes: int = 12, colon: str = ": ") -> str:
    """A JWE put together by hand: a CEK and IV of any size, for what joserfc would not make, its
    header written with ``colon`` between each name and value."""
    header = {"alg": "RSA-OAEP-256", "enc": "A256GCM", "kid": keys.rsa_kid}
    protected = _b64(json.dumps(header, separators=(", ", colon)).encode())
    cek, iv = os.urandom(cek_bytes), os.urandom(iv_bytes)
    encrypted_key = keys.rsa.public_key.encrypt(cek, crypto._OAEP_256)
    sealed = AESGCM(cek).encrypt(iv, b'{"nonce":"n"}', protected.encode())
    return ".".join([protected, _b64(encrypted_key), _b64(iv), _b64(sealed[:-16]), _b64(sealed[-16:])])


def _flip(token: str, segment: int) -> str:
    parts = token.split(".")
    raw = bytearray(base64.urlsafe_b64decode(parts[segment] + "=" * (-len(parts[segment]) % 4)))
    raw[len(raw) // 2] ^= 0x01
    parts[segment] = _b64(bytes(raw))
    return ".".join(parts)


def _with(token: str, segment: int, value: str) -> str:
    parts = token.split(".")
    parts[segment] = value
    return ".".join(parts)


def _joserfc_verdict(keys: SimKeys, token: str) -> bytes | None:
    try:
        return jwe.decrypt_compact(token, keys.rsa, registry=_REGISTRY).plaintext or b""
    except Exception:
        return None


def _ours(keys: SimKeys, token: str) -> bytes | None:
    try:
        return keys.decrypt(token)
    except CryptoError:
        return None


def _cases(keys: SimKeys) -> dict[str, str]:
    good = _token(keys)
    return {
        "valid": good,
        "valid, empty plaintext": _token(keys, b""),
        "valid, typ (joserfc's path)": _token(keys, typ="JWE"),
        **{f"segment {i} flipped": _flip(good, i) for i in range(1, 5)},
        "iv padded": _with(good, 2, good.split(".")[2] + "="),
        "iv with '+'": _with(good, 2, good.split(".")[2].replace("-", "+").replace("_", "+")),
        "tag cut short": _with(good, 4, good.split(".")[4][:-4]),
        "tag empty": _with(good, 4, ""),
        "iv of 16 bytes": _built(keys, iv_bytes=16),
        "CEK of 16 bytes": _built(keys, cek_bytes=16),
        "hand-built, standard sizes": _built(keys),
        "encrypted key empty": _with(good, 1, ""),
        "ciphertext empty": _with(good, 3, ""),
        "non-ASCII segment": _with(good, 3, "é" + good.split(".")[3]),
        "header padded": _with(good, 0, good.split(".")[0] + "="),
    }


@pytest.mark.parametrize("name", list(_cases(keys_for(7))))
def test_the_short_path_gives_joserfc_s_verdict(name: str) -> None:
    keys = _keys()
    token = _cases(keys)[name]
    assert _ours(keys, token) == _joserfc_verdict(keys, token)


def test_the_common_token_takes_the_short_path(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = _keys()
    token = _token(keys)
    expected = _joserfc_verdict(keys, token)
    asked: list[str] = []
    decrypt_compact = crypto.jwe.decrypt_compact

    def counted(value: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(value)
        return decrypt_compact(value, *args, **kwargs)

    monkeypatch.setattr(crypto.jwe, "decrypt_compact", counted)
    assert expected is not None and keys.decrypt(token) == expected
    assert asked == []  # decrypted without joserfc
    with pytest.raises(CryptoError):
        keys.decrypt(_flip(token, 4))
    assert asked == [_flip(token, 4)]  # a refusal is joserfc's to make


def test_every_verdict_is_the_same_with_the_headers_read_before() -> None:
    keys = SimKeys.from_seed(7)  # its own instance: nothing remembered yet
    cases = _cases(keys)
    expected = {name: _joserfc_verdict(keys, token) for name, token in cases.items()}
    cold = {name: _ours(keys, token) for name, token in cases.items()}
    assert keys._short_headers  # the common header, remembered on the way
    warm = {name: _ours(keys, token) for name, token in cases.items()}
    assert cold == expected and warm == expected


def test_a_header_the_short_path_took_is_not_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = SimKeys.from_seed(7)
    read: list[str] = []
    read_header = SimKeys._read_header

    def counted(self: SimKeys, segment: str) -> tuple[str, bool]:
        read.append(segment)
        return read_header(self, segment)

    monkeypatch.setattr(SimKeys, "_read_header", counted)
    first, second = _token(keys, b"one"), _token(keys, b"two")
    assert first.split(".")[0] == second.split(".")[0]
    assert (keys.decrypt(first), keys.decrypt(second)) == (b"one", b"two")
    assert read == [first.split(".")[0]]
    # a header with more than alg, enc and kid goes to joserfc, and is read every time
    typed = _token(keys, b"typed", typ="JWE")
    assert keys.decrypt(typed) == keys.decrypt(typed) == b"typed"
    assert read[1:] == [typed.split(".")[0]] * 2


def test_a_refused_header_is_never_remembered() -> None:
    keys = SimKeys.from_seed(7)
    other = keys_for(8)
    foreign = _token(other)  # another key pair's kid
    forbidden = _token(keys, jku="https://attacker.example/keys")
    for token in (foreign, forbidden, foreign, forbidden):
        with pytest.raises(CryptoError):
            keys.decrypt(token)
    assert not keys._short_headers


def test_the_headers_remembered_are_bounded_in_number_and_length() -> None:
    keys = SimKeys.from_seed(7)

    def spaced(spaces: int) -> str:
        """A token whose header is the common one, written with ``spaces`` after each colon."""
        return _built(keys, colon=":" + " " * spaces)

    for spaces in range(crypto._HEADERS_REMEMBERED + 1):
        assert keys.decrypt(spaced(spaces)) == b'{"nonce":"n"}'
        assert 1 <= len(keys._short_headers) <= crypto._HEADERS_REMEMBERED
    keys._short_headers.clear()
    long = spaced(110)  # a segment of about 550 characters, within joserfc's 1,024-byte header
    assert len(long.split(".")[0]) > crypto._HEADER_REMEMBERED_CHARS
    assert keys.decrypt(long) == b'{"nonce":"n"}' and not keys._short_headers
