"""``kit.connect("sim", choices=FILE)`` in a dialect: the embedded simulator serves the file and
the client speaks it; ``PARTNER_API_CHOICES`` does the same and wins over ``KIT_SIM_CHOICES``."""

from __future__ import annotations

import pytest

import kit
from kit import register
from kit.lab.journeys import onboard

CAMEL = register.data_dir() / "choices" / "camel.toml"
OTHER = register.data_dir() / "choices" / "other.toml"


def test_the_embedded_simulator_serves_the_file_the_client_speaks() -> None:
    with kit.connect("sim", choices=CAMEL, record=True, sleep=lambda _: None) as api:
        done = onboard(api, persona=0)
        assert done.status == "established"
        api.webhooks.listen()
        card = api.cards.create(done.account_id, type="virtual")
        api.cards.close(card.card_id, reason="stolen")
        assert api.webhooks.wait_for("card.closed", timeout=10).data["card_id"] == card.card_id
        # the receiver reads the resource in the dialect's names (cardId), as it does the event
        received = api.webhooks.wait_received("card.closed", resource_id=card.card_id, timeout=10)
        assert list(received["resource_id"]) == [card.card_id] and received["created_at"].notna().all()
        assert f"/v2/accounts/{done.account_id}/payment-cards" in set(api.history["path"])
        assert '"cardId"' in str(api.wire(path="/payment-cards"))
        assert api.drift.empty


def test_partner_api_choices_wins_over_kit_sim_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KIT_SIM_CHOICES", str(OTHER))
    monkeypatch.setenv("PARTNER_API_CHOICES", str(CAMEL))
    with kit.connect("sim", sleep=lambda _: None) as api:
        api.sessions.create("anonymous")
        account = api.accounts.create()
        assert account.account_id and account.account_id.startswith("acc_")  # camel's ids, not other's UUIDs
        assert "/v2/accounts" in set(api.history["path"])
    monkeypatch.delenv("PARTNER_API_CHOICES")
    with kit.connect("sim", sleep=lambda _: None) as api:
        api.sessions.create("anonymous")
        assert "-" in str(api.accounts.create().account_id)  # KIT_SIM_CHOICES's overlay: UUID ids
        assert "/accounts" in set(api.history["path"])


def test_a_delivery_names_its_version_in_the_dialects_header() -> None:
    from tests.sim.helpers.webhooks import Receiver

    receiver = Receiver()
    try:
        with kit.connect("sim", choices=CAMEL, sleep=lambda _: None) as api:
            api.webhooks.subscribe(receiver.url, ["card.closed"])
            done = onboard(api, persona=0)
            card = api.cards.create(done.account_id, type="virtual")
            api.cards.close(card.card_id, reason="stolen")
            got = receiver.wait_for(1, timeout=10)
    finally:
        receiver.close()
    assert len(got) == 1
    headers = {name.lower(): value for name, value in got[0].headers.items()}
    # A27 under camel.toml: the version travels in X-Api-Version, as the body's apiVersion says
    assert headers.get("x-api-version") == got[0].json()["apiVersion"] == "1.2.0-20221215"
    assert "svc-api-version" not in headers
