"""The simulator's state: plain records in dicts, one :class:`State` per app, reset by seed.

Routes change state only after every check has passed, so a refused request leaves it as it
was (the order of checks, ``kit.sim.pipeline``). Nothing here holds clear-text PII: a person
keeps only the KYC questions and answers derived from it.

    >>> state = State(seed=7, clock_start="2025-01-06T09:00:00Z")
    >>> state.ids.next("acc").startswith("acc_")
    True
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import cache
from typing import Any

from kit.sim.clock import Clock
from kit.sim.crypto import ECKey, ServerKeys
from kit.sim.ids import Ids

DeviceId = tuple[str, str]  # (device_id, RFC 7638 thumbprint of its key)


@dataclass
class PartnerToken:
    partner: str
    expires_at: datetime
    revoked: bool = False


@dataclass
class Nonce:
    partner: str
    expires_at: datetime
    used: bool = False


@dataclass
class Session:
    token: str
    partner: str
    session_type: str
    strategy: str
    device: DeviceId
    device_key: ECKey
    created_at: datetime
    chain_start: datetime
    last_used: datetime
    account_id: str | None = None
    person_id: str | None = None
    ended: bool = False
    superseded: bool = False


@dataclass
class Account:
    account_id: str
    partner: str
    product: str
    balance: Decimal
    created_at: datetime
    created_by: DeviceId
    status: str = "open"
    bound_devices: set[DeviceId] = field(default_factory=set)
    device_keys: dict[DeviceId, ECKey] = field(default_factory=dict)


@dataclass
class Person:
    person_id: str
    partner: str
    account_id: str
    created_at: datetime
    questions: list[dict[str, Any]]
    answers: dict[str, str]
    status: str = "kyc_pending"
    failed_attempts: int = 0
    bound_devices: set[DeviceId] = field(default_factory=set)
    device_keys: dict[DeviceId, ECKey] = field(default_factory=dict)


@dataclass
class Card:
    card_id: str
    partner: str
    account_id: str
    type: str
    last4: str
    expires_on: str
    expires_at: datetime
    created_at: datetime
    status: str = "active"
    close_reason: str | None = None
    closed_at: datetime | None = None


@dataclass
class Transfer:
    transfer_id: str
    partner: str
    from_account_id: str
    to_account_id: str
    from_person_id: str
    to_person_id: str
    amount: Decimal
    currency: str
    memo: str | None
    created_at: datetime
    status: str = "completed"


@dataclass
class InboundEvent:
    event_id: str
    partner: str
    account_id: str
    event_type: str
    occurred_at: str | None
    received_at: datetime


@dataclass
class Subscription:
    subscription_id: str
    partner: str
    url: str
    events: list[str]
    created_at: datetime


@dataclass
class DocumentRequest:
    document_request_id: str
    partner: str
    person_id: str
    account_id: str
    document_type: str
    created_at: datetime
    status: str = "open"
    completed_at: datetime | None = None


@dataclass
class Attempt:
    at: datetime
    status_code: int | None
    error: str | None = None


@dataclass
class Delivery:
    delivery_id: str
    event_id: str
    event_type: str
    subscription_id: str
    partner: str
    url: str
    body: bytes
    first_at: datetime
    deprecated: bool = False
    status: str = "pending"
    attempts: list[Attempt] = field(default_factory=list)
    next_at: datetime | None = None
    in_progress: bool = False


@dataclass
class IdempotencyRecord:
    method: str
    path: str
    body: Any
    created_at: datetime
    in_flight: bool = True
    status: int = 0
    response_body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Fault:
    fault_id: str
    method: str
    path: str
    status: int | None
    rate: float
    times: int | None
    when: str
    retry_after: int | None
    latency_ms: int | None
    fired: int = 0


@cache
def keys_for(seed: int) -> ServerKeys:
    """Server keys derived from the seed (cached: RSA generation takes a fifth of a second)."""
    return ServerKeys.from_seed(seed)


class State:
    """Everything the simulator knows. :meth:`reset` returns it to the seeded start."""

    def __init__(self, seed: int, clock_start: str) -> None:
        self.clock = Clock(clock_start)
        self.reset(seed)

    def reset(self, seed: int) -> None:
        self.seed = seed
        self.generation = getattr(self, "generation", 0) + 1
        self.clock.reset()
        self.ids = Ids(seed)
        self.random = random.Random(f"kit-sim:{seed}:faults")
        self.keys = keys_for(seed)
        self.partner_tokens: dict[str, PartnerToken] = {}
        self.nonces: dict[str, Nonce] = {}
        self.sessions: dict[str, Session] = {}
        self.session_starts: dict[tuple[str, str], list[datetime]] = {}
        self.accounts: dict[str, Account] = {}
        self.persons: dict[str, Person] = {}
        self.cards: dict[str, Card] = {}
        self.transfers: dict[str, Transfer] = {}
        self.inbound_events: dict[str, InboundEvent] = {}
        self.subscriptions: dict[str, Subscription] = {}
        self.document_requests: dict[str, DocumentRequest] = {}
        self.deliveries: dict[str, Delivery] = {}
        self.idempotency: dict[tuple[str, str], IdempotencyRecord] = {}
        self.faults: dict[str, Fault] = {}

    @property
    def now(self) -> datetime:
        return self.clock.now

    # Lookups scoped to a partner: another partner's record is simply not there (A30).
    def account(self, partner: str, account_id: str) -> Account | None:
        found = self.accounts.get(account_id)
        return found if found is not None and found.partner == partner else None

    def person(self, partner: str, person_id: str) -> Person | None:
        found = self.persons.get(person_id)
        return found if found is not None and found.partner == partner else None

    def card(self, partner: str, card_id: str) -> Card | None:
        found = self.cards.get(card_id)
        return found if found is not None and found.partner == partner else None
