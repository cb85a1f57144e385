"""Population planning: every synthetic customer's plan, drawn from the seed before anything runs.

Who answers the KYC questions wrong on purpose, which card type and close reason, which inbound
events, whether and how much they send by P2P and to whom — each aspect from its own seeded
``random.Random`` stream. No network: :func:`plan` is pure.

Example::

    >>> plans = plan(3, seed=7)
    >>> [p.persona_id for p in plans]
    ['persona-01', 'persona-02', 'persona-03']
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import pandas as pd

from kit import register

__all__ = ["CARD_TYPES", "CLOSE_REASONS", "EVENT_TYPES", "CustomerPlan", "plan", "plans_table"]

#: The close reasons the simulator accepts (register entry A15).
CLOSE_REASONS: tuple[str, ...] = tuple(register.value("A15")["reasons"])
#: The card types (register entry A13), in the register's order (the draws depend on it).
CARD_TYPES: tuple[str, ...] = tuple(register.value("A13")["types"])
#: The spec's eight inbound event types, in the spec's order.
EVENT_TYPES: tuple[str, ...] = tuple(register.spec()["inbound_event_types"])


@dataclasses.dataclass(frozen=True)
class CustomerPlan:
    """What one synthetic customer will do, drawn from the seed before anything runs."""

    customer: int
    persona_id: str
    device: Mapping[str, str]
    fails_kyc: bool
    card_type: str
    close_reason: str | None
    events: tuple[str, ...]
    p2p_amount: Decimal | None
    p2p_to: int | None


def _poisson(rng: random.Random, mean: float) -> int:
    """Knuth's method (means here are small); 0 for a mean of 0."""
    if mean <= 0:
        return 0
    limit, k, p = math.exp(-mean), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


def _weights(reason_mix: Mapping[str | None, float] | None) -> tuple[list[str | None], list[float]]:
    mix: Mapping[str | None, float] = reason_mix or dict.fromkeys(CLOSE_REASONS, 1.0)
    unknown = [r for r in mix if r is not None and r not in CLOSE_REASONS]
    if unknown:
        raise ValueError(f"unknown close reason(s) {unknown}; allowed: {', '.join(CLOSE_REASONS)} or None")
    if any(w < 0 for w in mix.values()) or sum(mix.values()) <= 0:
        raise ValueError("reason_mix weights must be non-negative and not all zero")
    return list(mix), [float(w) for w in mix.values()]


def plan(
    customers: int,
    *,
    seed: int = 7,
    kyc_failure_rate: float = 0.05,
    reason_mix: Mapping[str | None, float] | None = None,
    event_rate: float = 1.0,
    p2p_rate: float = 0.5,
    personas: Sequence[Mapping[str, Any]] | None = None,
) -> list[CustomerPlan]:
    """Draw every customer's plan from the seed (no network).

    Each aspect has its own ``random.Random`` stream derived from the seed (``f"{seed}:kyc"``,
    ``:cards``, ``:events``, ``:p2p``), drawn in customer order whatever the journeys: changing
    the event rate does not change who fails KYC. A P2P recipient is an earlier customer
    planned to pass KYC (``None`` when there is none yet).

    Example::

        >>> plans = plan(100, seed=7, kyc_failure_rate=0.2)
        >>> sum(p.fails_kyc for p in plans), plans[0].device["device_id"]
        (29, 'sim-7-00000')

    Raises:
        ValueError: a rate outside its range or an unknown close reason.
    """
    if customers < 0:
        raise ValueError("customers must be >= 0")
    for name, rate in (("kyc_failure_rate", kyc_failure_rate), ("p2p_rate", p2p_rate)):
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"{name} must be between 0 and 1")
    if event_rate < 0:
        raise ValueError("event_rate must be >= 0")
    reasons, weights = _weights(reason_mix)
    people = list(personas if personas is not None else register.personas())
    if not people:
        raise ValueError("no personas to draw customers from")
    # One stream per aspect, each derived from the seed: a draw of one aspect (a Poisson count
    # of events, say) never shifts another (who fails KYC).
    kyc, cards, events, p2p = (
        random.Random(f"{seed}:{aspect}") for aspect in ("kyc", "cards", "events", "p2p")
    )
    plans: list[CustomerPlan] = []
    eligible: list[int] = []
    for i in range(customers):
        persona = people[i % len(people)]
        base = dict(persona.get("device") or {})
        device = {
            "device_id": f"sim-{seed}-{i:05d}",
            "platform": str(base.get("platform", "web")),
            "model": str(base.get("model", "simulated")),
            "os_version": str(base.get("os_version", "1")),
        }
        fails = kyc.random() < kyc_failure_rate
        card_type = cards.choice(CARD_TYPES)
        reason = cards.choices(reasons, weights)[0]
        kinds = tuple(events.choice(EVENT_TYPES) for _ in range(_poisson(events, event_rate)))
        sends = p2p.random() < p2p_rate
        amount = Decimal(p2p.randint(100, 5000)) / 100
        to = eligible[int(p2p.random() * len(eligible))] if eligible else None
        plans.append(
            CustomerPlan(
                customer=i,
                persona_id=str(persona.get("persona_id")),
                device=device,
                fails_kyc=fails,
                card_type=card_type,
                close_reason=reason,
                events=kinds,
                p2p_amount=amount if sends else None,
                p2p_to=to if sends else None,
            )
        )
        if not fails:
            eligible.append(i)
    return plans


def plans_table(plans: Sequence[CustomerPlan]) -> pd.DataFrame:
    """Plans as a table, one row per customer (persona ids only, never PII).

    Example::

        >>> plans_table(plan(3, seed=7))[["customer", "persona_id", "fails_kyc"]]
           customer  persona_id  fails_kyc
        0         0  persona-01      False
        1         1  persona-02      False
        2         2  persona-03       True
    """
    rows = [
        {
            "customer": p.customer,
            "persona_id": p.persona_id,
            "device_id": p.device["device_id"],
            "fails_kyc": p.fails_kyc,
            "card_type": p.card_type,
            "close_reason": p.close_reason,
            "events": len(p.events),
            "p2p_amount": p.p2p_amount,
            "p2p_to": p.p2p_to,
        }
        for p in plans
    ]
    columns = [
        "customer",
        "persona_id",
        "device_id",
        "fails_kyc",
        "card_type",
        "close_reason",
        "events",
        "p2p_amount",
        "p2p_to",
    ]
    return pd.DataFrame(rows, columns=columns).astype({"p2p_to": "Int64"})
