"""Every HTTP client the kit builds: an ``httpx.Client`` from :func:`http_client`, an
``httpx.AsyncClient`` (``kit proxy``'s upstream, the simulator's webhook deliveries) from
:func:`async_http_client`, each with its TLS context from :func:`tls_context_for`.

So one ``transport`` given to :func:`kit.connect` (an ``httpx.MockTransport`` in a test, a
partner's own transport with a proxy) carries every request of that client: its calls, its token
exchanges and its side connections (the simulator's clock). Without one, httpx's own transport is
built with the TLS context of the base URL and the client's TLS files (a client certificate, a
CA bundle: mutual TLS to a sandbox, :class:`kit._tls.TlsFiles`), shared while they hold the same
files. No client follows a redirect (the API answers none it would want followed, A25).

A module of the base room: the simulator builds its clients here too, and what it needs of the
client's TLS files is only their :meth:`~kit._tls.TlsFiles.context`.

    >>> mock = httpx.MockTransport(handler)                                    # doctest: +SKIP
    >>> http = http_client("https://sandbox.example", transport=mock)          # doctest: +SKIP
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Callable, Mapping
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx

__all__ = ["TlsSource", "async_http_client", "http_client", "shared_ssl_context", "tls_context_for"]

#: httpx's event hooks: ``{"request": [fn, …], "response": [fn, …]}``.
EventHooks = Mapping[str, list[Callable[..., Any]]]


class TlsSource(Protocol):
    """What gives a client its own TLS context (:class:`kit._tls.TlsFiles`)."""

    def context(self) -> ssl.SSLContext: ...


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The TLS context every kit client without TLS files of its own in this process shares
    (httpx's default one).

    Building one loads the CA bundle, and ``kit.simulate`` builds a client per customer. An
    ``SSLContext`` is safe to share between clients and threads.
    """
    return httpx.create_ssl_context()


@functools.cache
def _context_without_environment() -> ssl.SSLContext:
    """httpx's default context, ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` left unread (a client
    made with ``trust_env=False``, as httpx builds one for it)."""
    return httpx.create_ssl_context(trust_env=False)


@functools.cache
def _no_trust_context() -> ssl.SSLContext:
    """The TLS context of a client whose base URL is plain ``http://`` (the embedded simulator,
    ``kit serve`` on loopback): such a client never does TLS, so it need not load the CA bundle
    (benchmarks/bench.py FIXES: "trusts nothing"). The context trusts no CA and still checks
    certificates and host names, so an ``https`` request sent through it would fail verification,
    never succeed unverified."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def tls_context_for(
    base_url: str | None, files: TlsSource | None = None, *, trust_env: bool = True
) -> ssl.SSLContext:
    """The TLS context of a client of ``base_url``: one that trusts nothing for plain ``http``,
    else the one of ``files``, else the shared one with the CA bundle. ``base_url`` None: a
    client whose requests name their full URL, which may be ``https``.

    Raises:
        ConfigError: ``files`` cannot be used (:meth:`kit._tls.TlsFiles.context`).
    """
    if base_url is not None and urlsplit(base_url).scheme.lower() == "http":
        return _no_trust_context()
    if files is not None:
        return files.context()
    return shared_ssl_context() if trust_env else _context_without_environment()


def http_client(
    base_url: str | None = None,
    *,
    transport: httpx.BaseTransport | None = None,
    tls: TlsSource | None = None,
    timeout: float | httpx.Timeout = 10.0,
    headers: Mapping[str, str] | None = None,
    event_hooks: EventHooks | None = None,
) -> httpx.Client:
    """An ``httpx.Client`` of ``base_url`` (none: each request names its full URL) sending through
    ``transport``, else through httpx's own with the TLS context of the base URL and ``tls``
    (:func:`tls_context_for`); never following redirects.

    Raises:
        ConfigError: ``tls`` names a file that cannot be used (the setting named).
    """
    options: dict[str, Any] = {"timeout": timeout, "follow_redirects": False}
    if base_url is not None:
        options["base_url"] = base_url
    if headers is not None:
        options["headers"] = dict(headers)
    if event_hooks is not None:
        options["event_hooks"] = {kind: list(hooks) for kind, hooks in event_hooks.items()}
    if transport is not None:
        options["transport"] = transport  # its own TLS, proxies and certificates: no context built
    else:
        options["verify"] = tls_context_for(base_url, tls)
    return httpx.Client(**options)


def async_http_client(
    base_url: str | None = None,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout: float | httpx.Timeout = 30.0,
    limits: httpx.Limits | None = None,
    trust_env: bool = True,
) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` of ``base_url`` (none: each request names its full URL), as
    :func:`http_client` builds a client: through ``transport``, else httpx's own with the base
    URL's TLS context; never following redirects. ``trust_env=False``: nothing read from the
    environment (no proxies, no ``SSL_CERT_FILE``: the simulator's deliveries)."""
    options: dict[str, Any] = {"timeout": timeout, "follow_redirects": False}
    if base_url is not None:
        options["base_url"] = base_url
    if limits is not None:
        options["limits"] = limits
    if not trust_env:
        options["trust_env"] = False
    if transport is not None:
        options["transport"] = transport
    else:
        options["verify"] = tls_context_for(base_url, trust_env=trust_env)
    return httpx.AsyncClient(**options)
