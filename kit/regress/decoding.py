"""What the leak scan decodes before it matches (:class:`kit.regress.scanner.Scanner`): each
span of a text that decodes to another text, and a JSON document held as a string.

The decodings: percent escapes (a URL's query, a form body: ``%2F``, ``+`` for a space), JSON
string escapes (``\\/``, ``\\u0073``, ``\\"``), an HTTP Basic value (``client_id:secret``)
and other base64 or base64url runs of 16 characters or more that decode to printable text.
The scanner matches each decoded span again, up to :data:`DEPTH` decodings deep. HTML character
references (``&#115;``, ``&#x73;``, ``&quot;``: a page, a notebook's HTML output) are decoded
over the whole text, each match placed back where its characters were written
(:func:`html_matches`): what is found there is read with all its context, as a phrase of the
kit's own words (:mod:`kit.regress.owntext`) needs.

Example::

    >>> [decoded for _, _, decoded in decodings("Authorization: Basic aWQ6czNjcjN0")]
    ['id:s3cr3t']
    >>> html_matches("<td>&#115;3cr3t</td>", lambda t: [("secret", t.index("s3"), t.index("s3") + 6)])
    [('secret', 4, 15)]
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote_plus

__all__ = ["DEPTH", "decodings", "html_matches", "json_document"]

_MIN_TEXT = 4  # a decoded text shorter than the shortest secret looked for holds none

#: How deep decodings nest (base64 of a percent-encoded form, a JSON escape in a Basic value).
DEPTH = 2
# A percent escape, and a JSON string escape (``\/``, ``\u0041``, ``\"``): each decoded over
# the whole word that holds it (a URL's query, a form body, a JSON string).
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_ESCAPE = re.compile(r"""\\(u[0-9A-Fa-f]{4}|["\\/bfnrt])""")
_PERCENT_WORD_END = re.compile(r"""[\s"'<>]""")
_WORD_END = re.compile(r"\s")
# An HTML character reference, as html.unescape finds one (``&#115;``, ``&#x73;``, ``&quot;``,
# ``&amp`` without its semicolon).
_REFERENCE = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)")
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
# An HTTP Basic value (any length: ``id:secret`` of a short secret is short), and any other
# base64 or base64url run long enough to hide a secret (up to 16 KiB: not an embedded image).
_BASIC = re.compile(r"(?i)\bBasic\s+([A-Za-z0-9+/_-]{4,}={0,2})")
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}")
_BASE64_MAX = 16384


def json_document(text: str) -> Any:
    """``text`` parsed, when it is a JSON object or array (else ``None``)."""
    stripped = text.strip()
    if not (stripped[:1] == "{" and stripped[-1:] == "}") and not (
        stripped[:1] == "[" and stripped[-1:] == "]"
    ):
        return None
    try:
        found = json.loads(stripped)
    except ValueError:
        return None
    return found if isinstance(found, dict | list) and found else None


def _unescaped(word: str) -> str:
    return _ESCAPE.sub(lambda m: chr(int(m[1][1:], 16)) if m[1][0] == "u" else _ESCAPES.get(m[1], m[1]), word)


def _base64_text(run: str) -> str | None:
    """The text a base64 or base64url run encodes, when it is printable UTF-8 (a secret, a
    form, JSON), else ``None`` (random bytes: an id, a key, a picture)."""
    core = run.rstrip("=")
    if len(core) % 4 == 1:
        return None
    padded = core + "=" * (-len(core) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if len(text) < _MIN_TEXT or not all(c.isprintable() or c in "\t\n\r" for c in text):
        return None
    return text


def _words_with(text: str, pattern: re.Pattern[str], end: re.Pattern[str]) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each word of ``text`` (ended by ``end``'s characters) holding a match
    of ``pattern``, once each; linear in the text, however long its words."""
    last = -1
    for m in pattern.finditer(text):
        if m.start() < last:
            continue  # in the word just given
        stop = end.search(text, m.end())
        last = stop.start() if stop else len(text)
        start = m.start()
        while start > 0 and not end.match(text, start - 1):
            start -= 1
        yield start, last


def decodings(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, decoded)`` of each span of ``text`` that decodes to another text: percent
    escapes, JSON string escapes, an HTTP Basic value and other base64 runs (HTML character
    references: :func:`html_matches`)."""
    if "%" in text:
        for start, end in _words_with(text, _PERCENT, _PERCENT_WORD_END):
            yield start, end, unquote_plus(text[start:end])
    if "\\" in text:
        for start, end in _words_with(text, _ESCAPE, _WORD_END):
            yield start, end, _unescaped(text[start:end])
    for m in _BASIC.finditer(text):
        decoded = _base64_text(m[1])
        if decoded is not None:
            yield m.start(1), m.end(1), decoded
    for m in _BASE64.finditer(text):
        if m.end() - m.start() > _BASE64_MAX:
            continue
        decoded = _base64_text(m.group())
        if decoded is not None:
            yield m.start(), m.end(), decoded


def html_matches(text: str, match: Callable[[str], list[tuple[str, int, int]]]) -> list[tuple[str, int, int]]:
    """``match``'s ``(kind, start, end)`` in ``text`` with its HTML character references decoded
    (:func:`html.unescape`), each placed over the characters of ``text`` it was decoded from;
    none when ``text`` holds no reference."""
    parts: list[str] = []
    origin: list[int] = []  # where each decoded character was written in ``text``
    last = 0
    for m in _REFERENCE.finditer(text) if "&" in text else ():
        decoded = html.unescape(m.group())
        if decoded != m.group():
            parts += [text[last : m.start()], decoded]
            origin += [*range(last, m.start()), *[m.start()] * len(decoded)]
            last = m.end()
    if not parts:
        return []
    origin += [*range(last, len(text) + 1)]
    return [(kind, origin[start], origin[end]) for kind, start, end in match("".join(parts) + text[last:])]
