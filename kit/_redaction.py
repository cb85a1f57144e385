"""What the wire recorder (:mod:`kit._wire`) keeps of a header or a body: secrets and personal
data replaced by a marker, what varies from run to run normalised — at recording time.

A :class:`Redactor` is one client's: it learns each secret as it first meets it by name and
from then on also replaces it by value, wherever it travels. A name is secret by one rule
(:func:`secret_kind`): cut into words as PII names are (case, separators, camelCase), it ends
in one of :data:`SECRET_NAMES` — token, secret, password, api key, authorization, cookie — so
``access_token``, ``accessToken``, ``sessionToken``, ``clientSecret``, ``X-Api-Key``,
``Proxy-Authorization`` and ``Cookie`` are all secret, while ``token_type`` and ``expires_in``
are shown. Inside a JWK (an object with ``kty``) its private members (``d``, ``p``, ``q``,
``dp``, ``dq``, ``qi``, ``k``, ``oth``) are secret too. The rule is the same for a JSON field
(in any text body, whatever its content type), a header, a query parameter and a form field.
Markers:

- ``<partner-token>``, ``<session-token>``, ``<client-secret>``, ``<control-token>``
  (:data:`SECRET_KINDS`), ``<token>``, ``<secret>``, ``<password>``, ``<api-key>``,
  ``<cookie>``, ``<credentials>``, ``<private-key>``, ``<kyc-answers>``, ``<fixture-value>``;
- ``<pii>``: a field or query parameter the register's PII rule names (A11: field names cut
  into words and compared with its list, as the simulator judges clear-text PII), and a
  persona's date of birth or national id by value;
- ``<JWE alg=… enc=… kid=…>`` and ``<JWS alg=… kid=…>`` for compact JOSE strings (the webhook
  signature ``svc-webhook-signature`` among them); a key id the client made itself, which
  differs run to run, is named instead (:meth:`Redactor.name_key`: ``kid=<device-key-id>``);
- normalised: ``Date: <date>``, the port of a URL or a ``Host`` (``127.0.0.1:<port>``),
  ``Idempotency-Key: <idempotency-key N>`` (A20's header, numbered by first appearance, so a retry shows
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
from collections.abc import Iterable
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, unquote_plus, urlencode

from kit import register
from kit._dialect import DEFAULT, Dialect
from kit._env import SNAPSHOT_MEDIA_TYPE
from kit._headers import HeaderNames
from kit._jose import COMPACT, is_jwe
from kit._pii import is_pii_in_context, is_pii_name, is_pii_value, words
from kit.crypto import protected_header

__all__ = [
    "JWK_PRIVATE_MEMBERS",
    "SECRET_KINDS",
    "SECRET_NAMES",
    "Redactor",
    "fingerprint",
    "is_pii_name",
    "jose_kind",
    "marker",
    "secret_kind",
]

_SHORT = 12  # known values shorter than this are replaced only where they stand alone
_MIN = 4  # shorter values would replace ordinary words
_URL_PORT = re.compile(
    r"(\b[a-z][a-z0-9+.-]*://(?:\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+)):\d{1,5}(?=[/?#\s\"']|$)"
)
# A form body: name=value pairs joined by "&", nothing else (no spaces, no line breaks).
_FORM = re.compile(r"[A-Za-z0-9._~%+\[\]-]+=[^&\s]*(?:&[A-Za-z0-9._~%+\[\]-]+=[^&\s]*)*")
# Content types whose bodies are binary whatever bytes they hold (a snapshot is a database).
_BINARY_TYPES = (SNAPSHOT_MEDIA_TYPE, "application/octet-stream", "image/", "audio/", "video/")

#: What names a secret: a field, header, query parameter or form field whose name ends in one
#: of these (its words cut and compared as PII names are: case, separators, camelCase, so
#: ``accessToken``, ``X-Api-Key``, ``Proxy-Authorization`` and ``client_secret`` are all
#: secret, a plural too) holds a secret. A name that goes on past it names something else
#: (``token_type``, ``token_lifetime_seconds``, ``api_key_id``); nor is ``expires_in`` one.
SECRET_NAMES = ("token", "secret", "password", "api key", "authorization", "cookie")
#: Abbreviations a name may use for one of :data:`SECRET_NAMES`.
_SECRET_ABBREVIATIONS = {"passwd": "password", "pwd": "password", "apikey": "apikey"}
#: The marker kind of a secret by the last words of its name joined with ``_`` (so
#: ``sessionToken``, ``X-Session-Token`` and ``session_token`` are one name); another secret
#: name's kind is its concept (``<token>``, ``<secret>``, ``<password>``, ``<api-key>``, ``<cookie>``).
SECRET_KINDS = {
    "access_token": "partner-token",
    "session_token": "session-token",
    "svc_session_id": "session-token",
    "control_token": "control-token",
    "svc_control_token": "control-token",
    "client_secret": "client-secret",
    "answers": "kyc-answers",
}
#: A JWK's private members (RFC 7518 §6.2.2 for EC, RFC 7518 §6.3.2 for RSA, RFC 7518 §6.4.1
#: for symmetric keys): secret inside a JWK (an object with ``kty``) whatever they are called
#: elsewhere.
JWK_PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "k", "oth"})
#: Fields that differ on every run, by name → marker.
VARYING_FIELDS = {"nonce": "<nonce>"}
_CONCEPTS = {"".join(n.split()): n.replace(" ", "-") for n in SECRET_NAMES}


def marker(kind: str) -> str:
    """What stands in place of a secret or personal value of ``kind``, wherever the kit hides
    one (the wire log, a report, an executed notebook): ``<kind>``.

    >>> marker("session-token")
    '<session-token>'
    """
    return f"<{kind}>"


@lru_cache(maxsize=4096)  # names come from servers too: bounded
def secret_kind(name: str) -> str | None:
    """The marker kind of a secret field or header by its name (:data:`SECRET_NAMES`,
    :data:`SECRET_KINDS`), or ``None`` when the name does not name a secret.

    >>> [secret_kind(n) for n in ("accessToken", "X-Api-Key", "sessionToken", "token_type")]
    ['partner-token', 'api-key', 'session-token', None]
    """
    cut = words(name)
    if not cut:
        return None
    for start in range(len(cut)):  # the longest known ending: x_session_token is a session's
        known = SECRET_KINDS.get("_".join(cut[start:]))
        if known is not None:
            return known
    last = _SECRET_ABBREVIATIONS.get(cut[-1], cut[-1])
    for tail in (last, last[:-1] if last.endswith("s") else None):
        for size in (1, 2):  # "api key" is two words, "apikey" one
            joined = "".join([*cut[-size:-1], tail]) if tail and len(cut) >= size else None
            if joined in _CONCEPTS:
                return _CONCEPTS[joined]
    return None


def fingerprint(value: str, salt: bytes) -> str:
    """A salted SHA-256 of a secret: what a run keeps to find it again, never the value."""
    return hashlib.sha256(salt + value.encode("utf-8")).hexdigest()


def jose_kind(compact: str) -> str:
    """What a compact JOSE string is by its segments: ``jwe`` (five), ``jws`` (three),
    ``jws-detached`` (three, the payload empty: ``header..signature``), else ``jose``.

    >>> [jose_kind(t) for t in ("eyJh.b.c.d.e", "eyJh.b.c", "eyJh..c", "eyJh.b.c.d")]
    ['jwe', 'jws', 'jws-detached', 'jose']
    """
    segments = compact.split(".")
    if len(segments) == 5:
        return "jwe"
    if len(segments) == 3:
        return "jws-detached" if segments[1] == "" else "jws"
    return "jose"


def _jose_marker(compact: str, kids: dict[str, str] | None = None) -> str:
    try:
        header = protected_header(compact)
    except ValueError:
        return "<JOSE>"
    if kids and header.get("kid") in kids:
        header = {**header, "kid": kids[header["kid"]]}
    encrypted = jose_kind(compact) == "jwe"
    names = ("alg", "enc", "kid") if encrypted else ("alg", "kid")
    shown = " ".join(f"{n}={header[n]}" for n in names if isinstance(header.get(n), str))
    kind = "JWE" if encrypted else "JWS"
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
    national ids are always known. ``dialect``: the server's spelling (:mod:`kit._dialect`): a
    name it gives a secret (a renamed ``session_token``), its partner token header and scheme
    and its idempotency header are judged as the kit's own.
    """

    def __init__(self, secrets: Iterable[tuple[str, str]] = (), *, dialect: Dialect = DEFAULT) -> None:
        names = HeaderNames.of(dialect)
        self._kit_name = None if dialect.plain else dialect.name_from_wire
        self._token_header = names.authorization.lower()
        self._schemes = {"bearer", str(dialect.chosen("A02", "scheme")).lower()}
        self._idempotency_header = names.idempotency_key.lower()
        self._lock = threading.Lock()
        self._known: dict[str, str] = {}
        self._pattern: re.Pattern[str] | None = None
        self._keys: dict[str, int] = {}
        self._kids: dict[str, str] = {}
        for kind, value in [*_persona_values(), *secrets]:
            self.learn(kind, value)

    # -- what is known -----------------------------------------------------------------------

    def learn(self, kind: str, value: str) -> None:
        """Replace ``value`` by ``<kind>`` from now on, wherever it appears."""
        if not isinstance(value, str) or len(value) < _MIN or value.startswith("<"):
            return
        with self._lock:
            if value not in self._known:
                self._known[value] = marker(kind)
                self._pattern = None

    def name_key(self, kid: str, name: str) -> None:
        """Show the key id ``kid`` as ``<name>`` in JOSE markers (the client's own device key,
        made anew each run: ``kid=<device-key-id>``)."""
        with self._lock:
            self._kids[kid] = marker(name)

    def fingerprints(self, salt: bytes, kinds: Iterable[str] | None = None) -> set[str]:
        """Salted hashes (:func:`fingerprint`) of the known values (of ``kinds``, default all)."""
        wanted = None if kinds is None else {marker(k) for k in kinds}
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
        text = COMPACT.sub(lambda m: _jose_marker(m.group(), self._kids), text)
        return _URL_PORT.sub(r"\1:<port>", text)

    def json(self, value: Any, name: str | None = None) -> Any:
        """A JSON value with secret, PII and varying fields replaced (by name and by value)."""
        if name is not None:
            spelled = secret_kind(self._kit_name(name)) if self._kit_name else None  # a dialect's name
            kind = spelled or secret_kind(name)
            if kind is not None and value is not None and not isinstance(value, bool):
                return self._secret(kind, value, name)
            varying = VARYING_FIELDS.get(name.lower())
            if varying is not None and isinstance(value, str):
                return varying
            if value is not None and not isinstance(value, bool) and is_pii_name(name):
                return "<pii>"  # A11's rule by meaning, the simulator's own (kit._pii)
        if is_pii_value(value) or is_pii_in_context(name, value):
            return "<pii>"  # a national id's shape, or a shape by the words near it (A11)
        if isinstance(value, dict):
            jwk = "kty" in value
            return {
                k: "<private-key>"
                if jwk and k in JWK_PRIVATE_MEMBERS and value[k] is not None
                else self.json(v, k if isinstance(k, str) else None)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value

    def _secret(self, kind: str, value: Any, name: str) -> Any:
        """A value under a secret's name: learned and replaced; an object under a generic
        name (``token: {...}``) is looked into (its own names decide), a list item by item."""
        generic = kind in _CONCEPTS.values()
        if generic and isinstance(value, dict):
            return self.json(value)
        if generic and isinstance(value, list):
            return [self.json(v, name) for v in value]
        if isinstance(value, str):
            self.learn(kind, value)
            if is_jwe(value):  # ciphertext: its shape shows
                return _jose_marker(value, self._kids)
        return marker(kind)

    def idempotency_key(self, value: str) -> str:
        with self._lock:
            number = self._keys.setdefault(value, len(self._keys) + 1)
        return f"<idempotency-key {number}>"

    def header(self, name: str, value: str) -> str:
        """One header's value as recorded."""
        lowered = name.lower()
        kind = "authorization" if lowered == self._token_header else secret_kind(lowered)
        if kind == "authorization":  # Authorization, Proxy-Authorization, a dialect's (A02)
            scheme, _, credentials = value.partition(" ")
            if scheme.lower() in self._schemes:
                self.learn("partner-token", credentials.strip())
                return f"{scheme} {self._known.get(credentials.strip(), '<partner-token>')}"
            if scheme.lower() == "basic":
                self._learn_basic(credentials.strip())
                return f"{scheme} <client-credentials>"
            self.learn("credentials", value.strip())
            return "<credentials>"
        if kind is not None:
            self.learn(kind, value)
            return marker(kind)
        if lowered == self._idempotency_header:
            return self.idempotency_key(value)
        if lowered == "date":
            return "<date>"
        if lowered == "host":
            return re.sub(r":\d{1,5}$", ":<port>", value)
        return self.text(value)

    def url(self, url: str) -> str:
        """A URL as recorded: each query parameter as a form field (by name: secret, PII),
        then known values, JOSE strings and the port as in free text."""
        head, mark, query = url.partition("?")
        if mark:
            query, hashmark, fragment = query.partition("#")
            query = self._form(query) + hashmark + fragment
        return self.text(head + mark + query)

    def _learn_basic(self, credentials: str) -> None:
        try:
            pair = base64.b64decode(credentials, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return
        _, _, secret = pair.partition(":")
        self.learn("client-secret", unquote_plus(secret))

    def body(self, content: bytes, content_type: str) -> str | None:
        """A body as recorded: JSON and forms field by field (JSON and a form in any text body,
        whatever its content type says), other text as :meth:`text`; binary bodies are
        described, never kept."""
        if not content:
            return None
        ctype = content_type.lower()
        described = f"<{len(content)} bytes of {content_type or 'binary data'}>"
        if ctype.startswith(_BINARY_TYPES) or b"\x00" in content:
            return described
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            return described
        if "json" in ctype or text.lstrip()[:1] in ("{", "["):
            try:
                parsed = json.loads(text)
            except ValueError:
                return self.text(text)
            return json.dumps(self.json(parsed), ensure_ascii=False)
        if "x-www-form-urlencoded" in ctype or _FORM.fullmatch(text.strip()):
            return self._form(text.strip() if "x-www-form-urlencoded" not in ctype else text)
        return self.text(text)

    def _form(self, text: str) -> str:
        """A form or a query string field by field; as it was when no field is replaced."""
        pairs = parse_qsl(text, keep_blank_values=True)
        shown = [(k, self._form_value(k, v)) for k, v in pairs]
        if shown == pairs:
            return text
        return urlencode(shown, safe="<>= ")

    def _form_value(self, name: str, value: str) -> str:
        return str(self.json(value, name))
