"""TLS contexts of the kit's ``httpx`` clients (:mod:`kit._http`): built once per process, shared.

Building one loads the CA bundle: the transport, the requestor's side clients and
``kit.simulate``'s many clients all take theirs from here (benchmarks/bench.py FIXES: "one
shared TLS context").
"""

from __future__ import annotations

import functools
import ssl
from urllib.parse import urlsplit

import httpx

__all__ = ["shared_ssl_context", "tls_context_for"]


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The TLS context every kit ``httpx.Client`` in this process shares (httpx's default one).

    Building one loads the CA bundle, and ``kit.simulate`` builds a client per customer. An
    ``SSLContext`` is safe to share between clients and threads.
    """
    return httpx.create_ssl_context()


@functools.cache
def _no_trust_context() -> ssl.SSLContext:
    """The TLS context of a client whose base URL is plain ``http://`` (the embedded simulator,
    ``kit serve`` on loopback): such a client never does TLS, so it need not load the CA bundle
    (benchmarks/bench.py FIXES: "trusts nothing"). The context trusts no CA and still checks
    certificates and host names, so an ``https`` request sent through it would fail verification,
    never succeed unverified."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def tls_context_for(base_url: str) -> ssl.SSLContext:
    """The TLS context of a client of ``base_url``: one that trusts nothing for plain ``http``,
    the shared one with the CA bundle for anything else."""
    return _no_trust_context() if urlsplit(base_url).scheme.lower() == "http" else shared_ssl_context()
