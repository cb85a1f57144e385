"""The records a partner keeps seeing through the API: accounts, persons, cards, transfers,
inbound events, subscriptions and document requests (:class:`~kit.sim.state.State` holds them).

They are ``kit.sim.state``'s classes (their ``__module__``: where they are documented, imported
and pickled from, so that a state file names them as before); ``kit.sim.state`` resolves their
names from here on first use (PEP 562). They are defined apart so that ``kit.connect("sim")`` and
a first session, which create none of them, do not build them.

    >>> from kit.sim.state import Card
    >>> Card.__module__, Card is __import__("kit.sim.records").sim.records.Card
    ('kit.sim.state', True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kit.sim.crypto import DeviceId, ECKey

__all__ = ["Account", "Card", "DocumentRequest", "InboundEvent", "Person", "Subscription", "Transfer"]


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
    events: list[str]  # in the names of its version
    created_at: datetime
    api_version: str = "1.2.0-20221215"  # the version it was created under: its deliveries' (A27)


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


for _name in __all__:
    globals()[_name].__module__ = "kit.sim.state"
