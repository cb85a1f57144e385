"""Names the kit shares with its environment: environment variables, the simulator's
built-in partner clients, and which hosts are this machine.

One place for each name, read by the client (``kit._config``), the simulator (``kit.sim``),
``kit serve`` and ``kit regress`` alike. The control plane's header is a name of the wire, held
by :mod:`kit._headers` (``CONTROL_TOKEN``). This module imports nothing of the kit, so every
room may import it cheaply.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

__all__ = [
    "ACCESS_TOKEN",
    "BASE_URL",
    "CA_BUNDLE",
    "CLIENT_CERT",
    "CLIENT_ID",
    "CLIENT_KEY",
    "CLIENT_KEY_PASSPHRASE",
    "CLIENT_SECRET",
    "EXPECT_CHOICES",
    "PARTNER_CHOICES",
    "REGRESS",
    "REGRESS_PYTHON_M",
    "SANDBOX_FIXTURES",
    "SECRET_VARIABLES",
    "SIM_CHOICES",
    "SIM_CONTROL_TOKEN",
    "SIM_PARTNERS",
    "SIM_PARTNER_CLIENTS",
    "SNAPSHOT_MEDIA_TYPE",
    "is_loopback",
    "is_loopback_url",
    "parse_partners",
]

# -- a partner sandbox (the ``sandbox`` profile) ----------------------------------------------
BASE_URL = "PARTNER_API_BASE_URL"
CLIENT_ID = "PARTNER_API_CLIENT_ID"
CLIENT_SECRET = "PARTNER_API_CLIENT_SECRET"
#: A partner token fetched once by ``kit regress`` for a whole sandbox run ("about once per
#: day", spec) and handed to the kernels through the environment, never as a parameter.
ACCESS_TOKEN = "PARTNER_API_ACCESS_TOKEN"
#: A TOML file of the sandbox's published test personas and their KYC answers.
SANDBOX_FIXTURES = "PARTNER_API_SANDBOX_FIXTURES"
#: A dialect file (a choice overlay, :mod:`kit._dialect`): how the server spells what the spec
#: does not show. The client speaks it on every profile; on ``sim`` the embedded simulator
#: serves it too (before ``KIT_SIM_CHOICES``, which keeps its meaning for ``kit serve``).
PARTNER_CHOICES = "PARTNER_API_CHOICES"
#: Mutual TLS (:mod:`kit._tls`), for every ``https`` connection the kit makes: a client
#: certificate (PEM, which may hold its key too) and its private key (PEM), as paths; the kit
#: hands them to the TLS library and never reads a key itself.
CLIENT_CERT = "PARTNER_API_CLIENT_CERT"
CLIENT_KEY = "PARTNER_API_CLIENT_KEY"
#: The passphrase of an encrypted client key (a secret: the leak scan looks for it).
CLIENT_KEY_PASSPHRASE = "PARTNER_API_CLIENT_KEY_PASSPHRASE"
#: A CA bundle (PEM) trusted instead of the default CAs: a sandbox with a private CA.
CA_BUNDLE = "PARTNER_API_CA_BUNDLE"

# -- the simulator (``kit serve``) -------------------------------------------------------------
#: ``id:secret,id2:secret2`` — the partner clients ``kit serve`` accepts.
SIM_PARTNERS = "KIT_SIM_PARTNERS"
#: A choice overlay (TOML, :mod:`kit._choices`) the simulator serves instead of the register's
#: own values (``kit serve --choices FILE`` sets it for the server it starts).
SIM_CHOICES = "KIT_SIM_CHOICES"
#: The token the control plane (``/_sim``) requires off loopback.
SIM_CONTROL_TOKEN = "KIT_SIM_CONTROL_TOKEN"
#: The media type of a simulator state snapshot (a SQLite database: ``GET /_sim/snapshot``).
SNAPSHOT_MEDIA_TYPE = "application/vnd.sqlite3"

# -- kit regress ------------------------------------------------------------------------------
#: ``1`` in the kernels ``kit regress`` starts: notebooks show deterministic text, not widgets.
REGRESS = "KIT_REGRESS"

#: In a kernel ``kit regress`` forked (:mod:`kit.regress.kernels`): how to start ``python -m
#: MODULE`` forked from the same warm server, its imports done (a JSON list, the module and its
#: arguments follow); a population's worker processes start so (:mod:`kit.lab.populations.pool`).
REGRESS_PYTHON_M = "KIT_REGRESS_PYTHON_M"

#: A choice overlay a run expects (``kit regress --choices FILE``): choice checks compare with
#: its values (``kit.notebook.chosen``) instead of the register's.
EXPECT_CHOICES = "KIT_EXPECT_CHOICES"

#: The environment variables whose values are secrets, with the kind of secret each holds.
SECRET_VARIABLES: dict[str, str] = {
    CLIENT_SECRET: "client-secret",
    ACCESS_TOKEN: "partner-token",
    SIM_CONTROL_TOKEN: "control-token",
    CLIENT_KEY_PASSPHRASE: "secret",
}

#: The partner clients the simulator ships with (client id → client secret), unless
#: ``KIT_SIM_PARTNERS`` says otherwise. The first is the ``sim`` profile's default.
SIM_PARTNER_CLIENTS: dict[str, str] = {
    "sim-partner": "sim-secret",
    "sim-partner-b": "sim-secret-b",
}


def parse_partners(raw: str, *, strict: bool = True) -> dict[str, str]:
    """The partner clients of a ``KIT_SIM_PARTNERS`` value (``id:secret,id2:secret2``).

    ``strict``: a malformed entry, or a client id named twice, raises ``ValueError`` naming it
    (never its secret; ``kit serve`` refuses to start); otherwise it is skipped (the leak
    scanner takes every secret it can read).

        >>> parse_partners("a:one, b:two")
        {'a': 'one', 'b': 'two'}
    """
    partners: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in raw.split(","))):
        client_id, sep, secret = item.partition(":")
        if strict and client_id in partners:
            raise ValueError(f"{SIM_PARTNERS} names the partner client {client_id!r} twice: name each once")
        if sep and client_id and secret:
            partners[client_id] = secret
        elif strict:
            raise ValueError(f"{SIM_PARTNERS} entries are client_id:secret, separated by commas")
    return partners


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine's loopback (``localhost``, 127.0.0.0/8, ``::1``).

    >>> is_loopback("127.0.0.1"), is_loopback("[::1]"), is_loopback("sandbox.example")
    (True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_loopback_url(url: str | None) -> bool:
    """Whether ``url``'s host is this machine's loopback (a receiver there can be reached).

    >>> is_loopback_url("http://127.0.0.1:8000"), is_loopback_url("https://sandbox.example")
    (True, False)
    """
    host = urlsplit(url or "").hostname
    return host is not None and is_loopback(host)
