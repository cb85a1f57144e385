"""Helpers for the simulator's HTTP contract tests, written from the wire contract alone.

Nothing here imports the client package (``kit._client``…) or the simulator's insides (only
``kit._env``, for the simulator's built-in partner clients, and ``kit.sim`` to start one): the
tests speak HTTP to a running simulator, as any independent client would, with joserfc and
``cryptography`` directly. One module per job; every name of theirs is importable from here too.

- :mod:`.contract`: the contract's literal values (codes, headers, lists).
- :mod:`.wire`: building a request, checking an answer, the partner token.
- :mod:`.control`: the simulator's control plane (reset, clock, ledger, faults).
- :mod:`.encryption`: the device, JWEs to the server and from it.
- :mod:`.resources`: accounts, persons, KYC, cards, events, documents.
- :mod:`.journeys`: sessions, the raw-HTTP onboarding journey, P2P transfers.
- :mod:`.webhooks`: a loopback receiver, subscriptions, signatures.
- :mod:`.clients`: an httpx client that checks every answer, for the fixtures.
- :mod:`.properties`: Hypothesis settings for property tests.
"""

from __future__ import annotations

import importlib
from typing import Any

_MODULES = (
    "contract",
    "wire",
    "control",
    "encryption",
    "resources",
    "journeys",
    "webhooks",
    "clients",
    "properties",
)


def __getattr__(name: str) -> Any:
    """``from tests.sim.helpers import journey``: the name, from whichever module holds it."""
    for module in _MODULES:
        found = getattr(importlib.import_module(f"{__name__}.{module}"), name, None)
        if found is not None:
            return found
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
