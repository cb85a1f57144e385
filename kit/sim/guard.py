"""A team server among its neighbours: whom it answers, and what it refuses to start with (A70).

``kit serve`` is shared: on a staging box, in CI, on a laptop beside a browser. A web page open in
that browser can send requests to it, and with DNS rebinding read the answers under a name of
its own; a peer on the network can try the credentials printed in ``--help``. So:

- every request must name the server in its ``Host`` (:meth:`Guard.host_refusal`), before any
  other check: 400 ``host-not-allowed``;
- the control plane refuses an ``Origin`` that is not the server's own
  (:meth:`Guard.origin_refusal`): 403 ``origin-not-allowed``;
- bound beyond loopback, the server does not start with the published partner credentials, nor
  with a control plane that has no token (:func:`start_refusal`); ``kit serve`` refuses the
  latter on loopback too once ``--allowed-host`` names a host (a proxy makes it reachable);
- bound beyond loopback, a webhook target must resolve to global addresses only, unless its
  host was allowed by name (:func:`webhook_target_refusal`, A39), at subscription and before
  every delivery attempt.

    >>> guard = Guard(Settings())
    >>> guard.allows_host("localhost:8000"), guard.allows_host("attacker.example")
    (True, False)
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from kit import _env as env
from kit import register
from kit.sim.asgi import first
from kit.sim.problems import Problem

if TYPE_CHECKING:
    from kit.sim.settings import Settings

__all__ = ["Guard", "StartRefused", "start_refusal", "webhook_target_refusal"]

_WILDCARDS = frozenset({"0.0.0.0", "::", ""})
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


class StartRefused(ValueError):
    """A simulator that must not start with these settings (:func:`start_refusal`)."""


def _name(host: str) -> str:
    """A host name as compared: lower case, no trailing dot, an IPv6 literal without brackets."""
    return host.strip().lower().rstrip(".").strip("[]")


def _host_of(header: str) -> str | None:
    """The name in a ``Host`` header (its port left out); None for one that cannot be parsed."""
    try:
        parts = urlsplit(f"//{header.strip()}")
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        return None
    return _name(parts.hostname) if parts.hostname else None


class Guard:
    """The ``Host`` names and ``Origin`` a simulator with ``settings`` answers (A70)."""

    def __init__(self, settings: Settings) -> None:
        bound = _name(settings.host)
        names = {_name(h) for h in settings.allowed_hosts}
        self.loopback = env.is_loopback(bound)
        if self.loopback or bound in _WILDCARDS:
            names |= _LOOPBACK_NAMES
        if bound in _WILDCARDS:
            names.add(_name(socket.gethostname()))
        elif not self.loopback:
            names.add(bound)
        self.names = frozenset(names)

    def allows_host(self, header: str | None) -> bool:
        """Whether a request with this ``Host`` header (None: none sent) is for this server."""
        if header is None:
            return self.loopback  # HTTP/1.0 on loopback: nothing else could have sent it
        name = _host_of(header)
        if name is None:
            return False
        return name in self.names or (self.loopback and env.is_loopback(name))

    def host_refusal(self, scope: Mapping[str, Any]) -> Problem | None:
        """400 ``host-not-allowed`` for a request whose Host does not name this server."""
        if self.allows_host(first(scope, b"host")):
            return None
        return Problem(
            400,
            "host-not-allowed",
            "This server answers only requests that name it in their Host header. Behind a "
            "reverse proxy, start it with --allowed-host NAME.",
            assumptions=("A70",),
        )

    def origin_refusal(self, scope: Mapping[str, Any]) -> Problem | None:
        """403 ``origin-not-allowed`` for a control-plane request from another origin."""
        origin = first(scope, b"origin")
        if origin is None:
            return None
        host = first(scope, b"host")
        if host is not None and _same_origin(origin, host):
            return None
        return Problem(
            403,
            "origin-not-allowed",
            "The control plane answers no request sent from another origin (a web page).",
            assumptions=("A70",),
        )


def _same_origin(origin: str, host: str) -> bool:
    """Whether ``origin`` (``scheme://host[:port]``) names the server the ``Host`` header names."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query:
        return False
    default = 443 if parts.scheme == "https" else 80
    try:
        target = urlsplit(f"//{host.strip()}")
        target_port = target.port
    except ValueError:
        return False
    return _name(parts.hostname) == _name(target.hostname or "") and (port or default) == (
        target_port or default
    )


def start_refusal(
    settings: Settings, *, published: Mapping[str, str] = env.SIM_PARTNER_CLIENTS
) -> str | None:
    """Why a simulator with ``settings`` must not start (A70), or None: a control plane whose
    token is shorter than A70's minimum, anywhere; bound beyond loopback, also a control plane
    with no token or the published partner credentials. (``kit serve`` also refuses
    ``--allowed-host`` with a control plane but no control token.)"""
    shortest = int(register.value("A70")["control_token_min_chars"])
    if settings.control and settings.control_token is not None and len(settings.control_token) < shortest:
        return (
            f"the control token ({env.SIM_CONTROL_TOKEN}) must have at least {shortest} characters (A70), "
            f"e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )
    if settings.on_loopback:
        return None
    if settings.control and settings.control_token is None:
        return (
            f"the control plane on a non-loopback host needs {env.SIM_CONTROL_TOKEN} (or pass --no-control)"
        )
    shared = sorted(cid for cid, secret in settings.partners.items() if published.get(cid) == secret)
    if shared:
        return (
            f"bound beyond loopback, the published partner credentials ({', '.join(shared)}) would "
            f"let anyone in: name your partner clients in {env.SIM_PARTNERS}='id:secret,…'"
        )
    return None


def _global(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.split("%", 1)[0]).is_global
    except ValueError:
        return False


async def webhook_target_refusal(url: str, settings: Settings) -> str | None:
    """Why webhooks may not go to ``url`` on a simulator with ``settings`` (A39), or None.

    On loopback: only loopback hosts and the hosts allowed by name. Beyond it: a host allowed by
    name, or one whose every address is global (a name is resolved now, each time).
    """
    host = _name(urlsplit(url).hostname or "")
    if host in {_name(h) for h in settings.webhook_hosts}:
        return None
    if settings.on_loopback:
        return None if env.is_loopback(host) else "not a loopback host"
    try:
        addresses: Iterable[str] = [str(ipaddress.ip_address(host))]
    except ValueError:
        try:
            found = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except OSError:
            return "its name does not resolve"
        addresses = [str(info[4][0]) for info in found]
    if not addresses or not all(_global(a) for a in addresses):
        return "it resolves to a loopback, link-local or private address"
    return None
