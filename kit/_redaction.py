"""What the wire recorder (:mod:`kit._wire`) keeps of a header or a body: secrets and personal
data replaced by a marker, what varies from run to run normalised — at recording time.

A :class:`Redactor` is one client's: it learns each secret as it first meets it by name
(``Authorization: Bearer …``, an ``access_token`` or ``session_token`` field, ``svc-session-id``,
``svc-control-token``, the client secret of a Basic header or a form body) and from then on
also replaces it by value, wherever it travels. Markers:

- ``<partner-token>``, ``<session-token>``, ``<client-secret>``, ``<control-token>``,
  ``<token>`` (another token field), ``<kyc-answers>``, ``<fixture-value>``;
- ``<pii>``: a field the register's PII rule names (A11: field names cut into words and
  compared with its list, as the simulator judges clear-text PII), and a persona's date of
  birth or national id by value;
- ``<JWE alg=… enc=… kid=…>`` and ``<JWS alg=… kid=…>`` for compact JOSE strings (the webhook
  signature ``svc-webhook-signature`` among them);
- normalised: ``Date: <date>``, the port of a URL or a ``Host`` (``127.0.0.1:<port>``),
  ``Idempotency-Key: <idempotency-key N>`` (numbered by first appearance, so a retry shows
  the same number), a session-initialization ``nonce`` (``<nonce>``).

Short known values (under 12 characters, such as a four-digit KYC answer) are replaced only
where they stand alone: a whole JSON string, form value or header value, or a word of free
text — never digits inside an id.

Example::

    >>> r = Redactor(secrets=[("client-secret", "s3cret-value")])
    >>> r.header("Authorization", "Bearer abcdefghijklmnop0123")
    'Bearer <partner-token>'
    >>> r.text('{"note": "token abcdefghijklmnop0123 and s3cret-value"}')
    '{"note": "token <partner-token> and <client-secret>"}'
    >>> r.json({"date_of_birth": "1950-03-14", "url": "http://127.0.0.1:51234/hook"})
    {'date_of_birth': '<pii>', 'url': 'http://127.0.0.1:<port>/hook'}
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import threading
import unicodedata
from collections.abc import Iterable
from functools import cache
from typing import Any
from urllib.parse import parse_qsl, unquote_plus, urlencode

from kit import register
from kit.crypto import protected_header

__all__ = ["Redactor", "fingerprint", "is_pii_name"]

_SHORT = 12  # known values shorter than this are replaced only where they stand alone
_MIN = 4  # shorter values would replace ordinary words
_B64 = "A-Za-z0-9_-"
_JOSE = re.compile(rf"(?<![{_B64}])eyJ[{_B64}]{{4,}}(?:\.[{_B64}]*){{2,4}}")
_URL_PORT = re.compile(
    r"(\b[a-z][a-z0-9+.-]*://(?:\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+)):\d{1,5}(?=[/?#\s\"']|$)"
)
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

#: Fields whose value is a secret, by name (lower case) → marker kind.
SECRET_FIELDS = {
    "access_token": "partner-token",
    "session_token": "session-token",
    "client_secret": "client-secret",
    "refresh_token": "token",
    "id_token": "token",
    "answers": "kyc-answers",
}
#: Headers whose value is a secret, by name (lower case) → marker kind.
SECRET_HEADERS = {"svc-session-id": "session-token", "svc-control-token": "control-token"}
#: Fields that differ on every run, by name → marker.
VARYING_FIELDS = {"nonce": "<nonce>"}


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(unicodedata.normalize("NFKC", name))]


@cache
def _pii_names() -> tuple[frozenset[str], int]:
    names = [str(n) for n in register.value("A11")["pii_names"]]
    return frozenset("".join(_words(n)) for n in names), max(len(_words(n)) for n in names)


@cache
def is_pii_name(name: str) -> bool:
    """Whether a field name names personal data by the register's rule (A11): some run of its
    words (cut at separators, case changes and digits) joined is one of the register's names.

    >>> is_pii_name("dateOfBirth"), is_pii_name("customer_national_id"), is_pii_name("adobe")
    (True, True, False)
    """
    joined_names, longest = _pii_names()
    parts = _words(name)
    for start in range(len(parts)):
        joined = ""
        for part in parts[start : start + longest]:
            joined += part
            if joined in joined_names:
                return True
    return False


def fingerprint(value: str, salt: bytes) -> str:
    """A salted SHA-256 of a secret: what a run keeps to find it again, never the value."""
    return hashlib.sha256(salt + value.encode("utf-8")).hexdigest()


def _jose_marker(compact: str) -> str:
    try:
        header = protected_header(compact)
    except ValueError:
        return "<JOSE>"
    names = ("alg", "enc", "kid") if compact.count(".") == 4 else ("alg", "kid")
    shown = " ".join(f"{n}={header[n]}" for n in names if isinstance(header.get(n), str))
    kind = "JWE" if compact.count(".") == 4 else "JWS"
    return f"<{kind} {shown}>" if shown else f"<{kind}>"


def _persona_values() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for persona in register.personas():
        for name in ("date_of_birth", "national_id"):
            if persona.get(name):
                found.append(("pii", str(persona[name])))
    return found


class Redactor:
    """One client's redaction (see the module docstring); thread-safe.

    ``secrets``: ``(kind, value)`` pairs known before any call (the client secret, the control
    token, a preset partner token, fixture values); the simulator's personas' dates of birth and
    national ids are always known.
    """

    def __init__(self, secrets: Iterable[tuple[str, str]] = ()) -> None:
        self._lock = threading.Lock()
        self._known: dict[str, str] = {}
        self._pattern: re.Pattern[str] | None = None
        self._keys: dict[str, int] = {}
        for kind, value in [*_persona_values(), *secrets]:
            self.learn(kind, value)

    # -- what is known -----------------------------------------------------------------------

    def learn(self, kind: str, value: str) -> None:
        """Replace ``value`` by ``<kind>`` from now on, wherever it appears."""
        if not isinstance(value, str) or len(value) < _MIN or value.startswith("<"):
            return
        with self._lock:
            if value not in self._known:
                self._known[value] = f"<{kind}>"
                self._pattern = None

    def fingerprints(self, salt: bytes, kinds: Iterable[str] | None = None) -> set[str]:
        """Salted hashes (:func:`fingerprint`) of the known values (of ``kinds``, default all)."""
        wanted = None if kinds is None else {f"<{k}>" for k in kinds}
        with self._lock:
            known = [v for v, m in self._known.items() if wanted is None or m in wanted]
        return {fingerprint(v, salt) for v in known}

    def _compiled(self) -> re.Pattern[str] | None:
        with self._lock:
            if self._pattern is None and self._known:
                parts = []
                for value in sorted(self._known, key=len, reverse=True):
                    escaped = re.escape(value)
                    if len(value) < _SHORT:  # alone: not inside an id, a word or a number
                        escaped = rf"(?<![A-Za-z0-9_-]){escaped}(?![A-Za-z0-9_-])"
                    parts.append(escaped)
                self._pattern = re.compile("|".join(parts))
            return self._pattern

    # -- texts, values, headers, bodies --------------------------------------------------------

    def text(self, text: str) -> str:
        """Known values, JOSE strings and URL ports replaced in free text."""
        whole = self._known.get(text)
        if whole is not None:
            return whole
        pattern = self._compiled()
        if pattern is not None:
            text = pattern.sub(lambda m: self._known.get(m.group(), "<secret>"), text)
        text = _JOSE.sub(lambda m: _jose_marker(m.group()), text)
        return _URL_PORT.sub(r"\1:<port>", text)

    def json(self, value: Any, name: str | None = None) -> Any:
        """A JSON value with secret, PII and varying fields replaced (by name and by value)."""
        if name is not None:
            lowered = name.lower()
            kind = SECRET_FIELDS.get(lowered)
            if kind is not None and value is not None:
                if isinstance(value, str):
                    self.learn(kind, value)
                return f"<{kind}>"
            if lowered in VARYING_FIELDS and isinstance(value, str):
                return VARYING_FIELDS[lowered]
            if value is not None and not isinstance(value, bool) and is_pii_name(name):
                return "<pii>"
        if isinstance(value, dict):
            return {k: self.json(v, k if isinstance(k, str) else None) for k, v in value.items()}
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value

    def idempotency_key(self, value: str) -> str:
        with self._lock:
            number = self._keys.setdefault(value, len(self._keys) + 1)
        return f"<idempotency-key {number}>"

    def header(self, name: str, value: str) -> str:
        """One header's value as recorded."""
        lowered = name.lower()
        if lowered == "authorization":
            scheme, _, credentials = value.partition(" ")
            if scheme.lower() == "bearer":
                self.learn("partner-token", credentials.strip())
                return f"{scheme} {self._known.get(credentials.strip(), '<partner-token>')}"
            if scheme.lower() == "basic":
                self._learn_basic(credentials.strip())
                return f"{scheme} <client-credentials>"
            return "<credentials>"
        if lowered in SECRET_HEADERS:
            self.learn(SECRET_HEADERS[lowered], value)
            return f"<{SECRET_HEADERS[lowered]}>"
        if lowered == "idempotency-key":
            return self.idempotency_key(value)
        if lowered == "date":
            return "<date>"
        if lowered == "host":
            return re.sub(r":\d{1,5}$", ":<port>", value)
        return self.text(value)

    def _learn_basic(self, credentials: str) -> None:
        try:
            pair = base64.b64decode(credentials, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return
        _, _, secret = pair.partition(":")
        self.learn("client-secret", unquote_plus(secret))

    def body(self, content: bytes, content_type: str) -> str | None:
        """A body as recorded: JSON and forms field by field, other text as :meth:`text`;
        binary bodies are described, never kept."""
        if not content:
            return None
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            return f"<{len(content)} bytes of {content_type or 'binary data'}>"
        ctype = content_type.lower()
        if "json" in ctype or (not ctype and text.lstrip()[:1] in "{["):
            try:
                parsed = json.loads(text)
            except ValueError:
                return self.text(text)
            return json.dumps(self.json(parsed), ensure_ascii=False)
        if "x-www-form-urlencoded" in ctype:
            pairs = parse_qsl(text, keep_blank_values=True)
            return urlencode([(k, self._form_value(k, v)) for k, v in pairs], safe="<>= ")
        return self.text(text)

    def _form_value(self, name: str, value: str) -> str:
        kind = SECRET_FIELDS.get(name.lower())
        if kind is not None:
            self.learn(kind, value)
            return f"<{kind}>"
        return str(self.json(value, name))
