"""The kit's own words: the texts it renders, so that the leak scan can tell a fixture value
quoted inside them from the same value printed as data.

A partner's fixtures are full of short values (a year, four digits) that the kit's own texts
also hold: the register's A11 gives ``1990/1/31`` as an example date, and a notebook may show
its text (:func:`kit.notebook.entries_used` links it). The kit's own texts are the
register's entries (every text and value, :func:`kit.register.assumptions`), the spec's
statements and its verbatim text (:func:`kit.register.statements`,
:func:`kit.register.seed_text`) and the OpenAPI documents' strings (descriptions, the contract's
words) — never the personas, which are data.

A match is **inside the kit's own words** when it and :data:`CONTEXT_WORDS` words on each side
of it appear, in that order, in one of those texts. Texts are compared as runs of letters and
digits: markup (``<code>``, ``<p>``), HTML escapes (``&quot;``), punctuation, backticks and line
breaks do not count, so the register's text is recognised however it is rendered (the table's
HTML, a text output, a wrapped line). A value printed as data — a table cell, ``answer: 1990``,
a JSON field — has markup or labels of its own around it, not a sentence of the kit's.

Example::

    >>> import html
    >>> quoted = html.escape('a date (`date_pattern`: 1990-01-01, 1990/1/31, 01/31/1990) under a name')
    >>> start = quoted.index("1990/")
    >>> inside(quoted, start, start + 4), inside("<td>1990</td>", 4, 8)
    (True, False)
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import Any

from kit import register

__all__ = ["CONTEXT_WORDS", "inside", "occurs", "quoted", "words"]

#: How many words on each side of a match must be the kit's own text around it.
CONTEXT_WORDS = 3
# What is read around a match, at most, to find its words (markup can be long: a table's style).
_REACH = 400
_WORD = re.compile(r"[^\W_]+")
_TAG = re.compile(r"<[^<>]*>")


def words(text: str) -> list[str]:
    """The runs of letters and digits of ``text``, markup and HTML escapes undone.

    Example::

        >>> words("<code>date_pattern</code>: 1990/1/31, &quot;born&quot;")
        ['date', 'pattern', '1990', '1', '31', 'born']
    """
    return _WORD.findall(html.unescape(_TAG.sub(" ", text)))


def _strings(item: Any) -> Iterator[str]:
    if isinstance(item, str):
        yield item
    elif isinstance(item, dict):
        for key, value in item.items():
            yield from _strings(key)
            yield from _strings(value)
    elif isinstance(item, list | tuple):
        for value in item:
            yield from _strings(value)


def _texts() -> Iterator[str]:
    """Every text the kit renders of its own (see the module docstring)."""
    yield from _strings(register.assumptions())
    yield from _strings(register.statements())
    yield register.seed_text()
    for document in sorted(register.data_dir().glob("openapi*.json")):
        try:
            yield from _strings(json.loads(document.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue  # an unreadable document adds no words


@cache
def _corpus() -> str:
    """The kit's texts as words, one text a line, each word between spaces."""
    lines = dict.fromkeys(" ".join(words(text)) for text in _texts())  # the same text once
    return "\n".join(f" {line} " for line in lines if line)


@lru_cache(maxsize=4096)
def occurs(value: str) -> bool:
    """Whether ``value``'s words appear in the kit's own texts at all (when they do not, no
    match of it can be inside them).

    Example::

        >>> occurs("1990"), occurs("Specimen")
        (True, False)
    """
    found = words(value)
    return bool(found) and f" {' '.join(found)} " in _corpus()


def _before(text: str, start: int) -> list[str] | None:
    """The :data:`CONTEXT_WORDS` whole words before ``start``, or ``None`` when there are fewer."""
    part = text[max(0, start - _REACH) : start]
    cut = start > _REACH  # the first word read may be the end of a longer one
    close, opened = part.find(">"), part.find("<")
    if cut and close >= 0 and (opened < 0 or close < opened):
        part, cut = part[close + 1 :], False  # read from inside a tag: start after it
    found = words(part)[1:] if cut else words(part)
    return found[-CONTEXT_WORDS:] if len(found) >= CONTEXT_WORDS else None


def _after(text: str, end: int) -> list[str] | None:
    """The :data:`CONTEXT_WORDS` whole words after ``end``, or ``None`` when there are fewer."""
    part = text[end : end + _REACH]
    cut = end + _REACH < len(text)  # the last word read may be the start of a longer one
    opened, close = part.rfind("<"), part.rfind(">")
    if cut and opened > close:
        part, cut = part[:opened], False  # ends inside a tag: stop before it
    found = words(part)[:-1] if cut else words(part)
    return found[:CONTEXT_WORDS] if len(found) >= CONTEXT_WORDS else None


def inside(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is inside the kit's own words (see the module docstring)."""
    before, after = _before(text, start), _after(text, end)
    if before is None or after is None:
        return False
    needle = " ".join([*before, *words(text[start:end]), *after])
    return f" {needle} " in _corpus()


def quoted(text: str, start: int, end: int) -> bool:
    """:func:`inside`, asked only when the match's own words :func:`occurs` in the kit's texts
    (a value that never does, such as a name, costs one lookup of a cache)."""
    return occurs(text[start:end]) and inside(text, start, end)
