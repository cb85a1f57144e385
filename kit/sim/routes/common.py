"""Representations shared by the resource routes: how a record looks on the wire.

>>> money(Decimal("12.5"))
{'value': '12.50', 'currency': 'USD'}
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from kit import register
from kit.sim.clock import format_time
from kit.sim.state import Account, Card, DocumentRequest, Transfer

CURRENCY: str = register.value("A10")["currency"]


def money(amount: Decimal, currency: str = CURRENCY) -> dict[str, str]:
    """Money on output: always two decimals (A19)."""
    return {"value": f"{amount.quantize(Decimal('0.01'))}", "currency": currency}


def account_out(account: Account) -> dict[str, Any]:
    return {
        "account_id": account.account_id,
        "product": account.product,
        "status": account.status,
        "balance": money(account.balance),
        "created_at": format_time(account.created_at),
    }


def card_out(card: Card) -> dict[str, Any]:
    return {
        "card_id": card.card_id,
        "account_id": card.account_id,
        "type": card.type,
        "status": card.status,
        "last4": card.last4,
        "expires_on": card.expires_on,
        "close_reason": card.close_reason,
        "created_at": format_time(card.created_at),
    }


def transfer_out(transfer: Transfer) -> dict[str, Any]:
    return {
        "transfer_id": transfer.transfer_id,
        "status": transfer.status,
        "from_account_id": transfer.from_account_id,
        "to_person_id": transfer.to_person_id,
        "amount": money(transfer.amount, transfer.currency),
        "memo": transfer.memo,
        "created_at": format_time(transfer.created_at),
    }


def document_request_out(doc: DocumentRequest) -> dict[str, Any]:
    return {
        "document_request_id": doc.document_request_id,
        "person_id": doc.person_id,
        "account_id": doc.account_id,
        "status": doc.status,
        "document_type": doc.document_type,
        "created_at": format_time(doc.created_at),
        "completed_at": format_time(doc.completed_at) if doc.completed_at else None,
    }
