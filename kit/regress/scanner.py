"""The leak scanner's patterns: what a leak looks like, and one compiled :class:`Scanner`.

:mod:`kit.regress.leaks` is the public face (scan a text, a notebook, a file, a DataFrame);
this module holds the kinds of leak, their hints, and the patterns that find them — every
persona's date of birth and national id (from :func:`kit.register.personas`), the secrets the
environment names (:data:`kit._env.SECRET_VARIABLES`, the partners of
:data:`kit._env.SIM_PARTNERS`), the simulator's own client secrets
(:data:`kit._env.SIM_PARTNER_CLIENTS`), compact JOSE strings, session and bearer tokens, the
KYC question texts (register entry A12), and every value of the sandbox fixtures file named by
:data:`kit._env.SANDBOX_FIXTURES` (:mod:`kit._fixtures`: test personas' PII, KYC answers).
A run also hands in the :class:`Fingerprints` of the tokens its kernels used (salted hashes,
never the tokens: :mod:`kit.notebook.wire`), so a partner, session or control token is found
whatever its format.

Short literals (under 12 characters: a four-digit KYC answer, a year) are found only where
they could be the secret: standing alone — a whole JSON string, a table cell, a word of free
text — never inside an id: letters, digits, ``_`` and ``-`` around them (a UUID's hyphens), or
``.`` or ``/`` joining them to a letter or digit (a version, a date such as ``1990/1/31``, a
path) mean they are part of something longer.

A fixture value is not a leak inside the kit's own words: where it and three words on each
side of it are a passage of a text the kit renders (the register, the spec, the OpenAPI
documents: :mod:`kit.regress.owntext`), as the example dates of A11 in every notebook's
closing table. The same value printed as data has no such passage around it.

Example::

    >>> [kind for kind, _, _ in Scanner((), (), {}).matches("born 1950-03-14")]
    ['persona-dob']
"""

from __future__ import annotations

import calendar
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from functools import cache
from typing import Any

from kit import _env as env
from kit import _fixtures as fixtures
from kit._redaction import fingerprint, jose_kind
from kit.errors import FixturesError
from kit.register import personas, value
from kit.regress import owntext
from kit.regress.decoding import DEPTH, decodings, html_matches, json_document
from kit.regress.names import _FIELD_KINDS, SecretNames, _field_name, _field_pattern

__all__ = [
    "ANSI",
    "DEFAULT_CLIENT_SECRETS",
    "HINTS",
    "KYC_QUESTIONS",
    "Finding",
    "Fingerprints",
    "Scanner",
]

#: The simulator's built-in partner client secrets (:data:`kit._env.SIM_PARTNER_CLIENTS`).
DEFAULT_CLIENT_SECRETS: tuple[str, ...] = tuple(env.SIM_PARTNER_CLIENTS.values())

#: The simulator's KYC question texts (register entry A12): they only exist decrypted, so
#: seeing one in an output means a decrypted payload was shown (spec rule 4).
KYC_QUESTIONS: tuple[str, ...] = tuple(value("A12")["question_texts"])

#: What to do about each kind of finding (the text of :attr:`Finding.hint`).
HINTS: Mapping[str, str] = {
    "persona-dob": "a persona's date of birth: keep PII in kit.Sensitive and never print reveal()",
    "persona-national-id": "a persona's national id: keep PII in kit.Sensitive and never print reveal()",
    "client-secret": "a partner client secret: read it from the environment, never print or store it",
    "partner-token": "the partner access token: it lives in the environment or in kit.Sensitive, "
    "never in outputs",
    "control-token": "the simulator's control token: never print or store it",
    "secret": "a value given as secret: never print or store it",
    "jwe": "a JWE ciphertext: show its shape (kit.Sensitive), not the compact string",
    "jws": "a JWS/JWT: show its header or shape, not the compact string",
    "jws-detached": "a detached JWS signature: show whether it verified, not the signature",
    "jose": "a JOSE-looking compact string: do not print tokens or ciphertexts",
    "session-token": "a session token: keep it in kit.Sensitive, never print it",
    "token": "a token: keep it in kit.Sensitive, never print it",
    "kyc-question": "decrypted KYC question text: show the number of questions, not their text",
    "fixture-value": "a value of the sandbox fixtures file (a test persona's PII or KYC answer): "
    "keep it in kit.Sensitive, never print it",
    "sensitive-text": "a text marked sensitive by the caller: never print or store it",
    "used-token": "a partner, session or control token this run used: keep it in kit.Sensitive, "
    "never print it",
}

