"""The explorer widget, driven headless: button ``.click()`` and the values the widgets show."""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal

import ipywidgets as w
import pytest

import kit
from kit import errors, register
from kit.lab.explorer.widgets import (
    ACTIONS,
    CLOSED_MESSAGE,
    HISTORY_COLUMNS,
    WEBHOOK_COLUMNS,
    Explorer,
    explorer,
    history_table,
    webhooks_table,
)
from kit.lab.journeys import onboard

from ..conftest import SEED

DEVICE = {"device_id": "dev-explorer-test", "platform": "ios", "model": "iPhone 15", "os_version": "17.2"}
ONBOARDING = ("create_session", "create_account", "promote_account", "onboard", "promote_person")


def _current(ex: Explorer) -> list[str]:
    """The state(s) the state-machine view marks as current."""
    spans = re.findall(r'<span( data-current="true")? style="[^"]*">(\w+)</span>', ex.state_view.value)
    assert [name for _, name in spans] == ["Anonymous", "Account", "Person"]
    return [name for mark, name in spans if mark]


def test_full_onboarding_by_clicking_buttons(make_client: Callable[..., kit.Client]) -> None:
    api = make_client(device=DEVICE)
    ex = explorer(api)
    assert isinstance(ex.widget, w.VBox) and ex.state == "none" and _current(ex) == []
    assert ex.next_steps() == ["create_session"]
    assert ex.buttons["create_session"].button_style == "primary"

    seen = []
    for action in ONBOARDING:
        ex.buttons[action].click()
        assert ex.last_ok, ex.last_message
        seen.append((ex.state, _current(ex)))
    assert seen == [
        ("anonymous", ["Anonymous"]),
        ("anonymous", ["Anonymous"]),
        ("account", ["Account"]),
        ("account", ["Account"]),
        ("person", ["Person"]),
    ]
    assert "established" in ex.context_view.value
    assert api.session is not None and api.session.person_id == ex.ctx.person_id
    # Person state: the flows open to a person are highlighted, the onboarding ones are not.
    primary = {name for name, b in ex.buttons.items() if b.button_style == "primary"}
    assert primary == {"create_card", "send_event", "p2p"}

    table = history_table(api)
    assert list(table.columns) == HISTORY_COLUMNS
    assert str(table["status"].dtype) == "Int64" and str(table["method"].dtype) == "category"
    posted = table[(table["method"] == "POST") & (table["path"] == "/sessions")]
    assert posted["status"].tolist() == [201, 201, 201]
    # The session sent: none for the first, then the one each promotion started from.
    assert posted["session_type"].astype("string").fillna("-").tolist() == ["-", "anonymous", "account"]
    # The HTML table shows deterministic columns only: no wall-clock time, no ms, no tokens.
    shown = ex.history_view.value
    assert '<th style="text-align:left">path</th>' in shown and "/kyc/answers" in shown
    assert "<th>ms</th>" not in shown and "<th>time</th>" not in shown and "ses_" not in shown


def test_card_close_with_a_reason_and_the_webhook(make_client: Callable[..., kit.Client]) -> None:
    ex = Explorer(make_client(device=DEVICE))
    for action in ONBOARDING:
        ex.click(action)
    assert list(ex.reason.options) == register.value("A15")["reasons"]
    ex.card_type.value = "virtual"
    assert ex.click("create_card").startswith("Card card_") and ex.ctx.card is not None
    assert "close_card" in ex.next_steps()
    card_id = ex.ctx.card.card_id

    ex.reason.value = "stolen"
    message = ex.click("close_card")
    assert message == f"Card {card_id} closed, reason stolen; card.closed webhook received"
    assert ex.api.cards.get(card_id).close_reason == "stolen"
    assert f"card: {card_id}, type virtual, status closed, reason stolen" in ex.context_view.value
    assert "close_card" not in ex.next_steps()
    assert f"/cards/{card_id}/close" in ex.history_view.value
    assert "card.closed" in ex.webhooks_view.value and card_id in ex.webhooks_view.value
    hooks = webhooks_table(ex.api)
    assert list(hooks.columns) == WEBHOOK_COLUMNS and str(hooks["created_at"].dtype).startswith("datetime64")
    assert hooks.loc[hooks["type"] == "card.closed", "resource_id"].tolist() == [card_id]

    # Closing again: a readable error (class, status, code, hint), never a traceback.
    again = ex.click("close_card")
    assert not ex.last_ok
    assert again.startswith("CardAlreadyClosed (409 card-already-closed): ")
    assert errors.CardAlreadyClosed.hint in again
    assert "✖" in ex.message.value and "Traceback" not in ex.message.value


