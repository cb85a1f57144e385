"""The results of the resources' calls (accounts, persons, KYC, cards, events, transfers, document
requests, subscriptions, webhook deliveries): :mod:`kit.models`' classes, defined when one is
first used (``kit.models`` resolves their names, PEP 562), so that ``kit.connect`` and a first
session build only the models they return. Import them from ``kit.models``, where they are
documented; a pickled one names this module, which unpickling imports.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from kit._modelbase import Model, Money

__all__ = [
    "Account",
    "Card",
    "DocumentRequest",
    "InboundEvent",
    "KycResult",
    "Person",
    "Subscription",
    "Transfer",
    "WebhookEvent",
]


@dataclasses.dataclass(frozen=True, repr=False)
class Account(Model):
    account_id: str
    status: str
    balance: Money | None
    product: str | None
    created_at: datetime | None


@dataclasses.dataclass(frozen=True, repr=False)
class Person(Model):
    person_id: str
    account_id: str
    status: str


@dataclasses.dataclass(frozen=True, repr=False)
class KycResult(Model):
    person_id: str
    status: str
    attempts_left: int | None


@dataclasses.dataclass(frozen=True, repr=False)
class Card(Model):
    card_id: str
    account_id: str
    type: str
    status: str
    last4: str | None
    expires_on: date | None
    close_reason: str | None
    created_at: datetime | None


@dataclasses.dataclass(frozen=True, repr=False)
class InboundEvent(Model):
    event_id: str
    event_type: str
    account_id: str
    occurred_at: datetime | None
    received_at: datetime | None


@dataclasses.dataclass(frozen=True, repr=False)
class Transfer(Model):
    """A P2P transfer; ``viewer_role`` is ``sender`` or ``receiver`` (header ``svc-p2p-role``)."""

    transfer_id: str
    status: str
    from_account_id: str
    to_person_id: str
    amount: Money | None
    memo: str | None
    created_at: datetime | None
    viewer_role: str | None


@dataclasses.dataclass(frozen=True, repr=False)
class DocumentRequest(Model):
    document_request_id: str
    person_id: str | None
    account_id: str | None
    status: str
    document_type: str | None
    created_at: datetime | None
    completed_at: datetime | None


@dataclasses.dataclass(frozen=True, repr=False)
class Subscription(Model):
    subscription_id: str
    url: str
    events: tuple[str, ...]


@dataclasses.dataclass(frozen=True, repr=False)
class WebhookEvent(Model):
    """A verified webhook delivery: the envelope; ``data`` is the resource as sent."""

    id: str
    type: str
    api_version: str | None
    created_at: datetime | None
    data: Mapping[str, Any] = dataclasses.field(repr=False)
    kid: str | None = None
    iat: int | None = None