#: Terminal colour codes (tracebacks carry them); stripped before scanning.
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_MIN_SECRET_LEN = 4  # shorter "secrets" would flag ordinary words everywhere
_B64 = "A-Za-z0-9_-"
# A compact JOSE string: an ``eyJ`` header, then dot-separated base64url segments, the last one
# non-empty (a sentence's final dot is not a segment).
_JOSE = re.compile(rf"(?<![{_B64}])eyJ[{_B64}]{{4,}}(?:\.[{_B64}]*)*\.[{_B64}]+")
_SESSION = re.compile(rf"(?<![A-Za-z0-9])ses_[{_B64}]{{40,}}")
_TOKEN_CHARS = r"[A-Za-z0-9._~+/-]"
_BEARER = re.compile(rf"(?i)\bBearer\s+(?![A-Za-z_]+=)({_TOKEN_CHARS}{{16,}}=*)")
# Where a token of any format may stand: runs of token characters (with and without "/"),
# ended by "=" padding at most: ``access_token=T``, ``session=T`` and ``id:T&x=1`` split at
# "=", ":" and "&", so each side is a candidate of its own.
_CANDIDATES = (re.compile(r"[A-Za-z0-9_~+/.-]{12,}=*"), re.compile(r"[A-Za-z0-9_~+.-]{12,}=*"))


@dataclass(frozen=True)
class Finding:
    """One leak: its ``kind``, its ``location`` and a ``hint`` — never the leaked value.

    Example::

        >>> from kit.regress.leaks import scan_text
        >>> f = scan_text("Authorization: Bearer Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5")[0]
        >>> f.kind, f.location
        ('partner-token', 'text')
        >>> "Zm9v" in repr(f) + str(f)
        False
    """

    kind: str
    location: str
    hint: str

    def __str__(self) -> str:
        return f"{self.location}: {self.kind} — {self.hint}"


# --- patterns -------------------------------------------------------------------------------


def _date_forms(born: date) -> list[str]:
    """Regex fragments for the common ways of writing one date (digit-bounded by the caller)."""
    y, m, d = f"{born.year:04d}", born.month, born.day
    mm, dd = (f"0?{m}", f"0?{d}")
    month = calendar.month_name[m]
    abbr = calendar.month_abbr[m]
    names = f"(?:{month}|{abbr}\\.?)"
    return [
        rf"{y}[-/.]0?{m}[-/.]0?{d}",  # 1950-03-14, 1950/3/14
        rf"{dd}[-/.]{mm}[-/.]{y}",  # 14/03/1950, 14.3.1950
        rf"{mm}[-/.]{dd}[-/.]{y}",  # 03/14/1950
        rf"(?i:{names})\s+{dd}(?:st|nd|rd|th)?,?\s+{y}",  # March 14, 1950
        rf"{dd}(?:st|nd|rd|th)?\s+(?i:{names}),?\s+{y}",  # 14 March 1950
        rf"date(?:time)?\.date(?:time)?\({y},\s*{m},\s*{d}\b",  # datetime.date(1950, 3, 14)
    ]


def _id_pattern(national_id: str) -> str:
    groups = [re.escape(g) for g in re.split(r"[^0-9A-Za-z]+", national_id) if g]
    return r"[\s.-]?".join(groups)


@cache
def _persona_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    dobs: list[str] = []
    compact: list[str] = []
    ids: list[str] = []
    for persona in personas():
        born = date.fromisoformat(str(persona["date_of_birth"]))
        dobs.extend(_date_forms(born))
        compact.append(born.strftime("%Y%m%d"))
        ids.append(_id_pattern(str(persona["national_id"])))
    patterns: list[tuple[str, re.Pattern[str]]] = []
    if dobs:
        spelled = rf"(?<![0-9])(?:{'|'.join(dobs)})(?![0-9])"
        packed = rf"(?<![0-9A-Za-z])(?:{'|'.join(compact)})(?![0-9A-Za-z])"
        patterns.append(("persona-dob", re.compile(f"{spelled}|{packed}")))
    if ids:
        national_id = rf"(?<![0-9A-Za-z.])(?:{'|'.join(ids)})(?![0-9A-Za-z])"
        patterns.append(("persona-national-id", re.compile(national_id)))
    return tuple(patterns)


def _literal_pattern(text: str) -> re.Pattern[str]:
    # Short secrets must stand alone: not inside a longer word or an id (letters, digits, "_" and
    # "-" around them, a "." before them, or a "." or "/" joining them to a letter or digit: a
    # version, a date such as 1990/1/31, a path); long random ones are found anywhere.
    # The literal comes first (what is before it is looked behind, the literal included), so that
    # the search runs on the literal: ten times as fast as a pattern opening with a look-behind.
    escaped = re.escape(text)
    if len(text) < 12:
        escaped = (
            rf"{escaped}(?<![A-Za-z0-9_.-]{escaped})(?<![A-Za-z0-9]/{escaped})"
            r"(?![A-Za-z0-9_-]|[./][A-Za-z0-9])"
        )
    return re.compile(escaped)