def test_errors_show_as_messages_and_leave_state_alone(make_client: Callable[..., kit.Client]) -> None:
    ex = Explorer(make_client(device=DEVICE))
    assert ex.click("create_account").startswith("SessionRequired (401 session-required): ")
    assert ex.state == "none" and not ex.last_ok
    # A step too early names what is missing on its way, the next step first; nothing is sent.
    sent = len(ex.api.history)
    assert ex.click("create_card") == "KitError: not yet: create a session, then create an account first"
    assert len(ex.api.history) == sent
    ex.click("create_session")
    assert ex.click("promote_person") == "KitError: not yet: create an account, then onboard a persona first"
    ex.click("create_account")
    assert ex.click("promote_person") == "KitError: not yet: onboard a persona first"
    # Skipping a step of the state machine: the server refuses, the session stays anonymous.
    ex.ctx.person_id = "per_00000000000000000000"
    message = ex.click("promote_person")
    assert message.startswith("InvalidSessionTransition (409 invalid-session-transition)")
    assert ex.state == "anonymous"
    ex.amount.value = "abc"
    assert ex.click("p2p").startswith("Invalid input (ValueError)")


def test_a_click_may_pick_a_value_the_dropdown_does_not_offer(make_client: Callable[..., kit.Client]) -> None:
    """``click(action, **picks)``: off-list values are added to the dropdown, and the server judges."""
    ex = Explorer(make_client(device=DEVICE))
    for action in ONBOARDING:
        ex.click(action)
    ex.click("create_card")
    refused = ex.click("close_card", reason="misplaced")
    assert refused.startswith("UnknownCloseReason (422 unknown-close-reason)") and not ex.last_ok
    assert ex.reason.value == "misplaced" and list(ex.reason.options)[-1] == "misplaced"
    assert ex.ctx.card is not None and ex.ctx.card.status == "active"  # the refusal changed nothing
    assert ex.click("close_card", reason="stolen").endswith("card.closed webhook received")
    assert list(ex.reason.options).count("stolen") == 1  # a listed value is picked, not added
    assert ex.click("send_event", event_type="password.reset").startswith(
        "UnknownEventType (422 unknown-event-type)"
    )
    assert ex.click("p2p", amount="0.00").startswith("InvalidAmount (422 invalid-amount)")
    assert ex.amount.value == "0.00"
    with pytest.raises(KeyError):
        ex.click("create_card", colour="red")


def test_the_webhooks_shown_may_be_the_last_few(make_client: Callable[..., kit.Client]) -> None:
    ex = Explorer(make_client(device=DEVICE), webhook_rows=1)
    for action in (*ONBOARDING, "create_card", "close_card"):
        ex.click(action)
    first = ex.ctx.card.card_id if ex.ctx.card else None
    assert "webhooks received:\n" in ex.text()  # one arrived, one shown: no count
    ex.click("create_card")
    ex.click("close_card")
    last = ex.ctx.card.card_id if ex.ctx.card else None
    text = ex.text()
    assert "webhooks received (the last 1 of 2):" in text
    assert last in text.split("webhooks received")[1] and first not in text.split("webhooks received")[1]
    assert last in ex.webhooks_view.value and first not in ex.webhooks_view.value


def test_event_and_p2p_to_another_customer(make_client: Callable[..., kit.Client]) -> None:
    api = make_client(device=DEVICE)
    other_api = make_client()
    other = onboard(other_api, persona=3, expiration="sliding")
    ex = Explorer(api, other=other_api)
    for action in ONBOARDING:
        ex.click(action)
    assert list(ex.event_type.options) == register.spec()["inbound_event_types"]
    ex.event_type.value = "password.forgot"
    assert ex.click("send_event").startswith("Inbound event password.forgot accepted as evt_")

    ex.amount.value = "20.00"
    message = ex.click("p2p")
    assert message.endswith("completed (this device is the sender)"), message
    assert ex.ctx.other_person_id == other.person_id
    balances = api.sim.ledger().set_index("account_id")["balance"]
    assert balances[ex.ctx.account_id] == Decimal("480.00") and balances[other.account_id] == Decimal(
        "520.00"
    )
    ex.amount.value = "1.005"
    assert ex.click("p2p").startswith("InvalidAmount (422 invalid-amount)")


def test_p2p_creates_the_other_customer_on_demand(make_client: Callable[..., kit.Client]) -> None:
    ex = Explorer(make_client(device=DEVICE))
    for action in ONBOARDING:
        ex.click(action)
    try:
        assert "completed" in ex.click("p2p"), ex.last_message
        assert ex.other is not None and ex.other.session is not None
        assert ex.other.session.session_type == "person"
        assert ex.ctx.other_person_id == ex.other.session.person_id != ex.ctx.person_id
    finally:
        ex.close()


