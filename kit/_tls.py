"""Mutual TLS of the kit's ``httpx`` clients: the files (:class:`TlsFiles`) and what a TLS
failure means.

Building a context loads a CA bundle: the transport, the requestor's side clients and
``kit.simulate``'s many clients all take theirs through :func:`kit._http.tls_context_for`
(re-exported here), built once per what they hold (benchmarks/bench.py FIXES: "one shared TLS
context"). Without :class:`TlsFiles` that is httpx's default context, one per process; with
them (a sandbox that requires a client certificate, or trusts a private CA), one context per
set of files, built again when a file changes.

:class:`TlsFiles` holds paths only: the kit never reads a key itself, it hands the paths to
:meth:`ssl.SSLContext.load_cert_chain`, and a key's passphrase stays :class:`~kit.Sensitive`.

    >>> files = TlsFiles.resolve({}, {"PARTNER_API_CA_BUNDLE": "/etc/sandbox-ca.pem"})
    >>> files.ca_bundle, files.client_cert
    ('/etc/sandbox-ca.pem', None)
    >>> TlsFiles.resolve({}, {}) is None
    True
"""

from __future__ import annotations

import functools
import os
import ssl
import stat
from collections.abc import Mapping
from typing import Any, NamedTuple

import httpx

from kit import _env as env
from kit._http import shared_ssl_context, tls_context_for
from kit._sensitive import Sensitive
from kit.errors import ConfigError, TransportError

__all__ = [
    "TLS_OPTIONS",
    "TlsFiles",
    "explain_failure",
    "shared_ssl_context",
    "tls_context_for",
    "transport_error",
]

#: ``kit.connect``'s TLS options and the environment variable each falls back to.
TLS_OPTIONS: Mapping[str, str] = {
    "ca_bundle": env.CA_BUNDLE,
    "client_cert": env.CLIENT_CERT,
    "client_key": env.CLIENT_KEY,
    "client_key_passphrase": env.CLIENT_KEY_PASSPHRASE,
}

#: What each file is, in the words of an error.
_NAMES = {
    "ca_bundle": "the CA bundle",
    "client_cert": "the client certificate",
    "client_key": "the client key",
}


class TlsFiles(NamedTuple):
    """What a client trusts and presents over TLS: the CA bundle that replaces the default
    trust (certifi's, as ``curl --cacert`` does), the client certificate (PEM; it may hold the
    key too) and its private key (PEM), as absolute paths; the key's passphrase, if it has one."""

    ca_bundle: str | None = None
    client_cert: str | None = None
    client_key: str | None = None
    client_key_passphrase: Sensitive[str] | None = None  # masked in a repr

    @classmethod
    def resolve(cls, given: Mapping[str, Any], environ: Mapping[str, str]) -> TlsFiles | None:
        """The files of ``given`` (``kit.connect``'s options, :data:`TLS_OPTIONS`), each else
        its environment variable, except that a certificate given brings its own key (given, or
        none: its file holds it); ``None`` when nothing names any. Paths are made absolute here,
        so a kernel or worker in another folder finds the same files.
        """
        own = {"client_key"} if given.get("client_cert") else set()
        values = {
            name: given.get(name) or (None if name in own else environ.get(var)) or None
            for name, var in TLS_OPTIONS.items()
        }
        if not any(values.values()):
            return None
        phrase = values.pop("client_key_passphrase")
        if phrase is not None and not isinstance(phrase, Sensitive):
            phrase = Sensitive(str(phrase), label="client_key_passphrase")
        paths = {name: os.path.abspath(os.fspath(value)) if value else None for name, value in values.items()}
        return cls(client_key_passphrase=phrase, **paths)

    def context(self) -> ssl.SSLContext:
        """The TLS context of these files: built on first use, shared while no file changes.

        Raises:
            ConfigError: a key without a certificate, a file missing or unusable, a key that does
                not match its certificate, a passphrase missing or wrong; the setting named,
                never a key's content.
        """
        if self.client_cert is None and self.client_key is not None:
            needs = f"set {env.CLIENT_CERT} (client_cert=) with {env.CLIENT_KEY}"
            raise ConfigError(f"a client key needs its certificate: {needs}")
        stamps = tuple(_stamp(path, option) for option, path in self._paths())
        phrase = self.client_key_passphrase.reveal() if self.client_key_passphrase is not None else None
        return _context(self.ca_bundle, self.client_cert, self.client_key, phrase, stamps)

    def environ(self) -> dict[str, str]:
        """These files as their environment variables (absolute paths), and the passphrase: what
        a process in another folder (a ``kit regress`` kernel, a population's worker) is given."""
        found = {TLS_OPTIONS[option]: path for option, path in self._paths()}
        if self.client_key_passphrase is not None:
            found[env.CLIENT_KEY_PASSPHRASE] = self.client_key_passphrase.reveal()
        return found

    def _paths(self) -> list[tuple[str, str]]:
        named = {"ca_bundle": self.ca_bundle, "client_cert": self.client_cert, "client_key": self.client_key}
        return [(option, path) for option, path in named.items() if path is not None]


