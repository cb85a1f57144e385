"""A missing or different optional field never crashes: models keep it absent (None, '-' in
tables), whatever another server sends."""

from __future__ import annotations

from datetime import UTC, datetime

from kit.models import Account, Card, InboundEvent, Transfer


def test_an_absent_optional_field_stays_absent() -> None:
    card = Card.from_wire({"card_id": "c1", "account_id": "a1", "type": "virtual", "status": "active"})
    assert card.created_at is None and card.last4 is None and card.expires_on is None
    html = card._repr_html_()
    assert "<th style='text-align:left'>created_at</th><td style='text-align:left'>-</td>" in html
    assert "created_at=None" in repr(card)
    event = InboundEvent.from_wire({"event_id": "e1", "event_type": "password.changed", "account_id": "a1"})
    assert event.received_at is None and event.occurred_at is None


def test_a_value_in_another_format_is_kept_absent_not_raised() -> None:
    card = Card.from_wire(
        {"card_id": "c1", "created_at": "yesterday", "expires_on": 202501, "status": "active"}
    )
    assert card.created_at is None and card.expires_on is None and card.status == "active"
    account = Account.from_wire({"account_id": "a1", "balance": {"amount": "5"}, "created_at": 17})
    assert account.balance is None and account.created_at is None
    transfer = Transfer.from_wire({"transfer_id": "t1", "amount": {"value": "ten"}})
    assert transfer.amount is None


def test_a_value_in_the_contract_format_is_converted() -> None:
    card = Card.from_wire({"card_id": "c1", "created_at": "2025-01-06T09:00:00Z", "expires_on": "2025-02-05"})
    assert card.created_at == datetime(2025, 1, 6, 9, tzinfo=UTC)
    assert str(card.expires_on) == "2025-02-05"