@dataclass(frozen=True)
class Fingerprints:
    """Salted fingerprints of tokens a run used (:func:`kit._redaction.fingerprint`, the
    recorder's), so a scan finds those tokens in any format without any file holding them in the clear.

    Example::

        >>> token = "Zk3vQ9xLw2Rb7Tn1Yp5Hc8Md"
        >>> prints = Fingerprints.of(b"salt", [token])
        >>> [kind for kind, _, _ in Scanner([prints], (), {}).matches(f"sent {token}.")]
        ['used-token']
    """

    salt: bytes
    hashes: frozenset[str]

    @classmethod
    def of(cls, salt: bytes, tokens: Iterable[str]) -> Fingerprints:
        return cls(salt, frozenset(fingerprint(t, salt) for t in tokens))

    def matches(self, text: str) -> Iterator[tuple[int, int]]:
        """``(start, end)`` of each token of the set in ``text`` (a whole run of token characters,
        without a trailing dot)."""
        if not self.hashes:
            return
        for pattern in _CANDIDATES:
            for m in pattern.finditer(text):
                run = m.group()
                for candidate in dict.fromkeys((run, run.rstrip("."), run.rstrip(".="))):
                    if len(candidate) >= 12 and fingerprint(candidate, self.salt) in self.hashes:
                        yield m.start(), m.start() + len(candidate)
                        break


def _phrase_pattern(text: str) -> re.Pattern[str]:
    return re.compile(r"\s+".join(re.escape(w) for w in text.split()), re.IGNORECASE)


