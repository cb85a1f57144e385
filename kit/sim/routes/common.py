"""Representations and lookups shared by the resource routes."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from kit.sim.clock import format_time
from kit.sim.pipeline import Call
from kit.sim.problems import Problem
from kit.sim.state import Account, Card, DocumentRequest, Person, Transfer


def money(amount: Decimal, currency: str = "USD") -> dict[str, str]:
    """Money on output: always two decimals (DESIGN §3)."""
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


def not_found(resource: str) -> Problem:
    return Problem(404, f"{resource}-not-found", f"No {resource.replace('-', ' ')} with this id.")


def find_account(call: Call, account_id: str) -> Account:
    account = call.state.account(call.partner, account_id)
    if account is None:
        raise not_found("account")
    return account


def find_person(call: Call, person_id: str) -> Person:
    person = call.state.person(call.partner, person_id)
    if person is None:
        raise not_found("person")
    return person


def find_card(call: Call, card_id: str) -> Card:
    card = call.state.card(call.partner, card_id)
    if card is None:
        raise not_found("card")
    return card
