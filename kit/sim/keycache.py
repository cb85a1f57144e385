"""The simulator's seeded RSA keys, kept per seed in a per-user cache so a new process reads
them instead of generating them again (register A04).

Generating an RSA-2048 key from a seed takes a fifth of a second or more of pure-Python prime
search (pycryptodome with a seeded random source), and every fresh process that starts a
simulator — a notebook's kernel, ``kit serve``, each crypto worker, each population worker —
did it again for the same seed. The key is a function of the seed alone, so the cache changes
no output: a hit is the key generation would give (the file's name carries the seed, the key
size and pycryptodome's version, whose prime search the key depends on), a miss or an
unreadable or foreign file generates it as before.

What is kept is a simulator key, not a partner's secret: anyone who knows the seed (seed 7 is
in every notebook) can derive it. It is still written as a private key should be: a file of
mode 0600 in a directory of mode 0700, written whole or not at all. ``KIT_SIM_KEY_CACHE``
names another directory, or turns the cache off (``off``).

A key read back is checked before it is used, wherever the cache is: the folders and the file
must be the user's and writable by no one else (:func:`kit._cache.private_dir`,
:func:`kit._cache.read_private`: else a :class:`kit._cache.CacheWarning` and the key is
generated again), and the key must be a consistent RSA key of the size asked (:func:`checked`:
``n = p·q``, ``e·d ≡ 1`` modulo ``lcm(p-1, q-1)``, the CRT values those of ``p``, ``q`` and
``d``). A file that fails is generated again and replaced.

    >>> pem = seeded_rsa_pem(7)  # doctest: +SKIP
    >>> pem.startswith(b"-----BEGIN RSA PRIVATE KEY-----")  # doctest: +SKIP
    True
"""

from __future__ import annotations

import hashlib
import math
import os
import random
from pathlib import Path

import Crypto  # the package alone: its version (the prime search the key depends on)
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from kit._cache import private_dir, read_private, user_cache_dir, write_whole

__all__ = ["CACHE_VARIABLE", "cache_dir", "checked", "load_private", "seeded_rsa_pem"]

#: The environment variable naming the cache directory (``off``: no cache).
CACHE_VARIABLE = "KIT_SIM_KEY_CACHE"


def cache_dir() -> Path | None:
    """Where seeded keys are kept: ``$KIT_SIM_KEY_CACHE``, else ``sim-keys`` in the kit's cache
    folder (:func:`kit._cache.user_cache_dir`: ``$XDG_CACHE_HOME/partner-api-kit`` or
    ``~/.cache/partner-api-kit`` on Linux); None when off."""
    chosen = os.environ.get(CACHE_VARIABLE, "").strip()
    if chosen.lower() in ("off", "0", "no", "false"):
        return None
    if chosen:
        return Path(chosen)
    return user_cache_dir() / "sim-keys"


def generate_rsa_pem(seed: int, bits: int) -> bytes:
    """The RSA key of ``seed``, generated (cryptography has no seeded key generation)."""
    from Crypto.PublicKey import RSA  # pycryptodome: only on a miss (its import alone is ~30 ms)

    rng = random.Random(f"kit-sim:{seed}:rsa")
    return bytes(RSA.generate(bits, randfunc=rng.randbytes).export_key("PEM"))


def _file(directory: Path, seed: int, bits: int) -> Path:
    derivation = f"kit-sim:{seed}:rsa:{bits}:pycryptodome-{Crypto.__version__}"
    return directory / f"rsa-{hashlib.sha256(derivation.encode()).hexdigest()[:32]}.pem"


def load_private(pem: bytes) -> rsa.RSAPrivateKey:
    """The key object of a PEM this module wrote or generated. OpenSSL's own check of an RSA key
    (about 50 ms for 2048 bits, more than reading the file) is skipped: the key is ours, written
    by this user's simulator from pycryptodome's generation, and a key read from the cache
    passes :func:`checked` first."""
    key = serialization.load_pem_private_key(pem, None, unsafe_skip_rsa_key_validation=True)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError("not an RSA private key")
    return key


def checked(pem: bytes, bits: int) -> rsa.RSAPrivateKey:
    """The key of ``pem`` when it is a consistent RSA private key of ``bits`` bits: its modulus
    the product of its primes, its private exponent the inverse of the public one, its CRT
    values those of the primes and the exponent (the algebra OpenSSL's check does, without
    re-testing the primes: the file is the user's own, private, in private folders).

    Raises:
        ValueError: not such a key.
    """
    key = load_private(pem)
    numbers = key.private_numbers()
    p, q, d = numbers.p, numbers.q, numbers.d
    n, e = numbers.public_numbers.n, numbers.public_numbers.e
    if key.key_size != bits or min(p, q) < 3 or p == q or p * q != n or not 3 <= e < n:
        raise ValueError("not an RSA key of the size asked")
    if (e * d) % math.lcm(p - 1, q - 1) != 1:
        raise ValueError("the private exponent is not the inverse of the public one")
    if numbers.dmp1 != d % (p - 1) or numbers.dmq1 != d % (q - 1) or (numbers.iqmp * q) % p != 1:
        raise ValueError("the CRT values are not those of the key")
    return key


def _read(path: Path, bits: int, root: Path) -> bytes | None:
    if not private_dir(path.parent, root):
        return None
    pem = read_private(path)
    if pem is None:
        return None
    try:
        checked(pem, bits)
    except (ValueError, TypeError):
        return None  # damaged, or not a key this module wrote: generate it again
    return pem


def _root(directory: Path) -> Path:
    """The cache's top folder: the user's cache, or the folder ``KIT_SIM_KEY_CACHE`` names."""
    top = user_cache_dir()
    return top if directory.is_relative_to(top) else directory


def seeded_rsa_pem(seed: int, bits: int = 2048) -> bytes:
    """The PEM of the seed's RSA key: from the cache when it holds it, else generated (and kept)."""
    directory = cache_dir()
    if directory is None:
        return generate_rsa_pem(seed, bits)
    path = _file(directory, seed, bits)
    root = _root(directory)
    pem = _read(path, bits, root)
    if pem is None:
        pem = generate_rsa_pem(seed, bits)
        write_whole(path, pem, root)
    return pem
