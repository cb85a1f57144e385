"""Partner API kit: a client, a simulator (``kit.sim``) and notebook regression runs.

The client's public surface is small::

    import kit
    api = kit.connect("sim")                 # or kit.connect("sandbox")
    api.sessions.create("anonymous")
    account = api.accounts.create()

Errors live in :mod:`kit.errors` (``kit.errors.by_code``), webhook verification for
partners' own servers in :mod:`kit.webhooks` (``kit.webhooks.verify``).
"""

from __future__ import annotations

from kit import errors, webhooks
from kit.client import Client, connect
from kit.errors import ApiError, KitError
from kit.models import Money
from kit.sensitive import Sensitive

__version__ = "0.1.0"

__all__ = [
    "ApiError",
    "Client",
    "KitError",
    "Money",
    "Sensitive",
    "connect",
    "errors",
    "webhooks",
]
