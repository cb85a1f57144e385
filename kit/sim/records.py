"""The records a partner keeps seeing through the API: accounts, persons, cards, transfers,
inbound events, subscriptions and document requests (:class:`~kit.sim.state.State` holds them).

``kit.sim.state`` resolves their names from here on first use (PEP 562): they are defined apart
so that ``kit.connect("sim")`` and a first session, which create none of them, do not build them.
A state file written before they named this module as their own calls them ``kit.sim.state``'s:
the state codec reads those names as these classes (:mod:`kit.sim.statecodec`).

    >>> from kit.sim.state import Card
    >>> Card.__module__, Card is __import__("kit.sim.records").sim.records.Card
    ('kit.sim.records', True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kit.sim.crypto import DeviceId, ECKey

__all__ = [
    "Account",
    "Attempt",
    "Card",
    "Delivery",
    "DocumentRequest",
    "InboundEvent",
    "Person",
    "Subscription",
    "Transfer",
]


@dataclass
class Account:
    """An account (A10): its product, balance and status, and the devices bound to it."""

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
    """A person (A08, A09): the KYC questions and answers derived from their PII, never the PII."""

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
    """A card (A13-A15): its type, last four digits, expiry and status, and why it was closed."""

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
    """A P2P transfer between two persons' accounts (A16-A19)."""

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
    """An inbound account event a partner sent, of an allowed type."""

    event_id: str
    partner: str
    account_id: str
    event_type: str
    occurred_at: str | None
    received_at: datetime


@dataclass
class Subscription:
    """A webhook subscription: its URL, the events it wants and the version it was made under."""

    subscription_id: str
    partner: str
    url: str
    events: list[str]  # in the names of its version
    created_at: datetime
    api_version: str = "1.2.0-20221215"  # the version it was created under: its deliveries' (A27)


@dataclass
class DocumentRequest:
    """A request for a person's document, opened and completed through the control plane."""

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
    """One attempt to deliver a webhook: when, and the status or error it met (A25)."""

    at: datetime
    status_code: int | None
    error: str | None = None


@dataclass
class Delivery:
    """A webhook event on its way to one subscription: its signed body, attempts and next try (A25-A27)."""

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
