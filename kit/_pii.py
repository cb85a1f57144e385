"""Clear-text PII judged by meaning, not by a list of spellings (A11).

The spec accepts personal data "only encrypted" (rule.3, auth.4). A request is refused when it
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
format, or with spaces). A date alone is not: dates are everywhere. By what is near it, a value
is personal data when it holds (each shape a pattern of the register, each list of words its)

- a date, in digits (``1990-01-01``, ``01/31/1990``, ``31.01.1990``: ``date_pattern``) or with
  its month in words (``14 March 1950``, ``March 14, 1950``, ``14th of Mar 1950``:
  ``date_in_words_pattern``), under a name that holds a word meaning birth (``born_on``,
  ``dob_verified``: ``birth_words``, after the abbreviations, a plural too), or with such a word
  among the ``nearness`` words before or after it in the text (``"born 14 March 1950"``);
- a run of nine digits, dashed or not (``123456789``, ``123-45-6789``: ``nine_digits_pattern``),
  or a national insurance number (``AB123456C``: ``national_insurance_pattern``), under a name
  meaning a national id (``tax_id_ref``, ``ni``) or with a word meaning one among the
  ``nearness`` words before or after it in the text (``"ssn 123456789"``, ``"my Social Security
  number is …"``: ``national_id_words``);
- a tax number (``12-3456789``: ``tax_number_pattern``) under a name or near a word meaning
  tax or a national id (``tax_words``: ``{"tax": "12-3456789"}``, ``"EIN 12-3456789"``);
- in text only, a run of nine digits with the word id among the ``id_nearness`` (two) words
  before it (``"id 000000001"``, ``"ID no. 123456789"``: ``id_words``); under a field's own
  name (``order_id``) an id is a record's, not a person's.

A body's own ``encrypted_*`` field holding a compact JWE is ciphertext: its route decrypts it,
or refuses it as invalid encrypted data (step 11 of the order of checks), so neither its name
nor the words in it are read; a national id's shape in it still is, as under any name.

What stays best effort: personal data in other shapes (a year or a month alone, a national id
of another length or format, a name or an address in free text) and words the register does
not list.

The refusal names where (a JSON Pointer, or the query or form parameter's name) and never what:
nothing submitted is echoed. The cost is linear in the request: each name is cut once (short
names cached), and only runs of at most as many words as the longest concept are tried.

    >>> pii_path({"details": {"items": [{"note": "x"}, {"dateOfBirth": "1990-01-01"}]}})
    ('details', 'items', 1, 'dateOfBirth')
    >>> pii_path({"memo": "lunch", "birthday_reminder_enabled": True, "dob_verified": "yes"}) is None
    True
    >>> pii_path({"memo": "my number is 000-12-3456"})
    ('memo',)
    >>> pii_path({"note": "ssn 123456789"}), pii_path({"born_on": "1990-01-01"})
    (('note',), ('born_on',))
    >>> pii_path({"note": "born 14 March 1950"}), pii_path({"note": "id 000000001"})
    (('note',), ('note',))
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any, NamedTuple

from kit import register
from kit._jose import is_jwe
from kit._lazy import LazyPattern

_RULE = register.value("A11")
#: The concepts of personal data, in words (A11).
PII_NAMES: list[str] = list(_RULE["pii_names"])
#: Abbreviations and synonyms, word → the words it stands for (A11).
ABBREVIATIONS: dict[str, list[str]] = {k: v.split() for k, v in _RULE["abbreviations"].items()}
#: Words that, after a concept, only name a part of it (``ssn_last4``); digits count too (A11).
PART_WORDS = frozenset(_RULE["part_words"])
#: A number shaped like a national identification number (A11), inside any text. Each shape is
#: compiled when a text first gets past its quick test (most never do: no digit, no separator).
NATIONAL_ID_SHAPE = LazyPattern(_RULE["national_id_pattern"])
#: The shapes that are personal data by what is near them (A11): a date, in digits or with its
#: month in words; a run of nine digits (dashed or not); a national insurance and a tax number.
DATE = LazyPattern(_RULE["date_pattern"])
DATE_IN_WORDS = LazyPattern(_RULE["date_in_words_pattern"])
NINE_DIGITS = LazyPattern(_RULE["nine_digits_pattern"])
NATIONAL_INSURANCE = LazyPattern(_RULE["national_insurance_pattern"])
TAX_NUMBER = LazyPattern(_RULE["tax_number_pattern"])
#: How many words away from such a shape a word meaning birth, a national id or tax counts.
NEARNESS: int = int(_RULE["nearness"])
#: How many words before nine digits the word id counts (in text only).
ID_NEARNESS: int = int(_RULE["id_nearness"])
_LETTERS = re.compile(r"[^\W\d_]+")
_WINDOW = 64 * NEARNESS  # characters either side where those words are looked for

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
_NEAR_WORDS = ("birth_words", "national_id_words", "tax_words", "id_words")
_LONGEST_NEAR = max(len(expanded(w)) for key in _NEAR_WORDS for w in _RULE[key])


def _concepts(*keys: str) -> frozenset[str]:
    return frozenset(_joined(w) for key in keys for w in _RULE[key])


class _Near(NamedTuple):
    """A shape that is personal data beside one of ``words``: among the ``before`` words before
    it or the ``after`` words after it in the text, or in the field's name when ``by_name``.
    ``needs``, when set, is what every text the shape matches holds too, found far faster: a
    string without it (a JWE, a token) is not searched for the shape itself."""

    shape: LazyPattern
    words: frozenset[str]
    before: int
    after: int
    by_name: bool = True
    needs: re.Pattern[str] | None = None


#: What the shapes' matches hold (tests/sim/test_sim_pii_context.py holds each to its shape):
#: four digits in a row (a date's year); four digits after a separator (the year of a date in
#: words, the last four of nine digits, or a fifth digit); a dash and seven digits (a tax number).
_FOUR_DIGITS = re.compile(r"[0-9]{4}")
_SEPARATED_YEAR = re.compile(r"[\s,./-][0-9]{4}")
_LAST_FOUR = re.compile(r"[0-9 -][0-9]{4}")
_DASH_SEVEN = re.compile(r"-[0-9]{7}")

_BIRTH, _NATIONAL_ID = _concepts("birth_words"), _concepts("national_id_words")
_TAX, _ID = _concepts("tax_words", "national_id_words"), _concepts("id_words")
_NEAR: tuple[_Near, ...] = (
    _Near(DATE, _BIRTH, NEARNESS, NEARNESS, needs=_FOUR_DIGITS),
    _Near(DATE_IN_WORDS, _BIRTH, NEARNESS, NEARNESS, needs=_SEPARATED_YEAR),
    _Near(NINE_DIGITS, _NATIONAL_ID, NEARNESS, NEARNESS, needs=_LAST_FOUR),
    _Near(NATIONAL_INSURANCE, _NATIONAL_ID, NEARNESS, NEARNESS),
    _Near(TAX_NUMBER, _TAX, NEARNESS, NEARNESS, needs=_DASH_SEVEN),
    _Near(NINE_DIGITS, _ID, ID_NEARNESS, 0, by_name=False, needs=_LAST_FOUR),  # an order_id is a record's own
)


def _mentions(parts: list[str], concepts: frozenset[str]) -> bool:
    """Whether a run of ``parts`` (expanded words) is one of ``concepts`` (joined)."""
    for start in range(len(parts)):
        joined = ""
        for end in range(start, min(start + _LONGEST_NEAR, len(parts))):
            joined += parts[end]
            if joined in concepts or (joined.endswith("s") and joined[:-1] in concepts):
                return True
    return False


def _near(text: str, start: int, end: int, rule: _Near) -> bool:
    """Whether a word of ``rule`` is among its words before, or its words after, ``text[start:end]``."""
    before = _LETTERS.findall(text, max(0, start - _WINDOW), start)[-rule.before :] if rule.before else []
    after = _LETTERS.findall(text, end, end + _WINDOW)[: rule.after]
    sides = (before, after)
    return any(_mentions([w for token in side for w in expanded(token)], rule.words) for side in sides)


#: What every shape of :data:`_NEAR` holds (a date's year, an id's digits): a text without a
#: digit (a session type, a status, a name) has none of them, and is not searched for each.
_ANY_DIGIT = re.compile(r"\d")


#: The shapes that need nothing first (a national insurance number): the only ones searched in a
#: text without four digits in a row, which every ``needs`` of :data:`_NEAR` holds (tested), so
#: a key, a nonce or a version number is searched once for them, not once for each shape.
_NEEDS_NOTHING = tuple(rule for rule in _NEAR if rule.needs is None)


def is_pii_in_context(name: Any, value: Any) -> bool:
    """Whether the string ``value`` under ``name`` holds a shape that is personal data by the
    name or the words near it: a birth date, a national id, a tax number (the module's rule)."""
    if not isinstance(value, str) or _ANY_DIGIT.search(value) is None:
        return False
    rules = _NEAR if _FOUR_DIGITS.search(value) is not None else _NEEDS_NOTHING
    named: list[str] | None = None  # the name's words, cut when a shape is first found
    first: dict[LazyPattern, re.Match[str] | None] = {}  # a shape two rules share is searched once
    for rule in rules:
        if rule.needs is not None and rule.needs.search(value) is None:
            continue
        if rule.shape not in first:
            first[rule.shape] = rule.shape.search(value)
        found = first[rule.shape]
        if found is None:
            continue
        if rule.by_name and isinstance(name, str):
            if named is None:
                named = expanded(name)
            if named and _mentions(named, rule.words):
                return True
        while found is not None:
            if _near(value, found.start(), found.end(), rule):
                return True
            found = rule.shape.search(value, found.end())
    return False


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


#: What every number of that shape holds: a separator, two digits, the same separator again.
#: Searched first, as two patterns that each begin with their separator (found by a quick scan,
#: and only when the text holds that separator at all): a JWE (hundreds of characters) is ruled
#: out about six times faster than by one pattern beginning with a class, and about twenty
#: times faster than by the pattern itself, whose look-behind is tried at every position. The
#: verdicts are the pattern's. (Only for the register's pattern as it is: another pattern is
#: searched on its own.)
_HINTED = r"(?<![0-9])[0-9]{3}([- ])[0-9]{2}\1[0-9]{4}(?![0-9])"
_HINTS_APPLY = NATIONAL_ID_SHAPE.pattern == _HINTED
_DASHED, _SPACED = re.compile(r"-[0-9]{2}-"), re.compile(r" [0-9]{2} ")


def is_pii_value(value: Any) -> bool:
    """Whether ``value`` is a string holding a number shaped like a national identification number."""
    if not isinstance(value, str):
        return False
    if _HINTS_APPLY and not (
        ("-" in value and _DASHED.search(value) is not None)
        or (" " in value and _SPACED.search(value) is not None)
    ):
        return False
    return NATIONAL_ID_SHAPE.search(value) is not None


def _is_pii_field(name: Any, value: Any) -> bool:
    """A field named as personal data (unless its value is a flag or null), or holding one."""
    if isinstance(name, str) and is_pii_name(name) and not isinstance(value, bool) and value is not None:
        return True
    return is_pii_value(value) or is_pii_in_context(name, value)


#: The fields a route decrypts (step 11) are named so; any other the schema refuses (step 10).
ENCRYPTED_PREFIX = "encrypted_"


def _is_ciphertext(name: Any, value: Any) -> bool:
    """A body's own ``encrypted_*`` field holding a compact JWE: ciphertext, no words to judge
    (the route decrypts it, or refuses it as invalid encrypted data, at step 11)."""
    return (
        isinstance(name, str)
        and name.startswith(ENCRYPTED_PREFIX)
        and isinstance(value, str)
        and is_jwe(value)
    )


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
                if link is None and _is_ciphertext(key, child):
                    if is_pii_value(child):  # a national id's shape: personal data under any name
                        return _path((key, link))
                    continue
                if _is_pii_field(key, child):
                    return _path((key, link))
            children = [
                (child, (key, link)) for key, child in item.items() if isinstance(child, (dict, list))
            ]
        elif isinstance(item, list):
            named = link[0] if link is not None else None  # the array's own name, if any
            for index, child in enumerate(item):
                if is_pii_value(child) or is_pii_in_context(named, child):
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