def _environment_secrets(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    found = [(kind, environ[name]) for name, kind in env.SECRET_VARIABLES.items() if environ.get(name)]
    secrets = env.parse_partners(environ.get(env.SIM_PARTNERS, ""), strict=False).values()
    found.extend(("client-secret", secret) for secret in secrets)
    return found


def _fixture_patterns(environ: Mapping[str, str]) -> list[tuple[str, re.Pattern[str]]]:
    """Every value of the fixtures file the environment names: dates in their common forms,
    ids with or without separators, other texts as literals: ``(value, pattern)``. None when it
    is unset or unusable (``kit regress`` refuses to start on an unusable one)."""
    try:
        found = fixtures.from_env(environ)
    except FixturesError:
        return []
    patterns: list[tuple[str, re.Pattern[str]]] = []
    for text in found.values() if found is not None else []:
        try:
            born = date.fromisoformat(text)
        except ValueError:
            born = None
        if born is not None:
            forms = "|".join(_date_forms(born))
            packed = born.strftime("%Y%m%d")
            pattern = rf"(?<![0-9])(?:{forms})(?![0-9])|(?<![0-9A-Za-z]){packed}(?![0-9A-Za-z])"
            patterns.append((text, re.compile(pattern)))
        elif len(text) >= _MIN_SECRET_LEN:
            spaced = (
                _id_pattern(text) if re.search(r"[0-9]", text) and re.search(r"[^0-9A-Za-z]", text) else None
            )
            if spaced:
                patterns.append((text, re.compile(rf"(?<![0-9A-Za-z.])(?:{spaced})(?![0-9A-Za-z])")))
            else:
                patterns.append((text, _literal_pattern(text)))
    return patterns


def _plain(secret: Any) -> str:
    reveal = getattr(secret, "reveal", None)  # a kit.Sensitive handed in as a secret
    return str(reveal() if callable(reveal) else secret)


def _token_like(text: str) -> bool:
    """Random-looking (a digit or mixed case), not a mask such as ``REDACTED`` or ``••••``."""
    core = text.rstrip("=")
    return len(core) >= 8 and (
        any(c.isdigit() for c in core) or (any(c.islower() for c in core) and any(c.isupper() for c in core))
    )


# --- the scanner ----------------------------------------------------------------------------


class Scanner:
    """Compiled patterns for one call: personas, literals, JOSE, tokens, KYC texts.

    ``secrets`` are literal values (strings or :class:`kit.Sensitive`), ``extra`` literal
    texts (any case, any whitespace); ``environ`` (default ``os.environ``) is where the
    environment's secrets are read.

    Raises:
        Nothing.
    """

    def __init__(
        self, secrets: Iterable[Any], extra: Iterable[str], environ: Mapping[str, str] | None = None
    ) -> None:
        environment = os.environ if environ is None else environ
        given = list(secrets)
        self.fingerprints = [s for s in given if isinstance(s, Fingerprints)]
        self.names = dict(_FIELD_KINDS)  # normalised field name → kind; a dialect's names too
        for spelled in (s for s in given if isinstance(s, SecretNames)):
            self.names.update(spelled.kinds)
        given = [s for s in given if not isinstance(s, SecretNames)]
        literals = [("client-secret", s) for s in DEFAULT_CLIENT_SECRETS]
        literals += _environment_secrets(environment)
        literals += [("secret", _plain(s)) for s in given if not isinstance(s, Fingerprints)]
        self._field = _field_pattern(self.names)
        fixture = _fixture_patterns(environment)  # named as fixtures even when also handed in
        seen: set[str] = {text for text, _ in fixture}
        self.literals: list[tuple[str, re.Pattern[str]]] = [("fixture-value", p) for _, p in fixture]
        for kind, text in sorted(literals, key=lambda kv: -len(kv[1])):  # longest first
            if len(text) >= _MIN_SECRET_LEN and text not in seen:
                seen.add(text)
                self.literals.append((kind, _literal_pattern(text)))
        self.phrases = [("kyc-question", _phrase_pattern(q)) for q in KYC_QUESTIONS]
        self.phrases += [("sensitive-text", _phrase_pattern(t)) for t in extra if t.strip()]

    def matches(self, text: str, depth: int = 0) -> list[tuple[str, int, int]]:
        """``(kind, start, end)`` of every leak in ``text``, without overlaps, in text order.

        What is found only once decoded (HTML character references, percent escapes, JSON string
        escapes, an HTTP Basic value, a base64 run: up to two decodings deep) is reported over its
        encoded span.
        """
        hits = self._plain_matches(text)
        if depth < DEPTH:
            for hit in html_matches(text, lambda decoded: self.matches(decoded, depth + 1)):
                hits += [hit] if all(hit[2] <= k[1] or hit[1] >= k[2] for k in hits) else []
            for start, end, decoded in decodings(text):
                if any(start < k[2] and end > k[1] for k in hits):
                    continue  # already found as it stands
                inner = self.matches(decoded, depth + 1)
                if inner:
                    hits.append((inner[0][0], start, end))
        return sorted(hits, key=lambda h: h[1])

    def _plain_matches(self, text: str) -> list[tuple[str, int, int]]:
        hits: list[tuple[str, int, int]] = []
        for kind, pattern in (*self.literals, *_persona_patterns()):
            for m in pattern.finditer(text):
                if kind != "fixture-value" or not owntext.quoted(text, m.start(), m.end()):
                    hits.append((kind, m.start(), m.end()))
        for m in _JOSE.finditer(text):
            hits.append((jose_kind(m.group()), m.start(), m.end()))
        for prints in self.fingerprints:
            hits += [("used-token", start, end) for start, end in prints.matches(text)]
        hits += [("session-token", m.start(), m.end()) for m in _SESSION.finditer(text)]
        hits += [("partner-token", m.start(1), m.end(1)) for m in _BEARER.finditer(text) if _token_like(m[1])]
        for m in self._field.finditer(text):
            if _token_like(m[2]):
                hits.append((self.names[_field_name(m[1])], m.start(2), m.end(2)))
        for kind, pattern in self.phrases:
            hits += [(kind, m.start(), m.end()) for m in pattern.finditer(text)]
        kept: list[tuple[str, int, int]] = []
        for hit in hits:  # earlier patterns are more specific: they win an overlap
            if all(hit[2] <= k[1] or hit[1] >= k[2] for k in kept):
                kept.append(hit)
        return kept

    def findings(self, text: str, location: str) -> list[Finding]:
        """A :class:`Finding` per leak in ``text`` (a line number when it has several lines)."""
        text = ANSI.sub("", text)
        out = []
        for kind, start, _ in self.matches(text):
            where = f"{location}, line {text.count(chr(10), 0, start) + 1}" if "\n" in text else location
            out.append(Finding(kind, where, HINTS[kind]))
        return out

    def walk(self, item: Any, location: str) -> Iterator[Finding]:
        """Findings in every string of a JSON-like value; a token under a token-named key too."""
        if isinstance(item, str):
            parsed = json_document(item)
            if parsed is None:
                yield from self.findings(item, location)
            else:  # a JSON body held as a string (a HAR's postData, a logged response): by field
                yield from self.walk(parsed, location)
        elif isinstance(item, Mapping):
            for key, child in item.items():
                where = f"{location}.{key}" if isinstance(key, str) and not self.matches(key) else location
                if isinstance(key, str):
                    yield from self.findings(key, f"{location} (a key)")
                    kind = self.names.get(_field_name(key))
                    if kind and isinstance(child, str) and _token_like(child) and not self.matches(child):
                        yield Finding(kind, where, HINTS[kind])
                yield from self.walk(child, where)
        elif isinstance(item, list | tuple):
            for i, child in enumerate(item):
                yield from self.walk(child, f"{location}[{i}]")
