"""Find secrets and personal data where they must never be: notebooks, reports, tables.

DESIGN §4 and §5: nothing decrypted and no secret is ever written to a notebook output, a
stored file or the call history. This module checks that after the fact. It looks for

- ``persona-dob`` / ``persona-national-id``: every persona's date of birth (ISO and other
  common forms: ``14/03/1950``, ``March 14, 1950``, ``19500314``…) and national id (with
  or without separators), read from ``data/personas.json`` through :func:`kit.register.personas`;
- ``client-secret``: the simulator's default client secrets, ``PARTNER_API_CLIENT_SECRET`` and
  the secrets of ``KIT_SIM_PARTNERS`` when set, a quoted ``"client_secret": "…"``;
- ``access-token``: the value of ``PARTNER_API_ACCESS_TOKEN`` when set;
- ``control-token``: the value of ``KIT_SIM_CONTROL_TOKEN`` when set;
- ``secret``: any value handed in through ``secrets=``;
- ``jwe``, ``jws``, ``jws-detached``, ``jose``: compact JOSE strings (an ``eyJ`` header and
  dot-separated base64url segments: five for a JWE, ``header..signature`` for a detached JWS);
- ``session-token``: ``ses_`` followed by 40 or more base64url characters (seeded ids such as
  ``acc_5ea792c644255bcf6a87`` are not tokens and are not reported);
- ``bearer-token``: what follows ``Bearer `` or sits in ``"access_token": "…"``;
- ``kyc-question``: the decrypted KYC question texts (:data:`KYC_QUESTIONS`);
- ``sensitive-text``: any literal handed in through ``extra=``.

A :class:`Finding` names the kind, where it was found and what to do — never the value: its
``repr`` and ``str`` are safe to print, log and write into a report.

Example::

    >>> from kit.leaks import scan_text
    >>> [f.kind for f in scan_text('{"note": "born 1950-03-14"}')]
    ['persona-dob']
    >>> scan_text("account acc_5ea792c644255bcf6a87 opened at 2025-01-06T09:00:00Z")
    []
"""

from __future__ import annotations

import calendar
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DEFAULT_CLIENT_SECRETS",
    "HINTS",
    "KYC_QUESTIONS",
    "Finding",
    "redact",
    "scan_dataframe",
    "scan_file",
    "scan_notebook",
    "scan_text",
]

#: The simulator's built-in partner client secrets (DESIGN §3: ``sim-partner`` / ``sim-secret``,
#: ``sim-partner-b`` / ``sim-secret-b``).
DEFAULT_CLIENT_SECRETS: tuple[str, ...] = ("sim-secret", "sim-secret-b")

#: The simulator's KYC question texts: they only exist decrypted, so seeing one in an output
#: means a decrypted payload was shown (spec rule 4, DESIGN §3.4).
KYC_QUESTIONS: tuple[str, ...] = (
    "In which year were you born?",
    "In which month were you born?",
    "What are the last two digits of your national identification number?",
)

#: What to do about each kind of finding (the text of :attr:`Finding.hint`).
HINTS: Mapping[str, str] = {
    "persona-dob": "a persona's date of birth: keep PII in kit.Sensitive and never print reveal()",
    "persona-national-id": "a persona's national id: keep PII in kit.Sensitive and never print reveal()",
    "client-secret": "a partner client secret: read it from the environment, never print or store it",
    "access-token": "the partner access token: it lives in the environment only, never in outputs",
    "control-token": "the simulator's control token: never print or store it",
    "secret": "a value given as secret: never print or store it",
    "jwe": "a JWE ciphertext: show its shape (kit.Sensitive), not the compact string",
    "jws": "a JWS/JWT: show its header or shape, not the compact string",
    "jws-detached": "a detached JWS signature: show whether it verified, not the signature",
    "jose": "a JOSE-looking compact string: do not print tokens or ciphertexts",
    "session-token": "a session token: keep it in kit.Sensitive, never print it",
    "bearer-token": "a bearer access token: keep it in kit.Sensitive, never print it",
    "kyc-question": "decrypted KYC question text: show the number of questions, not their text",
    "sensitive-text": "a text marked sensitive by the caller: never print or store it",
}

