"""``api.webhooks.verify``: a partner's own receiver verifies a delivery with the client's
settings (its keys, its dialect file's signature, its clock), passing none of them itself.

Deliveries are caught as they came by a plain loopback server, as a partner's app gets them.
"""

from __future__ import annotations

import pytest

import kit
from kit import errors, register
from kit.lab.journeys import onboard
from kit.webhooks import verify
from tests.sim.helpers.webhooks import Receiver

CAMEL = register.data_dir() / "choices" / "camel.toml"


def _one_delivery(api: kit.Client) -> tuple[bytes, dict[str, str], str]:
    """Close a card with a plain receiver subscribed: the delivery's body, headers, card id."""
    receiver = Receiver()
    try:
        api.webhooks.subscribe(receiver.url, ["card.closed"])
        done = onboard(api, persona=0)
        card = api.cards.create(done.account_id, type="virtual")
        api.cards.close(card.card_id, reason="lost")
        (got,) = receiver.wait_for(1, timeout=10)
    finally:
        receiver.close()
    return got.body, got.headers, str(card.card_id)


def test_the_client_verifies_a_delivery_your_server_got_and_refuses_a_replay_and_a_forgery() -> None:
    with kit.connect("sim", sleep=lambda _: None) as api:
        body, headers, card_id = _one_delivery(api)
        seen: set[str] = set()
        event = api.webhooks.verify(body, headers, seen=seen)  # keys fetched on first use
        assert event.type == "card.closed" and event.data["card_id"] == card_id and seen == {event.id}
        with pytest.raises(errors.DuplicateDelivery):
            api.webhooks.verify(body, headers, seen=seen)
        with pytest.raises(errors.WebhookVerificationError):
            api.webhooks.verify(body.replace(b'"lost"', b'"Lost"'), headers, seen=set())


def test_the_signature_settings_come_from_the_clients_dialect_file() -> None:
    """camel.toml signs with EdDSA in X-Webhook-Signature: the client knows it from its own
    configuration, where a bare verify (the simulator's own settings) finds no signature."""
    with kit.connect("sim", choices=CAMEL, sleep=lambda _: None) as api:
        body, headers, card_id = _one_delivery(api)
        assert "x-webhook-signature" in headers and "svc-webhook-signature" not in headers
        with pytest.raises(errors.SignatureMissing):
            verify(body, headers, api.webhooks.jwks(), seen=None, now=api.webhooks.clock())
        event = api.webhooks.verify(body, headers, seen=set())
        assert event.data["card_id"] == card_id
