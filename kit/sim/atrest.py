"""Credentials at rest: the server's own secret, what it keeps of a token, and the stored answers
that hold one.

Each server has a secret of 32 random bytes that never enters a state file or a snapshot
(:class:`Sealer`): ``kit serve --state FILE`` keeps it in ``FILE.key`` beside the file
(owner-only), so a restarted server is the same server; a server in memory draws its own.

A partner or session token is kept only as its digest under that secret (HMAC-SHA256 with a key
derived from it, :meth:`Sealer.digest`), in memory, in a state file and in a snapshot: a server
looks a presented token up by its digest, so it still accepts the tokens it issued after a
restart, and a file holds none that could be used. Nobody without the secret can make a digest
the server would accept: a token digest planted in a snapshot, or brought from another server
by a restore, authenticates nothing (register A45, A71).

An idempotent answer that carries a clear token (the ``session_token`` of an anonymous session
or of a promotion, replayed byte for byte by A20) is kept sealed: AES-GCM under the secret
(:meth:`Sealer.seal`). A snapshot restored on another server holds answers sealed by a secret
that server does not have: they are dropped, and their idempotency keys can be used again.

A server whose keys must not follow from its seed (named partners, or bound beyond loopback)
derives them from the secret too (:meth:`Sealer.derive`, ``kit.sim.crypto``).

    >>> sealer = Sealer.in_memory()
    >>> len(sealer.digest("ses_abc")), sealer.digest("ses_abc") == Sealer.in_memory().digest("ses_abc")
    (64, False)
    >>> sealer.open(sealer.seal(b"{}"))
    b'{}'
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.hmac import HMAC

__all__ = ["KEY_SUFFIX", "Sealer", "is_digest"]

#: The key file of a state file: ``FILE`` + this suffix, beside it.
KEY_SUFFIX = ".key"
_KEY_BYTES = 32
_NONCE_BYTES = 12


def is_digest(key: object) -> bool:
    """Whether ``key`` has the form of a token digest, 64 lower-case hex digits (a state file of
    format 3 or older keeps the tokens themselves)."""
    return isinstance(key, str) and len(key) == 64 and all(c in "0123456789abcdef" for c in key)


class Sealer:
    """A server's secret: it seals and opens stored answers (AES-256-GCM), digests tokens
    (:meth:`digest`) and derives other secrets (:meth:`derive`); ``key_id`` names it."""

    def __init__(self, key: bytes) -> None:
        if len(key) != _KEY_BYTES:
            raise ValueError("a sealing key has 32 bytes")
        self._key = key
        self._aead = AESGCM(key)
        self.key_id = hashlib.sha256(b"kit-sim-seal:" + key).hexdigest()[:16]
        # HMAC's keyed state, made once and copied per token (three times a session): hmac.digest
        # would look the hash up in OpenSSL's provider tables again for each one, and the standard
        # library's HMAC object wraps each copy in Python calls where cryptography's has none.
        self._token_mac = HMAC(self.derive("token-digest"), SHA256())

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

    def digest(self, token: str) -> str:
        """What the server keeps instead of ``token``: its HMAC-SHA256 under a key derived from
        the secret, in hex (64 digits)."""
        mac = self._token_mac.copy()
        mac.update(token.encode("utf-8", "surrogatepass"))
        return mac.finalize().hex()

    def derive(self, purpose: str) -> bytes:
        """A 32-byte secret for ``purpose``, derived from this one (HMAC-SHA256): the same
        secret gives the same, and none of them tells another or the secret."""
        return hmac.digest(self._key, b"kit-sim:" + purpose.encode("ascii"), "sha256")

    def seal(self, data: bytes) -> bytes:
        nonce = os.urandom(_NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, data, self.key_id.encode())

    def open(self, sealed: bytes) -> bytes:
        """The sealed bytes (``cryptography``'s InvalidTag if this key did not seal them)."""
        return self._aead.decrypt(sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:], self.key_id.encode())