def _stamp(path: str, option: str) -> tuple[int, int, int]:
    """What says the file at ``path`` changed: inode, size, modification time."""
    try:
        found = os.stat(path)
    except OSError as exc:
        raise ConfigError(f"{_NAMES[option]} {path} ({TLS_OPTIONS[option]}): {_why(exc)}") from None
    if not stat.S_ISREG(found.st_mode):
        raise ConfigError(f"{_NAMES[option]} {path} ({TLS_OPTIONS[option]}) is not a file")
    return found.st_ino, found.st_size, found.st_mtime_ns


def _why(exc: OSError) -> str:
    return exc.strerror.lower() if exc.strerror else type(exc).__name__


@functools.lru_cache(maxsize=16)
def _context(
    ca_bundle: str | None,
    cert: str | None,
    key: str | None,
    phrase: str | None,
    stamps: tuple[tuple[int, int, int], ...],
) -> ssl.SSLContext:
    """A context trusting ``ca_bundle`` (else httpx's default trust) and presenting ``cert``
    with ``key``; ``stamps`` is part of the cache key only (a changed file, a new context)."""
    try:
        context = ssl.create_default_context(cafile=ca_bundle) if ca_bundle else httpx.create_ssl_context()
    except (ssl.SSLError, OSError) as exc:
        refused = f"{env.CA_BUNDLE} ({ca_bundle}) holds no usable PEM certificate: {_reason(exc)}"
        raise ConfigError(refused) from None
    if cert is None:
        return context

    def passphrase() -> str:
        if phrase is None:  # without this, OpenSSL would prompt on the terminal
            raise ConfigError(f"the client key is encrypted: set {env.CLIENT_KEY_PASSPHRASE}")
        return phrase

    try:
        context.load_cert_chain(cert, key, password=passphrase)
    except ssl.SSLError as exc:
        raise ConfigError(_chain_refused(exc, cert, key, phrase is not None)) from None
    return context


def _chain_refused(exc: ssl.SSLError, cert: str, key: str | None, phrase: bool) -> str:
    """Why OpenSSL refused a certificate and key, in words naming the settings (never a key)."""
    if _reason(exc) == "KEY_VALUES_MISMATCH":
        return f"the client key ({env.CLIENT_KEY}) does not match the certificate {cert} ({env.CLIENT_CERT})"
    if key is None:
        return (
            f"{env.CLIENT_CERT} ({cert}) is not a PEM certificate followed by its private key: "
            f"set {env.CLIENT_KEY} to the key's file"
        )
    if phrase:
        return f"{env.CLIENT_KEY} ({key}) cannot be loaded: a wrong {env.CLIENT_KEY_PASSPHRASE}, or not PEM"
    return f"{env.CLIENT_CERT} ({cert}) and {env.CLIENT_KEY} ({key}) are not a PEM certificate and key"


def _reason(exc: BaseException) -> str:
    return str(getattr(exc, "reason", None) or type(exc).__name__)


def explain_failure(exc: BaseException, url: httpx.URL | str, files: TlsFiles | None) -> str:
    """What a failed exchange with ``url`` most likely means for its TLS, in one sentence
    (``""``: nothing to say): a server certificate not trusted or not naming the host, a server
    that requires a client certificate (mutual TLS) this client did not present, or refused the
    one it did. Under TLS 1.3 a server refuses a client certificate after the handshake, by
    closing the connection: a closed connection is read so only on ``https``.

        >>> explain_failure(httpx.RemoteProtocolError("Server disconnected"), "https://s.example", None)[:45]
        'the server closed the connection unanswered: '
    """
    if httpx.URL(str(url)).scheme != "https":
        return ""
    said = " ".join(str(e) for e in _chain(exc))
    if "CERTIFICATE_VERIFY_FAILED" in said:
        if "mismatch" in said.lower():
            return f"the server's certificate does not name the host of {url}"
        trusted = f"the CA bundle {files.ca_bundle}" if files and files.ca_bundle else "the default CAs"
        return f"the server's certificate is not signed by {trusted}: set {env.CA_BUNDLE} to its CA"
    asked = "CERTIFICATE_REQUIRED" in said.upper().replace(" ", "_")
    refused = any(alert in said for alert in ("ALERT_UNKNOWN_CA", "ALERT_BAD_CERTIFICATE"))
    closed = isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError)  # after the handshake
    presented = files is not None and files.client_cert is not None
    unanswered = "the server closed the connection unanswered:"
    if not presented and (asked or closed):
        start = "the server requires" if asked else f"{unanswered} if it requires"
        return (
            f"{start} a client certificate (mutual TLS), set {env.CLIENT_CERT} and {env.CLIENT_KEY} "
            "(kit regress --client-cert/--client-key)"
        )
    if presented and (refused or asked or closed):
        start = "the server refused" if refused or asked else f"{unanswered} it may refuse"
        return f"{start} the client certificate of {env.CLIENT_CERT}: check that the server's CA signed it"
    return ""


def transport_error(
    message: str, exc: BaseException, url: httpx.URL | str, files: TlsFiles | None
) -> TransportError:
    """A :class:`~kit.errors.TransportError` saying ``message``, its hint what the failure most
    likely means for TLS (:func:`explain_failure`) where it says anything."""
    error = TransportError(message)
    error.hint = explain_failure(exc, url, files) or error.hint
    return error


def _chain(exc: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found
