"""Every ``httpx.Client`` the kit builds comes from :func:`http_client` (an ``httpx.AsyncClient``,
``kit proxy``'s, from :func:`async_http_client`, with the same TLS settings).

So one ``transport`` given to :func:`kit.connect` (an ``httpx.MockTransport`` in a test, a
partner's own transport with a proxy) carries every request of that client: its calls, its token
exchanges and its side connections (the simulator's clock). Without one, httpx's own transport is
built with the TLS context of the base URL and the client's :class:`~kit._tls.TlsFiles` (a
client certificate, a CA bundle: mutual TLS to a sandbox), shared while they hold the same files.

    >>> mock = httpx.MockTransport(handler)                                    # doctest: +SKIP
    >>> http = http_client("https://sandbox.example", transport=mock)          # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import httpx

from kit._tls import TlsFiles, tls_context_for

__all__ = ["async_http_client", "http_client"]

#: httpx's event hooks: ``{"request": [fn, …], "response": [fn, …]}``.
EventHooks = Mapping[str, list[Callable[..., Any]]]


def http_client(
    base_url: str | None = None,
    *,
    transport: httpx.BaseTransport | None = None,
    tls: TlsFiles | None = None,
    timeout: float | httpx.Timeout = 10.0,
    headers: Mapping[str, str] | None = None,
    event_hooks: EventHooks | None = None,
) -> httpx.Client:
    """An ``httpx.Client`` of ``base_url`` (none: each request names its full URL) sending through
    ``transport``, else through httpx's own with the TLS context of the base URL and ``tls``
    (:func:`kit._tls.tls_context_for`); never following redirects (the API answers none it would
    want followed).

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
    base_url: str,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout: float | httpx.Timeout = 30.0,
    limits: httpx.Limits | None = None,
) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` of ``base_url``, as :func:`http_client` builds a client: through
    ``transport``, else httpx's own with the base URL's TLS context; never following redirects."""
    options: dict[str, Any] = {"timeout": timeout, "follow_redirects": False, "base_url": base_url}
    if limits is not None:
        options["limits"] = limits
    if transport is not None:
        options["transport"] = transport
    else:
        options["verify"] = tls_context_for(base_url)
    return httpx.AsyncClient(**options)
