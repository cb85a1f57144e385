"""The names of secret fields a leak scan looks under: the kit's (``access_token``,
``session_token``, ``client_secret``… in any spelling) and a dialect's (:class:`SecretNames`);
the kind of each is the recorder's (:func:`kit._redaction.secret_kind`), so a token is named
alike in the wire log and in a leak report."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kit._redaction import secret_kind

__all__ = ["SecretNames"]

#: What a token is made of, in a field's value.
_TOKEN_CHARS = r"[A-Za-z0-9._~+/-]"
_FIELD = re.compile(
    r"""(?i)["']?\b((?:access|refresh|id|session)[_-]?token|client[_-]?secret)["']?"""
    rf"""\s*[:=]\s*["']({_TOKEN_CHARS}{{8,}}=*)["']"""
)

#: The fields :data:`_FIELD` finds, by the kind the one table of secret names gives each.
_FIELD_KIND = {
    name: str(secret_kind(name))
    for name in ("access_token", "refresh_token", "id_token", "session_token", "client_secret")
}
_FIELD_KINDS = {name.replace("_", ""): kind for name, kind in _FIELD_KIND.items()}


def _field_pattern(names: Mapping[str, str]) -> re.Pattern[str]:
    """:data:`_FIELD` with a dialect's names of secret fields as well (normalised: any case,
    with or without ``_`` and ``-``)."""
    if names.keys() == _FIELD_KINDS.keys():
        return _FIELD
    extra = "|".join("[_-]?".join(map(re.escape, name)) for name in sorted(set(names) - set(_FIELD_KINDS)))
    return re.compile(
        rf"""(?i)["']?\b((?:access|refresh|id|session)[_-]?token|client[_-]?secret|{extra})["']?"""
        rf"""\s*[:=]\s*["']({_TOKEN_CHARS}{{8,}}=*)["']"""
    )


def _field_name(name: str) -> str:
    """A field name in one spelling, lower case without ``_`` and ``-`` (``sessionToken``,
    ``Session-Token`` and ``session_token`` are ``sessiontoken``)."""
    return name.lower().replace("_", "").replace("-", "")


@dataclass(frozen=True)
class SecretNames:
    """A dialect's names of the secret fields (:mod:`kit._dialect`: a camelCase or renamed
    ``session_token``), handed to a scan among its secrets: a token under one of them is found
    as under the kit's own name.

    Example::

        >>> from kit import _choices, _dialect
        >>> from kit.regress.scanner import Scanner
        >>> renamed = _dialect.Dialect.of(_choices.parse({"A68": {"renames": {"session_token": "sid"}}}))
        >>> names = SecretNames.of(renamed)
        >>> [k for k, _, _ in Scanner([names], (), {}).matches('{"sid": "Zk3vQ9xLw2Rb7Tn1Yp5H"}')]
        ['session-token']
    """

    kinds: Mapping[str, str]

    @classmethod
    def of(cls, dialect: Any) -> SecretNames:
        """The names ``dialect`` (a :class:`kit._dialect.Dialect`) gives the secret fields."""
        spelled = {_field_name(dialect.name_to_wire(name)): kind for name, kind in _FIELD_KIND.items()}
        return cls({name: kind for name, kind in spelled.items() if name not in _FIELD_KINDS})
