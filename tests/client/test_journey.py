"""The whole journey for two customers, P2P seen by both sides, webhooks verified."""

from __future__ import annotations

import io
import re
from decimal import Decimal

import pytest

import kit
from kit import errors
from kit.lab.walk import walk

from .conftest import onboard


def test_two_customers_full_journey(make_client) -> None:  # type: ignore[no-untyped-def]
    a = onboard(make_client(), 0)
    b = onboard(make_client(), 1)
    assert a.api.session.session_type == b.api.session.session_type == "person"  # type: ignore[union-attr]
    a.api.webhooks.listen()

    card = a.api.cards.create(a.account_id, type="temporary")
    assert (card.type, card.status) == ("temporary", "active")
    assert (card.expires_on - a.api.sim.clock().date()).days == 30  # type: ignore[operator]
    closed = a.api.cards.close(card.card_id, reason="lost")
    assert (closed.status, closed.close_reason) == ("closed", "lost")
    assert a.api.cards.get(card.card_id).status == "closed"

    event = a.api.events.send(a.account_id, "password.changed", details={"channel": "app"})
    assert event.event_type == "password.changed" and event.account_id == a.account_id

    sent = a.api.p2p.transfer(
        from_account_id=a.account_id, to_person_id=b.person_id, amount="12.50", memo="lunch"
    )
    assert sent.viewer_role == "sender" and sent.amount == kit.Money(Decimal("12.50"), "USD")
    as_sender = a.api.p2p.get(sent.transfer_id)
    as_receiver = b.api.p2p.get(sent.transfer_id)
    assert (as_sender.viewer_role, as_receiver.viewer_role) == ("sender", "receiver")
    assert as_receiver.memo == "lunch" and as_receiver.amount == sent.amount

    ledger = a.api.sim.ledger().set_index("account_id")["balance"]
    assert ledger[a.account_id] == Decimal("487.50") and ledger[b.account_id] == Decimal("512.50")

    hook = a.api.webhooks.wait_for("card.closed", timeout=10)
    assert hook.data["card_id"] == card.card_id

    # P2P rules, no money moved by any of them.
    with pytest.raises(errors.InsufficientFunds):
        a.api.p2p.transfer(from_account_id=a.account_id, to_person_id=b.person_id, amount="10000")
    with pytest.raises(errors.SelfTransfer):
        a.api.p2p.transfer(from_account_id=a.account_id, to_person_id=a.person_id, amount="1")
    with pytest.raises(errors.InvalidAmount):
        a.api.p2p.transfer(from_account_id=a.account_id, to_person_id=b.person_id, amount="1.005")
    with pytest.raises(errors.UnsupportedCurrency):
        a.api.p2p.transfer(from_account_id=a.account_id, to_person_id=b.person_id, amount="1", currency="EUR")
    with pytest.raises(TypeError):
        a.api.p2p.transfer(from_account_id=a.account_id, to_person_id=b.person_id, amount=1.5)  # type: ignore[arg-type]
    assert a.api.sim.ledger().set_index("account_id")["balance"].equals(ledger)


def test_a_third_person_cannot_see_the_transfer(make_client) -> None:  # type: ignore[no-untyped-def]
    a = onboard(make_client(), 0)
    b = onboard(make_client(), 1)
    c = onboard(make_client(), 2)
    t = a.api.p2p.transfer(from_account_id=a.account_id, to_person_id=b.person_id, amount="1.00")
    with pytest.raises(errors.TransferNotFound):
        c.api.p2p.get(t.transfer_id)


def test_results_have_readable_repr_and_html(make_client) -> None:  # type: ignore[no-untyped-def]
    a = onboard(make_client(), 0)
    card = a.api.cards.create(a.account_id, type="virtual")
    assert repr(card).startswith("Card(card_id='card_")
    page = card._repr_html_()
    assert "<table>" in page and card.card_id in page
    # a table cell shows text as it is and "-" for nothing: no quotes, no "None"
    assert card.close_reason is None
    assert "<td style='text-align:left'>-</td>" in page
    assert f"<td style='text-align:left'>{card.status}</td>" in page
    assert "'" not in page.replace("style='text-align:left'", "") and "None" not in page
    with pytest.raises(AttributeError):
        card.status = "closed"  # type: ignore[misc]


def test_walk_is_deterministic_and_free_of_secrets(make_client) -> None:  # type: ignore[no-untyped-def]
    first, second = io.StringIO(), io.StringIO()
    walk(first)
    walk(second)
    text = first.getvalue()
    assert text == second.getvalue()
    assert "card.closed" in text and "receiver" in text and "sender" in text
    assert "127.0.0.1" not in text and "sim-secret" not in text
    assert not re.search(r"eyJ[\w-]+\.", text)  # no JOSE objects
    assert not re.search(r"ses_\w+", text)  # no session tokens
    from kit.regress.leaks import scan_text  # the project's independent leak scanner

    assert scan_text(text) == []
    probe = make_client()
    for i in range(2):
        for value in probe.sim.persona(i).pii.values():
            assert value.reveal() not in text


def test_walk_main_returns_zero(capsys: pytest.CaptureFixture[str]) -> None:
    from kit.lab.walk import main

    assert main() == 0
    assert "history of A" in capsys.readouterr().out
