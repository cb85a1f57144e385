"""Clear-text PII judged by meaning, not by a list of spellings (A11).

The seed accepts personal data "only encrypted" (rule.3, auth.4). A request is refused when it
holds personal data in clear, wherever it is: a field of a JSON body at any depth, in objects and
arrays, a query parameter or a form field.

A field is personal data by its **name**: the name is cut into words at separators (``_ - .``,
space, anything not a letter or digit), at case changes (``dateOfBirth``, ``SSNNumber``) and
between letters and digits, lower-cased (after NFKC), and each word's abbreviation expanded
(``dob`` → date of birth, ``ssn`` → social security number, ``no``/``num``/``nr`` → number,
``nat`` → national, ``dt`` → date, ``identifier``/``identification``/``identity`` → id…, the
register's ``abbreviations``). It names personal data when a run of its words is one of the
register's concepts (date of birth, national id number, social security number, passport
number, first name…; compared joined, so ``birthdate`` is birth date) and what follows the run,
if anything, only names a part of it (``ssn_last4``, ``dob_year``): the concept is the head of the
name. A name where the concept only qualifies something else (``birthday_reminder_enabled``,
``dob_verified``) is not personal data, and neither is a boolean or null value under any name.

A string **value** is personal data, under any name and inside free text (a P2P memo), when it
holds a number shaped like a national identification number (``NNN-NN-NNNN``, the personas'
format, or with spaces). A date alone is not: dates are everywhere.

The refusal names where (a JSON Pointer, or the query or form parameter's name) and never what:
nothing submitted is echoed. The cost is linear in the request: each name is cut once (short
names cached), and only runs of at most as many words as the longest concept are tried.

    >>> pii_path({"details": {"items": [{"note": "x"}, {"dateOfBirth": "1990-01-01"}]}})
    ('details', 'items', 1, 'dateOfBirth')
    >>> pii_path({"memo": "lunch", "birthday_reminder_enabled": True, "dob_verified": "yes"}) is None
    True
    >>> pii_path({"memo": "my number is 000-12-3456"})
    ('memo',)
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from kit import register

_RULE = register.value("A11")
#: The concepts of personal data, in words (A11).
PII_NAMES: list[str] = list(_RULE["pii_names"])
#: Abbreviations and synonyms, word → the words it stands for (A11).
ABBREVIATIONS: dict[str, list[str]] = {k: v.split() for k, v in _RULE["abbreviations"].items()}
#: Words that, after a concept, only name a part of it (``ssn_last4``); digits count too (A11).
PART_WORDS = frozenset(_RULE["part_words"])
#: A number shaped like a national identification number (A11), inside any text.
NATIONAL_ID_SHAPE = re.compile(_RULE["national_id_pattern"])

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_CACHED_UP_TO = 64  # longer names are judged every time rather than kept
_CACHE_SIZE = 4096


def words(name: str) -> list[str]:
    """``name`` cut into lower-case words: ``words("dateOfBirth") == ["date", "of", "birth"]``."""
    return [w.lower() for w in _WORD.findall(unicodedata.normalize("NFKC", name))]


def expanded(name: str) -> list[str]:
    """The words of ``name`` with abbreviations expanded and a repeated word once:
    ``expanded("SSNNumber") == ["social", "security", "number"]``."""
    out: list[str] = []
    for word in words(name):
        for part in ABBREVIATIONS.get(word, [word]):
            if not out or out[-1] != part:
                out.append(part)
    return out


def _joined(name: str) -> str:
    return "".join(expanded(name))


_CONCEPTS = frozenset(_joined(n) for n in PII_NAMES)
_LONGEST = max(len(expanded(n)) for n in PII_NAMES)


def _is_part(word: str) -> bool:
    return word.isdigit() or word in PART_WORDS


def _holds_pii(name: str) -> bool:
    parts = expanded(name)
    for start in range(len(parts)):
        joined = ""
        for end in range(start, min(start + _LONGEST, len(parts))):
            joined += parts[end]
            if joined in _CONCEPTS and all(_is_part(w) for w in parts[end + 1 :]):
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


#: What every number of that shape holds: a separator, two digits, a separator. Searched first:
#: a JWE (hundreds of characters) is ruled out about 7 times faster than by the pattern itself,
#: whose look-behind is tried at every position. The verdicts are the pattern's.
#: (Only for the register's pattern as it is: another pattern is searched on its own.)
_HINTED = r"(?<![0-9])[0-9]{3}([- ])[0-9]{2}\1[0-9]{4}(?![0-9])"
_SHAPE_HINT = re.compile(r"[- ][0-9]{2}[- ]" if NATIONAL_ID_SHAPE.pattern == _HINTED else "")


def is_pii_value(value: Any) -> bool:
    """Whether ``value`` is a string holding a number shaped like a national identification number."""
    return (
        isinstance(value, str)
        and _SHAPE_HINT.search(value) is not None
        and NATIONAL_ID_SHAPE.search(value) is not None
    )


def _is_pii_field(name: Any, value: Any) -> bool:
    """A field named as personal data (unless its value is a flag or null), or holding one."""
    if isinstance(name, str) and is_pii_name(name) and not isinstance(value, bool) and value is not None:
        return True
    return is_pii_value(value)


def pii_path(value: Any) -> tuple[Any, ...] | None:
    """The path of the first field of ``value`` that is personal data, or None: an object's own
    fields are read before its children's, objects and arrays in order. A key shaped like a
    national identification number is reported by its parent's path (never echoed). No
    recursion: no stack limit."""
    if is_pii_value(value):
        return ()
    stack: list[tuple[Any, _Link]] = [(value, None)]
    while stack:
        item, link = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                if is_pii_value(key):
                    return _path(link)
                if _is_pii_field(key, child):
                    return _path((key, link))
            children = [
                (child, (key, link)) for key, child in item.items() if isinstance(child, (dict, list))
            ]
        elif isinstance(item, list):
            for index, child in enumerate(item):
                if is_pii_value(child):
                    return _path((index, link))
            children = [
                (child, (index, link)) for index, child in enumerate(item) if isinstance(child, (dict, list))
            ]
        else:
            continue
        stack.extend(reversed(children))
    return None


def pii_parameter(items: Iterable[tuple[str, str]]) -> str | None:
    """The name of the first query or form parameter that is personal data, or None; a name
    shaped like a national identification number is reported as ``"?"`` (never echoed)."""
    for name, value in items:
        if is_pii_value(name):
            return "?"
        if _is_pii_field(name, value):
            return name
    return None


#: A path built only when it is needed: (key or index, the parent's link).
_Link = tuple[Any, "_Link"] | None


def _path(link: _Link) -> tuple[Any, ...]:
    parts: list[Any] = []
    while link is not None:
        parts.append(link[0])
        link = link[1]
    return tuple(reversed(parts))
