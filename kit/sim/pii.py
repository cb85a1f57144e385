"""Clear-text PII judged by meaning: field names compared word by word with the register's list.

The spec accepts personal data "only encrypted". A request body that names a field as
personal data, in any spelling, at any depth, is refused (step 9 of the order of checks,
register A11). A field name is cut into words at separators (``_ - . space`` and anything
else that is not a letter or digit), at case changes (``dateOfBirth``, ``SSNNumber``) and
between letters and digits, then lower-cased. It is personal data when some run of its words,
joined, is one of the register's names joined the same way: ``dateOfBirth``, ``DATE-OF-BIRTH``
and ``customer_date_of_birth`` all hold ``dateofbirth``; ``internationalId`` and ``adobe`` do not
hold ``nationalid`` or ``dob``. Values are never read, only names.

The cost is linear in the body: each name is cut once (cached for short names) and only runs
of at most as many words as the longest register name are tried.

    >>> pii_path({"details": {"items": [{"note": "x"}, {"dateOfBirth": "1990-01-01"}]}})
    ('details', 'items', 1, 'dateOfBirth')
    >>> pii_path({"memo": "lunch", "device_id": "dev-1"}) is None
    True
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from kit import register

#: The register's names and synonyms of personal data, in words (A11).
PII_NAMES: list[str] = list(register.value("A11")["pii_names"])
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_CACHED_UP_TO = 64  # longer names are cut every time rather than kept
_CACHE_SIZE = 4096


def words(name: str) -> list[str]:
    """``name`` cut into lower-case words: ``words("dateOfBirth") == ["date", "of", "birth"]``."""
    return [w.lower() for w in _WORD.findall(unicodedata.normalize("NFKC", name))]


_JOINED = frozenset("".join(words(n)) for n in PII_NAMES)
_LONGEST = max(len(words(n)) for n in PII_NAMES)


def _holds_pii(name: str) -> bool:
    parts = words(name)
    for start in range(len(parts)):
        joined = ""
        for part in parts[start : start + _LONGEST]:
            joined += part
            if joined in _JOINED:
                return True
    return False


_known: dict[str, bool] = {}  # the verdicts on short names, at most _CACHE_SIZE of them


def is_pii_name(name: str) -> bool:
    """Whether the field name ``name`` names personal data (see the module's rule)."""
    verdict = _known.get(name)
    if verdict is None:
        verdict = _holds_pii(name)
        if len(name) <= _CACHED_UP_TO and len(_known) < _CACHE_SIZE:
            _known[name] = verdict
    return verdict


def pii_path(value: Any) -> tuple[Any, ...] | None:
    """The path of a field named as personal data in ``value``, or None: an object's own names
    are read before its children's, objects and arrays in order. No recursion: no stack limit."""
    stack: list[tuple[Any, _Link]] = [(value, None)]
    while stack:
        item, link = stack.pop()
        if isinstance(item, dict):
            for key in item:
                if isinstance(key, str) and is_pii_name(key):
                    return _path((key, link))
            children = [
                (child, (key, link)) for key, child in item.items() if isinstance(child, (dict, list))
            ]
        elif isinstance(item, list):
            children = [
                (child, (index, link)) for index, child in enumerate(item) if isinstance(child, (dict, list))
            ]
        else:
            continue
        stack.extend(reversed(children))
    return None


#: A path built only when it is needed: (key or index, the parent's link).
_Link = tuple[Any, "_Link"] | None


def _path(link: _Link) -> tuple[Any, ...]:
    parts: list[Any] = []
    while link is not None:
        parts.append(link[0])
        link = link[1]
    return tuple(reversed(parts))