_ENV_SECRETS = {
    "PARTNER_API_CLIENT_SECRET": "client-secret",
    "PARTNER_API_ACCESS_TOKEN": "access-token",
    "KIT_SIM_CONTROL_TOKEN": "control-token",
}
_MIN_SECRET_LEN = 4  # shorter "secrets" would flag ordinary words everywhere
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_B64 = "A-Za-z0-9_-"
# A compact JOSE string: an ``eyJ`` header, then dot-separated base64url segments, the last one
# non-empty (a sentence's final dot is not a segment).
_JOSE = re.compile(rf"(?<![{_B64}])eyJ[{_B64}]{{4,}}(?:\.[{_B64}]*)*\.[{_B64}]+")
_SESSION = re.compile(rf"(?<![A-Za-z0-9])ses_[{_B64}]{{40,}}")
_TOKEN_CHARS = r"[A-Za-z0-9._~+/-]"
_BEARER = re.compile(rf"(?i)\bBearer\s+(?![A-Za-z_]+=)({_TOKEN_CHARS}{{16,}}=*)")
_FIELD = re.compile(
    r"""(?i)["']?\b(access_token|refresh_token|id_token|session_token|client_secret)["']?"""
    rf"""\s*[:=]\s*["']({_TOKEN_CHARS}{{8,}}=*)["']"""
)
_FIELD_KIND = {
    "access_token": "bearer-token",
    "refresh_token": "bearer-token",
    "id_token": "bearer-token",
    "session_token": "session-token",
    "client_secret": "client-secret",
}
_TEXT_MIMES = ("text/", "application/json", "application/javascript", "image/svg+xml")


@dataclass(frozen=True)
class Finding:
    """One leak: its ``kind``, its ``location`` and a ``hint`` — never the leaked value.

    Example::

        >>> f = scan_text("Authorization: Bearer Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5")[0]
        >>> f.kind, f.location
        ('bearer-token', 'text')
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
    from kit.register import personas

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


def _literal_pattern(value: str) -> re.Pattern[str]:
    # Short secrets must stand alone ("sim-secret" is not inside "sim-secrets"); long random
    # ones are found anywhere.
    escaped = re.escape(value)
    if len(value) < 12:
        escaped = rf"(?<![A-Za-z0-9]){escaped}(?![A-Za-z0-9])"
    return re.compile(escaped)


def _phrase_pattern(text: str) -> re.Pattern[str]:
    return re.compile(r"\s+".join(re.escape(w) for w in text.split()), re.IGNORECASE)


def _environment_secrets(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    found = [(kind, environ[name]) for name, kind in _ENV_SECRETS.items() if environ.get(name)]
    for item in environ.get("KIT_SIM_PARTNERS", "").split(","):
        _, sep, secret = item.strip().partition(":")
        if sep and secret:
            found.append(("client-secret", secret))
    return found


def _plain(value: Any) -> str:
    reveal = getattr(value, "reveal", None)  # a kit.Sensitive handed in as a secret
    return str(reveal() if callable(reveal) else value)


class _Scanner:
    """Compiled patterns for one call: personas, literals, JOSE, tokens, KYC texts."""

    def __init__(self, secrets: Iterable[Any], extra: Iterable[str], environ: Mapping[str, str] | None):
        literals = [("client-secret", s) for s in DEFAULT_CLIENT_SECRETS]
        literals += _environment_secrets(os.environ if environ is None else environ)
        literals += [("secret", _plain(s)) for s in secrets]
        seen: set[str] = set()
        self.literals: list[tuple[str, re.Pattern[str]]] = []
        for kind, value in sorted(literals, key=lambda kv: -len(kv[1])):  # longest first
            if len(value) >= _MIN_SECRET_LEN and value not in seen:
                seen.add(value)
                self.literals.append((kind, _literal_pattern(value)))
        self.phrases = [("kyc-question", _phrase_pattern(q)) for q in KYC_QUESTIONS]
        self.phrases += [("sensitive-text", _phrase_pattern(t)) for t in extra if t.strip()]

    def matches(self, text: str) -> list[tuple[str, int, int]]:
        """``(kind, start, end)`` of every leak in ``text``, without overlaps, in text order."""
        hits: list[tuple[str, int, int]] = []
        for kind, pattern in (*self.literals, *_persona_patterns()):
            hits += [(kind, m.start(), m.end()) for m in pattern.finditer(text)]
        for m in _JOSE.finditer(text):
            hits.append((_jose_kind(m.group()), m.start(), m.end()))
        hits += [("session-token", m.start(), m.end()) for m in _SESSION.finditer(text)]
        hits += [("bearer-token", m.start(1), m.end(1)) for m in _BEARER.finditer(text) if _token_like(m[1])]
        for m in _FIELD.finditer(text):
            if _token_like(m[2]):
                hits.append((_FIELD_KIND[m[1].lower()], m.start(2), m.end(2)))
        for kind, pattern in self.phrases:
            hits += [(kind, m.start(), m.end()) for m in pattern.finditer(text)]
        kept: list[tuple[str, int, int]] = []
        for hit in hits:  # earlier patterns are more specific: they win an overlap
            if all(hit[2] <= k[1] or hit[1] >= k[2] for k in kept):
                kept.append(hit)
        return sorted(kept, key=lambda h: h[1])

    def findings(self, text: str, location: str) -> list[Finding]:
        text = _ANSI.sub("", text)
        out = []
        for kind, start, _ in self.matches(text):
            where = f"{location}, line {text.count(chr(10), 0, start) + 1}" if "\n" in text else location
            out.append(Finding(kind, where, HINTS[kind]))
        return out

    def walk(self, value: Any, location: str) -> Iterator[Finding]:
        """Findings in every string of a JSON-like value; a token under a token-named key too."""
        if isinstance(value, str):
            yield from self.findings(value, location)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                where = f"{location}.{key}" if isinstance(key, str) and not self.matches(key) else location
                if isinstance(key, str):
                    yield from self.findings(key, f"{location} (a key)")
                    kind = _FIELD_KIND.get(key.lower())
                    if kind and isinstance(item, str) and _token_like(item) and not self.matches(item):
                        yield Finding(kind, where, HINTS[kind])
                yield from self.walk(item, where)
        elif isinstance(value, list | tuple):
            for i, item in enumerate(value):
                yield from self.walk(item, f"{location}[{i}]")


def _jose_kind(token: str) -> str:
    segments = token.split(".")
    if len(segments) == 5:
        return "jwe"
    if len(segments) == 3:
        return "jws-detached" if segments[1] == "" else "jws"
    return "jose"


def _token_like(value: str) -> bool:
    """Random-looking (a digit or mixed case), not a mask such as ``REDACTED`` or ``••••``."""
    core = value.rstrip("=")
    return len(core) >= 8 and (
        any(c.isdigit() for c in core) or (any(c.islower() for c in core) and any(c.isupper() for c in core))
    )


# --- public API -----------------------------------------------------------------------------


def scan_text(
    text: str,
    *,
    secrets: Iterable[Any] = (),
    extra: Iterable[str] = (),
    location: str = "text",
    environ: Mapping[str, str] | None = None,
) -> list[Finding]:
    """Every leak in a text, in order; each :class:`Finding` names the line, never the value.

    ``secrets`` are further literal values (strings or :class:`kit.Sensitive`) to look for;
    ``extra`` further literal texts (matched case-insensitively, any whitespace); ``environ``
    replaces ``os.environ`` when reading ``PARTNER_API_*`` and ``KIT_SIM_*`` secrets.

    Example::

        >>> [f.kind for f in scan_text("token ses_" + "A" * 43)]
        ['session-token']
        >>> [str(f) for f in scan_text("x", secrets=["x"])]   # shorter than 4: ignored
        []

    Raises:
        TypeError: when ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"scan_text needs a str, not {type(text).__name__}")
    return _Scanner(secrets, extra, environ).findings(text, location)


