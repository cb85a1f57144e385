"""How the kept records are shown: one :class:`~kit.sim.models.Representation` per resource
(account, person, card, inbound event, transfer, subscription, document request).

Each model's fields are its OpenAPI schema and, read from the record, the answer's body. Only
the routes that answer with one import this module, on their first request
(``kit.sim.table``), so that ``kit.connect("sim")`` and a first session build none.
:data:`REPRESENTATIONS` names those whose optional fields a choice overlay may leave out (A62).

    >>> from datetime import UTC, datetime
    >>> from decimal import Decimal
    >>> from kit.sim.records import Account
    >>> at = datetime(2025, 1, 6, 9, tzinfo=UTC)
    >>> AccountOut.wire(Account("acc_1", "p", "spending", Decimal("12.5"), at, ("d", "t")))
    {'account_id': 'acc_1', 'product': 'spending', 'status': 'open', \
'balance': {'value': '12.50', 'currency': 'USD'}, 'created_at': '2025-01-06T09:00:00Z'}
"""

# No ``from __future__ import annotations``, as in kit.sim.models (pydantic would compile each string).
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated

from kit.sim.models import From, MaybeTime, Money, Representation, Time, money
from kit.sim.records import Account, Card, DocumentRequest, InboundEvent, Person, Subscription, Transfer

__all__ = [
    "REPRESENTATIONS",
    "AccountOut",
    "CardOut",
    "DocumentRequestOut",
    "EventOut",
    "PersonOut",
    "SubscriptionOut",
    "TransferOut",
]


# --- onboarding ----------------------------------------------------------------------------
class AccountOut(Representation, record=Account):
    account_id: str
    product: str
    status: str
    balance: Annotated[Money, From(money)]
    created_at: Time


class PersonOut(Representation, record=Person):
    person_id: str
    account_id: str
    status: str


# --- cards ---------------------------------------------------------------------------------
class CardOut(Representation, record=Card):
    card_id: str
    account_id: str
    type: str
    status: str
    last4: str
    expires_on: str
    close_reason: str | None
    created_at: Time


# --- inbound events ------------------------------------------------------------------------
class EventOut(Representation, record=InboundEvent):
    event_id: str
    event_type: str
    account_id: str
    occurred_at: str | None
    received_at: Time


# --- P2P -----------------------------------------------------------------------------------
class TransferOut(Representation, record=Transfer):
    transfer_id: str
    status: str
    from_account_id: str
    to_person_id: str
    amount: Annotated[Money, From(money, also=("currency",))]
    memo: str | None
    created_at: Time
    viewer_role: str | None = None  # added by a read (the role header's value, A18)


# --- webhooks and document requests -------------------------------------------------------
class SubscriptionOut(Representation, record=Subscription):
    subscription_id: str
    url: str
    events: list[str]


class DocumentRequestOut(Representation, record=DocumentRequest):
    document_request_id: str
    person_id: str
    account_id: str
    status: str
    document_type: str
    created_at: Time
    completed_at: MaybeTime


#: The representations whose optional fields A62 lists, by the name A62 uses.
REPRESENTATIONS: Mapping[str, type[Representation]] = MappingProxyType(
    {
        "account": AccountOut,
        "card": CardOut,
        "event": EventOut,
        "transfer": TransferOut,
        "document_request": DocumentRequestOut,
    }
)
