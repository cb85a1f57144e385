"""JOSE glue the client and the simulator share: base64url segments, and the registry of one
JWS signature algorithm (joserfc's).

A server's dialect may choose ``EdDSA`` for webhook signatures (A24), an algorithm RFC 9864
deprecates in favour of ``Ed25519``; joserfc warns each time it signs or verifies with it. The
choice is made knowingly, so a registry :func:`signing_registry` builds carries EdDSA without
that warning: the registry's own table, never a warnings filter (which would be the whole
process's, silencing the warning for code outside the kit too).

Example::

    >>> b64decode("eyJhbGciOiJFUzI1NiJ9")
    b'{"alg":"ES256"}'
    >>> signing_registry("ES256").allowed
    ['ES256']
"""

from __future__ import annotations

import base64
import copy
import re
import string
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from joserfc.jws import JWSRegistry

__all__ = ["COMPACT", "b64decode", "is_jwe", "signing_registry"]

#: base64url's alphabet (RFC 4648, section 5): the one spelling both readers below are made from.
_ALPHABET = string.ascii_letters + string.digits + "-_"
_CLASS = re.escape(_ALPHABET)  # the alphabet as the body of a regular expression's class
#: A compact JWS or JWE where it stands in text: a protected header (the base64url of a JSON
#: object, so ``eyJ``), then two to four more segments.
COMPACT = re.compile(rf"(?<![{_CLASS}])eyJ[{_CLASS}]{{4,}}(?:\.[{_CLASS}]*){{2,4}}")
#: The characters of a compact serialization: base64url's and the dot between segments.
_COMPACT_CHARACTERS = (_ALPHABET + ".").encode("ascii")


def is_jwe(value: str) -> bool:
    """Whether ``value`` is, whole, a compact JWE: five segments, the first a JSON header.

    >>> is_jwe("eyJhbGci.a.b.c.d"), is_jwe("eyJhbGci.a.b"), is_jwe("born 1990-01-01")
    (True, False, False)
    """
    # What ``COMPACT.fullmatch`` with four dots says (tested), read without the pattern: a
    # session's body holds a JWE of about a thousand characters, which a byte table crosses
    # about twice as fast.
    return (
        value.count(".") == 4
        and value.startswith("eyJ")
        and value.find(".") >= 7
        and value.isascii()
        and not value.encode("ascii").translate(None, _COMPACT_CHARACTERS)
    )


def b64decode(segment: str) -> bytes:
    """A base64url segment of a compact serialization, its padding restored.

    Raises:
        ValueError: not base64url (:class:`binascii.Error`).
    """
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


def signing_registry(algorithm: str) -> JWSRegistry:
    """A registry allowing only ``algorithm`` (header parameters beyond the registered ones
    allowed: a webhook signature carries the kit's ``iat`` and ``svc_event_id``); ``EdDSA``
    without joserfc's deprecation warning (see the module docstring)."""
    from joserfc.jws import JWSRegistry  # here: b64decode's users (kit choices infer) need none

    registry = JWSRegistry(algorithms=[algorithm], strict_check_header=False)
    if algorithm == "EdDSA" and algorithm in registry.algorithms:
        quiet = copy.copy(registry.algorithms[algorithm])
        quiet.security_warning = None
        registry.algorithms = {**registry.algorithms, algorithm: quiet}  # this registry's only
    return registry
