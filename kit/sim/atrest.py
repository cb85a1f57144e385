"""Credentials at rest: what the simulator keeps of a token, and the stored answers that hold one.

A partner or session token is kept only as its SHA-256 digest (:func:`token_digest`), in memory,
in a state file and in a snapshot: a server looks a presented token up by its digest, so it
still accepts the tokens it issued after a restart, and a file holds none that could be used.

An idempotent answer that carries a clear token (the ``session_token`` of an anonymous session
or of a promotion, replayed byte for byte by A20) is kept sealed: AES-GCM under a key that never
enters a state file or a snapshot (:class:`Sealer`). ``kit serve --state FILE`` keeps the key in
``FILE.key`` beside it (owner-only), so a restarted server replays its own stored answers; a
server in memory holds a key of its own. A snapshot restored on another server holds answers
sealed by a key that server does not have: they are dropped, and their idempotency keys can be
used again (register A45).

    >>> len(token_digest("ses_abc"))
    64
    >>> sealer = Sealer.in_memory()
    >>> sealer.open(sealer.seal(b"{}"))
    b'{}'
"""

from __future__ import annotations

import hashlib
import os
import stat

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["KEY_SUFFIX", "Sealer", "is_digest", "token_digest"]

#: The key file of a state file: ``FILE`` + this suffix, beside it.
KEY_SUFFIX = ".key"
_KEY_BYTES = 32
_NONCE_BYTES = 12


def token_digest(token: str) -> str:
    """The hex SHA-256 of ``token``: what the simulator keeps instead of the token."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def is_digest(key: object) -> bool:
    """Whether ``key`` is a :func:`token_digest` (a state file of format 3 or older keeps the
    tokens themselves)."""
    return isinstance(key, str) and len(key) == 64 and all(c in "0123456789abcdef" for c in key)


class Sealer:
    """Seals and opens stored answers with one AES-256-GCM key; ``key_id`` names the key."""

    def __init__(self, key: bytes) -> None:
        if len(key) != _KEY_BYTES:
            raise ValueError("a sealing key has 32 bytes")
        self._aead = AESGCM(key)
        self.key_id = hashlib.sha256(b"kit-sim-seal:" + key).hexdigest()[:16]

    @classmethod
    def in_memory(cls) -> Sealer:
        """A key of this process only (a server without a state file)."""
        return cls(os.urandom(_KEY_BYTES))

    @classmethod
    def beside(cls, state_file: str) -> Sealer:
        """The key kept beside ``state_file`` (created owner-only when missing). A key file that
        is not owner-only, not this user's, or not a key is replaced: answers sealed with the old
        one are then dropped at load, never opened with a key others could have read or set."""
        path = state_file + KEY_SUFFIX
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            info = None
        if info is not None:
            private = (
                stat.S_ISREG(info.st_mode)
                and info.st_uid == getattr(os, "getuid", lambda: None)()  # no owner to check: replaced
                and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
                and info.st_size == _KEY_BYTES
            )
            if private:
                with open(path, "rb") as f:
                    return cls(f.read())
            os.unlink(path)
        key = os.urandom(_KEY_BYTES)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key)
        return cls(key)

    def seal(self, data: bytes) -> bytes:
        nonce = os.urandom(_NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, data, self.key_id.encode())

    def open(self, sealed: bytes) -> bytes:
        """The sealed bytes (``cryptography``'s InvalidTag if this key did not seal them)."""
        return self._aead.decrypt(sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:], self.key_id.encode())
