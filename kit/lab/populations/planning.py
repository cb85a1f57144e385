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
import hashlib
import math
import random
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import pandas as pd

from kit import register

__all__ = [
    "CARD_TYPES",
    "CLOSE_REASONS",
    "EVENT_TYPES",
    "CustomerPlan",
    "Draws",
    "plan",
    "plan_shard",
    "plans_table",
    "shard_bounds",
    "shard_seed",
]

#: The close reasons the simulator accepts (register entry A15).
CLOSE_REASONS: tuple[str, ...] = tuple(register.value("A15")["reasons"])
#: The card types (register entry A13), in the register's order (the draws depend on it).
CARD_TYPES: tuple[str, ...] = tuple(register.value("A13")["types"])
#: The spec's eight inbound event types, in the spec's order.
EVENT_TYPES: tuple[str, ...] = tuple(register.fact("inbound_event_types"))


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


def shard_bounds(customers: int, shards: int) -> list[tuple[int, int]]:
    """The customers of each shard: contiguous ``[first, end)`` ranges, sizes differing by at most one.

    Example::

        >>> shard_bounds(10, 3)
        [(0, 3), (3, 6), (6, 10)]
    """
    return [(k * customers // shards, (k + 1) * customers // shards) for k in range(shards)]


def shard_seed(seed: int, shard: int) -> int:
    """The seed of shard ``shard``'s simulator: the run's seed for shard 0, else derived from both.

    Example::

        >>> shard_seed(7, 0), shard_seed(7, 1) == shard_seed(7, 1), shard_seed(7, 1) != shard_seed(8, 1)
        (7, True, True)
    """
    if shard == 0:
        return seed
    digest = hashlib.sha256(f"kit-shard:{seed}:{shard}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


@dataclasses.dataclass(frozen=True)
class Draws:
    """What every customer's plan is drawn from: the seed and the rates, checked when built.

    Example::

        >>> Draws(seed=3, p2p_rate=0.9).kyc_failure_rate
        0.05

    Raises:
        ValueError: a rate outside its range, an unknown close reason, or no personas.
    """

    seed: int = 7
    kyc_failure_rate: float = 0.05
    reason_mix: Mapping[str | None, float] | None = None
    event_rate: float = 1.0
    p2p_rate: float = 0.5
    personas: Sequence[Mapping[str, Any]] | None = None

    def __post_init__(self) -> None:
        for name, rate in (("kyc_failure_rate", self.kyc_failure_rate), ("p2p_rate", self.p2p_rate)):
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1")
        if self.event_rate < 0:
            raise ValueError("event_rate must be >= 0")
        _weights(self.reason_mix)
        if self.personas is not None and not self.personas:
            raise ValueError("no personas to draw customers from")


def plan(
    customers: int,
    *,
    seed: int = 7,
    kyc_failure_rate: float = 0.05,
    reason_mix: Mapping[str | None, float] | None = None,
    event_rate: float = 1.0,
    p2p_rate: float = 0.5,
    personas: Sequence[Mapping[str, Any]] | None = None,
    shards: int = 1,
) -> list[CustomerPlan]:
    """Draw every customer's plan from the seed (no network): the plans of every shard, in order.

    Each aspect has its own ``random.Random`` stream (``f"{seed}:kyc"``, ``:cards``, ``:events``,
    ``:p2p``), drawn in customer order whatever the journeys and the shards: changing the event
    rate does not change who fails KYC, and neither does the shard count. The customers are split
    into ``shards`` contiguous ranges (:func:`shard_bounds`) and each shard plans its own
    (:func:`plan_shard`). A P2P recipient is an earlier customer of the same shard planned to
    pass KYC (``None`` when there is none yet): the one draw that depends on the shards.

    Example::

        >>> plans = plan(100, seed=7, kyc_failure_rate=0.2)
        >>> sum(p.fails_kyc for p in plans), plans[0].device["device_id"]
        (29, 'sim-7-00000')
        >>> sharded = plan(100, seed=7, kyc_failure_rate=0.2, shards=4)
        >>> [p.fails_kyc for p in sharded] == [p.fails_kyc for p in plans], sharded[:25] == plans[:25]
        (True, True)

    Raises:
        ValueError: a rate outside its range, an unknown close reason, ``customers`` < 0 or
            ``shards`` < 1.
    """
    if customers < 0:
        raise ValueError("customers must be >= 0")
    if shards < 1:
        raise ValueError("shards must be >= 1")
    draws = Draws(seed, kyc_failure_rate, reason_mix, event_rate, p2p_rate, personas)
    bounds = enumerate(shard_bounds(customers, shards))
    return [p for k, (first, end) in bounds for p in plan_shard(k, first, end, draws)]


def plan_shard(shard: int, first: int, end: int, draws: Draws | None = None) -> list[CustomerPlan]:
    """The plans of one shard: customers ``first`` to ``end - 1`` (global numbers), with
    ``draws`` (default :class:`Draws`); see :func:`plan`.

    The run's streams are drawn from customer 0 (the draws only, no plan built, before
    ``first``: about 4 µs a customer), so every customer's draws are the same whatever the
    shards; only a P2P recipient is picked among the shard's own earlier customers.

    Example::

        >>> [p.customer for p in plan_shard(1, 3, 6, Draws(seed=7))]
        [3, 4, 5]
        >>> plan_shard(1, 3, 6, Draws(seed=7))[0].fails_kyc == plan(6, seed=7)[3].fails_kyc
        True
    """
    d = draws or Draws()
    reasons, weights = _weights(d.reason_mix)
    people = list(d.personas if d.personas is not None else register.personas())
    # One stream per aspect, each derived from the seed: a draw of one aspect (a Poisson count
    # of events, say) never shifts another (who fails KYC).
    kyc, cards, events, p2p = (
        random.Random(f"{d.seed}:{aspect}") for aspect in ("kyc", "cards", "events", "p2p")
    )
    plans: list[CustomerPlan] = []
    anyone = False  # an earlier customer (of any shard) planned to pass KYC: the recipient draw happens
    eligible: list[int] = []  # this shard's earlier customers planned to pass KYC
    for i in range(end):
        fails = kyc.random() < d.kyc_failure_rate
        card_type = cards.choice(CARD_TYPES)
        reason = cards.choices(reasons, weights)[0]
        kinds = tuple(events.choice(EVENT_TYPES) for _ in range(_poisson(events, d.event_rate)))
        sends = p2p.random() < d.p2p_rate
        amount = Decimal(p2p.randint(100, 5000)) / 100
        pick = p2p.random() if anyone else None
        anyone = anyone or not fails
        if i < first:
            continue
        to = eligible[int(pick * len(eligible))] if pick is not None and eligible else None
        persona = people[i % len(people)]
        base = dict(persona.get("device") or {})
        plans.append(
            CustomerPlan(
                customer=i,
                persona_id=str(persona.get("persona_id")),
                device={
                    "device_id": f"sim-{d.seed}-{i:05d}",
                    "platform": str(base.get("platform", "web")),
                    "model": str(base.get("model", "simulated")),
                    "os_version": str(base.get("os_version", "1")),
                },
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