def redact(
    text: str,
    *,
    secrets: Iterable[Any] = (),
    extra: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
) -> str:
    """``text`` with every leak replaced by ``[redacted <kind>]`` (for reports and messages).

    A text without leaks comes back unchanged; one with leaks also loses its ANSI colour codes.

    Example::

        >>> redact("AssertionError: sim-secret != x")
        'AssertionError: [redacted client-secret] != x'

    Raises:
        TypeError: when ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"redact needs a str, not {type(text).__name__}")
    plain = _ANSI.sub("", text)
    hits = _Scanner(secrets, extra, environ).matches(plain)
    if not hits:
        return text  # untouched, colour codes included
    text, parts, last = plain, [], 0
    for kind, start, end in hits:
        parts += [text[last:start], f"[redacted {kind}]"]
        last = end
    return "".join([*parts, text[last:]])


def scan_notebook(
    notebook: str | os.PathLike[str] | Mapping[str, Any],
    *,
    secrets: Iterable[Any] = (),
    extra: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
    name: str | None = None,
) -> list[Finding]:
    """Every leak in a notebook: cell sources, outputs (text, data, errors), metadata.

    The notebook metadata includes what papermill records (``metadata.papermill.parameters``).
    Cells are counted from 1 in the file given, with the execution count when there is one:
    ``executed/01_x.ipynb: cell 5 (In [3]) output 1 text/plain, line 2`` (``name`` replaces the
    file name, or ``notebook`` for a dict). Binary outputs (PNG, JPEG) are skipped.

    Example::

        >>> findings = scan_notebook("out/regress/04_onboarding_kyc.ipynb")  # doctest: +SKIP
        >>> sorted({f.kind for f in findings})                               # doctest: +SKIP
        []

    Raises:
        OSError: when the file cannot be read.
        ValueError: when it is not JSON (json.JSONDecodeError).
    """
    scanner = _Scanner(secrets, extra, environ)
    if isinstance(notebook, Mapping):
        nb, name = notebook, name or "notebook"
    else:
        name = name or str(notebook)
        with open(notebook, encoding="utf-8") as f:
            nb = json.load(f)
    found = list(scanner.walk(dict(nb.get("metadata", {})), f"{name}: metadata"))
    for i, cell in enumerate(nb.get("cells", []), start=1):
        count = cell.get("execution_count")
        where = f"{name}: cell {i}" + (f" (In [{count}])" if count else "")
        found += scanner.findings(_joined(cell.get("source", "")), f"{where} source")
        found += scanner.walk(dict(cell.get("metadata", {})), f"{where} metadata")
        for att_name, bundle in dict(cell.get("attachments") or {}).items():
            found += _scan_bundle(scanner, bundle, f"{where} attachment {att_name}")
        for j, output in enumerate(cell.get("outputs", []), start=1):
            found += _scan_output(scanner, output, f"{where} output {j}")
    return found


def scan_file(
    path: str | os.PathLike[str],
    *,
    secrets: Iterable[Any] = (),
    extra: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
) -> list[Finding]:
    """Every leak in a file: a notebook (``.ipynb``) cell by cell, anything else as text.

    Example::

        >>> scan_file("out/regress/summary.md")  # doctest: +SKIP
        []

    Raises:
        OSError: when the file cannot be read.
    """
    if str(path).endswith(".ipynb"):
        try:
            return scan_notebook(path, secrets=secrets, extra=extra, environ=environ)
        except ValueError:
            pass  # not JSON: scan it as text below
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    return _Scanner(secrets, extra, environ).findings(text, str(path))


def scan_dataframe(
    df: pd.DataFrame,
    *,
    secrets: Iterable[Any] = (),
    extra: Iterable[str] = (),
    name: str = "DataFrame",
    environ: Mapping[str, str] | None = None,
) -> list[Finding]:
    """Every leak in a DataFrame: column names, index labels and every cell.

    Locations use positions (``row 3``) and column names, never index labels (which could be
    the leaked value themselves). Strings are scanned as text, dicts and lists as JSON-like
    values, other objects through ``str()`` (a :class:`kit.Sensitive` shows its mask).

    Example::

        >>> import pandas as pd
        >>> [f.location for f in scan_dataframe(pd.DataFrame({"dob": ["1950-03-14"]}))]
        ["DataFrame row 1, column 'dob'"]

    Raises:
        AttributeError: when ``df`` is not DataFrame-like (no ``columns``, ``index``, ``itertuples``).
    """
    scanner = _Scanner(secrets, extra, environ)
    columns = []
    found: list[Finding] = []
    for j, column in enumerate(df.columns, start=1):
        label = str(column)
        hits = scanner.findings(label, f"{name} column {j} (its name)")
        found += hits
        columns.append(f"column {j}" if hits else f"column {label!r}")
    for i, label in enumerate(df.index, start=1):
        if not isinstance(label, int | float):
            found += scanner.findings(str(label), f"{name} row {i} (its index label)")
    for i, row in enumerate(df.itertuples(index=False, name=None), start=1):
        for column, value in zip(columns, row, strict=True):
            found += _scan_value(scanner, value, f"{name} row {i}, {column}")
    return found


# --- helpers --------------------------------------------------------------------------------


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _scan_value(scanner: _Scanner, value: Any, location: str) -> list[Finding]:
    if value is None or isinstance(value, bool | int | float):
        return []
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if isinstance(value, str):
        return scanner.findings(value, location)
    if isinstance(value, Mapping | list | tuple):
        return list(scanner.walk(value, location))
    return scanner.findings(str(value), location)


def _scan_bundle(scanner: _Scanner, bundle: Mapping[str, Any], location: str) -> list[Finding]:
    found: list[Finding] = []
    for mime, data in bundle.items():
        if mime.startswith(_TEXT_MIMES) or mime.endswith("+json"):
            text = data if isinstance(data, Mapping) else _joined(data)
            found += _scan_value(scanner, text, f"{location} {mime}")
    return found


def _scan_output(scanner: _Scanner, output: Mapping[str, Any], location: str) -> list[Finding]:
    kind = output.get("output_type")
    found: list[Finding] = []
    if kind == "stream":
        stream = output.get("name", "stream")
        found += scanner.findings(_joined(output.get("text", "")), f"{location} {stream}")
    elif kind == "error":
        found += scanner.findings(str(output.get("ename", "")), f"{location} error name")
        found += scanner.findings(str(output.get("evalue", "")), f"{location} error value")
        found += scanner.findings("\n".join(output.get("traceback", [])), f"{location} traceback")
    else:
        found += _scan_bundle(scanner, output.get("data", {}), location)
    found += scanner.walk(dict(output.get("metadata", {})), f"{location} metadata")
    return found