def _drive(make_client: Callable[..., kit.Client]) -> str:
    ex = Explorer(make_client(device=DEVICE))
    for action in (*ONBOARDING, "create_card", "close_card", "send_event", "close_card"):
        ex.click(action)
    return ex.text()


def test_text_summary_is_deterministic_and_holds_no_secret(
    make_client: Callable[..., kit.Client], reset_sim: str
) -> None:
    first = _drive(make_client)
    kit.connect("sim").sim.reset(SEED)
    second = _drive(make_client)
    assert first == second
    assert "state: Anonymous → Account → [Person]" in first
    assert "last (error): CardAlreadyClosed (409 card-already-closed)" in first
    assert re.search(r"^card\.closed evt_\w+ card_\w+ ", first, re.M)
    persona = register.personas()[0]
    for secret in ("ses_", "eyJ", persona["national_id"], persona["date_of_birth"], persona["last_name"]):
        assert secret not in first
    assert " ms" not in first and ":00.0" not in first


def test_display_bundle_widget_or_text(make_client: Callable[..., kit.Client], monkeypatch) -> None:  # type: ignore[no-untyped-def]
    ex = Explorer(make_client(device=DEVICE))
    monkeypatch.delenv("KIT_REGRESS", raising=False)
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == ex.text()
    monkeypatch.setenv("KIT_REGRESS", "1")
    assert ex._repr_mimebundle_() == {"text/plain": ex.text()}


def test_every_action_has_a_button_and_a_handler(make_client: Callable[..., kit.Client]) -> None:
    ex = Explorer(make_client(device=DEVICE))
    assert set(ex.buttons) == set(ACTIONS)
    assert all(callable(getattr(ex, f"_do_{name}")) for name in ACTIONS)
    assert ex.click("refresh") == "Refreshed."
    assert ex.webhooks_view.value == "<p><i>none received</i></p>"
    with pytest.raises(KeyError):
        ex.click("delete_everything")


def test_errors_render_as_html_cards() -> None:
    err = errors.UnknownCloseReason(
        422, "unknown-close-reason", "bad", problem={"allowed": ["lost"]}, submitted="misplaced"
    )
    html = err._repr_html_()
    assert "<b>UnknownCloseReason</b>" in html and "422 unknown-close-reason" in html
    assert "close reason &#x27;misplaced&#x27; is not allowed; allowed: lost" in html
    assert errors.ConfigError("no profile")._repr_html_().count("<code>") == 0


def _greyed_out(ex: Explorer) -> bool:
    pickers = (ex.persona, ex.card_type, ex.reason, ex.event_type, ex.amount)
    return all(b.disabled and b.button_style == "" for b in ex.buttons.values()) and all(
        p.disabled for p in pickers
    )


def test_a_closed_client_shows_the_explorer_closed(make_client: Callable[..., kit.Client]) -> None:
    # After "Run All" of a notebook whose last cell closes the client: the next click must not
    # answer "Cannot send a request, as the client has been closed" but show the widget closed.
    api = make_client(device=DEVICE)
    ex = Explorer(api)
    ex.click("create_session")
    assert not _greyed_out(ex) and not ex.closed
    api.close()
    message = ex.click("create_account")
    assert message == CLOSED_MESSAGE and not ex.last_ok and ex.closed
    assert "Cannot send" not in ex.message.value and "closed" in ex.message.value
    assert _greyed_out(ex) and 'data-closed="true"' in ex.state_view.value
    assert ex.click("create_card") == CLOSED_MESSAGE  # every later click: the same message, no call
    assert "— closed" in ex.text() and "next steps: (none: closed)" in ex.text()
    assert "closed>" in repr(ex) and "kit.connect" in repr(ex)


def test_closing_through_the_explorer_greys_it_out_at_once(make_client: Callable[..., kit.Client]) -> None:
    ex = Explorer(make_client(device=DEVICE))
    calls = len(ex.api.history)
    ex.close(client=True)
    assert ex.closed and _greyed_out(ex) and ex.last_message == CLOSED_MESSAGE
    assert ex.click("create_session") == CLOSED_MESSAGE and len(ex.api.history) == calls


def test_the_repl_repr_hints_at_text_and_click(make_client: Callable[..., kit.Client]) -> None:
    ex = Explorer(make_client(device=DEVICE))
    shown = repr(ex)
    assert shown.startswith("<Explorer state='none' device='dev-explorer-test'>")
    assert "explorer.text()" in shown and "explorer.click('create_session')" in shown
    ex.click("create_session")
    assert "explorer.click('create_account')" in repr(ex)
