"""The wire, recorded and redacted (``record=True``): attempts grouped under their call, webhook
deliveries in the same log, secrets and PII replaced when recorded (by name and by value),
what varies from run to run normalised, memory bounded; ``api.wire()`` shows a call."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

import kit
import kit._wire
from kit import errors
from kit._redaction import Redactor
from kit._wire import as_dict, from_dict
from kit._wire_view import WireView
from kit.register import personas

from .conftest import onboard

CONTROL_TOKEN = "ctl-token-for-the-wire-test-8c1f"


def dumped(api: kit.Client) -> str:
    """Everything the client's wire log holds, as one text."""
    assert api.wire_log is not None
    return json.dumps([as_dict(e) for e in api.wire_log.exchanges()], ensure_ascii=False)


def header(message: kit._wire.Message | None, name: str) -> str | None:
    assert message is not None
    return next((v for n, v in message.headers if n == name), None)


def test_off_by_default(api: kit.Client) -> None:
    api.accounts  # noqa: B018  (nothing recorded, nothing to show)
    assert api.wire_log is None
    with pytest.raises(errors.ConfigError, match="record=True"):
        api.wire()
    with pytest.raises(errors.ConfigError, match="record=True"):
        api.export_har("never.har")


def test_secrets_are_replaced_by_name_and_by_value(make_client: Callable[..., kit.Client]) -> None:
    api = make_client(record=True, control_token=CONTROL_TOKEN)
    api.sessions.create("anonymous", expiration="sliding")
    api.accounts.create()
    api.sim.clock()  # a control-plane call: svc-control-token
    partner = api._requestor.auth.token
    session = api._requestor.current
    assert partner is not None and session is not None
    text = dumped(api)
    for secret in (partner.reveal(), session.token.reveal(), "sim-secret", CONTROL_TOKEN):
        assert secret not in text
    basic = base64.b64encode(b"sim-partner:sim-secret").decode()
    assert basic not in text

    token_call = api.wire(path="/oauth/accesstoken")
    sent, got = token_call.exchange.attempts[0].request, token_call.exchange.attempts[0].response
    assert header(sent, "authorization") == "Basic <client-credentials>"
    assert got is not None and json.loads(got.body or "")["access_token"] == "<partner-token>"
    account = api.wire(path="/accounts").exchange.attempts[0]
    assert header(account.request, "authorization") == "Bearer <partner-token>"
    assert header(account.request, "svc-session-id") == "<session-token>"
    created = api.wire(path="/sessions", method="POST").exchange.attempts[0]
    assert json.loads(created.response.body or "")["session_token"] == "<session-token>"  # type: ignore[union-attr]
    # the encrypted request body keeps its shape, never its ciphertext
    encrypted = json.loads(created.request.body or "")["encrypted_data"]
    assert re.fullmatch(r"<JWE alg=RSA-OAEP-256 enc=A256GCM kid=[\w-]+>", encrypted)
    clock = api.wire(path="/_sim/clock").exchange.attempts[0]
    assert header(clock.request, "svc-control-token") == "<control-token>"


def test_a_known_value_is_found_wherever_it_travels() -> None:
    redactor = Redactor()
    token = "Zk3vQ9xLw2Rb7Tn1Yp5Hc8Md0aSe"
    assert redactor.json({"session_token": token}) == {"session_token": "<session-token>"}
    # learned by name, then found by value: in another field, in free text, in a header
    assert redactor.json({"echo": token, "note": f"sent {token}."}) == {
        "echo": "<session-token>",
        "note": "sent <session-token>.",
    }
    assert redactor.header("x-debug", f"t={token}") == "t=<session-token>"
    # a short known value only where it stands alone, never inside an id
    short = Redactor(secrets=[("fixture-value", "4821")])
    assert short.json({"answer": "4821", "id": "9f1c2b3a-4821-4abc-8def-0123456789ab"}) == {
        "answer": "<fixture-value>",
        "id": "9f1c2b3a-4821-4abc-8def-0123456789ab",
    }
    assert short.text("the answer was 4821.") == "the answer was <fixture-value>."


def test_pii_fields_are_replaced_by_the_registers_names(make_client: Callable[..., kit.Client]) -> None:
    api = make_client(record=True)
    api.sim.personas()  # the control plane answers the personas' PII in clear
    got = api.wire(path="/_sim/personas").exchange.attempts[0].response
    assert got is not None and got.body is not None
    first = json.loads(got.body)["personas"][0]
    assert first["first_name"] == first["date_of_birth"] == first["national_id"] == "<pii>"
    assert first["persona_id"] == "persona-01"  # not personal data: kept
    text = dumped(api)
    for persona in personas():
        assert persona["date_of_birth"] not in text and persona["national_id"] not in text
        assert persona["last_name"] not in text


def test_a_retried_call_keeps_both_attempts(make_client: Callable[..., kit.Client]) -> None:
    api = make_client(record=True)
    api.sessions.create("anonymous", expiration="sliding")
    api.sim.add_fault("POST", "/accounts", status=503, times=1, when="after_commit")
    api.accounts.create()
    view = api.wire(path="/accounts", status=503)
    first, second = view.exchange.attempts
    assert (first.status, second.status) == (503, 201)
    assert header(second.response, "idempotent-replayed") == "true"
    key = header(first.request, "idempotency-key")
    assert key is not None and re.fullmatch(r"<idempotency-key \d+>", key)
    assert header(second.request, "idempotency-key") == key  # the same key, replayed
    text = view.text()
    (number,) = view.exchange.numbers  # one row of the history for the call and its retry
    assert text.startswith(f"call {number} · POST /accounts · 503 → 201 · 2 attempts")
    assert "HTTP/1.1 503 Service Unavailable" in text and "HTTP/1.1 201 Created" in text
    assert "── attempt 2 of 2" in text
    # the view's own request, response and status are the last attempt's: the replayed 201
    assert (view.request, view.response, view.status) == (second.request, second.response, 201)
    assert view.request is not first.request and header(view.response, "idempotent-replayed") == "true"


def test_what_varies_is_normalised(make_client: Callable[..., kit.Client]) -> None:
    api = make_client(record=True)
    api.webhooks.listen()  # subscribes the receiver: its URL (with a random port) in the body
    subscribe = api.wire(path="/webhooks/subscriptions").exchange.attempts[0]
    assert subscribe.url.startswith("http://127.0.0.1:<port>/")
    assert header(subscribe.request, "host") == "127.0.0.1:<port>"
    assert header(subscribe.response, "date") == "<date>"
    assert json.loads(subscribe.request.body or "")["url"] == "http://127.0.0.1:<port>/webhooks"
    api.sessions.init_data()
    init = api.wire(path="/sessions/user_session_initialization_data")
    body = json.loads(init.exchange.attempts[0].response.body or "")  # type: ignore[union-attr]
    assert body["nonce"] == "<nonce>"
    assert not re.search(r"127\.0\.0\.1:\d", dumped(api))


def test_the_device_key_id_is_named_in_a_jwe_sealed_to_it(make_client: Callable[..., kit.Client]) -> None:
    api = make_client(record=True)
    customer = onboard(api)
    api.kyc.questions(customer.person_id)  # the questions come back sealed to the device's key (A12)
    sealed = api.wire(path="/kyc/questions").text()
    assert "kid=<device-key-id>>" in sealed
    assert api.device.kid not in dumped(api)  # made anew each run: named wherever it is met
    sent = api.wire(path="/sessions", method="POST").request.body or ""  # sealed to the server's key
    assert re.search(r"<JWE alg=\S+ enc=A256GCM kid=(?!<device-key-id>)[^<>\s]+>", sent)  # its id shown


def test_a_delivery_is_recorded_with_its_signature_shown_by_shape(
    make_client: Callable[..., kit.Client],
) -> None:
    seen: list[kit._wire.Exchange] = []
    api = make_client(record=True, hooks={"wire": [seen.append]})
    customer = onboard(api)
    api.webhooks.listen()
    card = api.cards.create(customer.account_id, type="temporary")
    api.cards.close(card.card_id, reason="lost")
    api.webhooks.wait_for("card.closed", timeout=10)
    view = api.wire(kind="delivery")
    delivery = view.exchange.attempts[0]
    assert (view.exchange.kind, delivery.method, delivery.status) == ("delivery", "POST", 200)
    assert delivery.url == "http://127.0.0.1:<port>/webhooks"
    signature = header(delivery.request, "svc-webhook-signature")
    assert signature is not None and re.fullmatch(r"<JWS alg=ES256 kid=[\w-]+>", signature)
    event = json.loads(delivery.request.body or "")
    assert event["type"] == "card.closed" and event["data"]["card_id"] == card.card_id
    assert "eyJ" not in dumped(api)
    assert view.exchange in seen  # the wire hook saw it too
    assert any(e.kind == "call" for e in seen)
    deliveries = [e for e in api.wire_log.exchanges() if e.kind == "delivery"]  # type: ignore[union-attr]
    number = deliveries.index(view.exchange) + 1  # numbered among deliveries, not among calls
    assert view.text().startswith(f"delivery {number} · POST /webhooks · 200")


def test_memory_is_bounded(make_client: Callable[..., kit.Client], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kit._wire, "MAX_CALLS", 3)
    monkeypatch.setattr(kit._wire, "MAX_BODY", 50)
    monkeypatch.setattr(kit._wire, "MAX_ATTEMPTS", 1)
    api = make_client(record=True)
    api.sessions.init_data()
    init = api.wire(path="/sessions/user_session_initialization_data").exchange.attempts[0]
    assert init.response is not None and init.response.cut and len(init.response.body or "") == 50
    api.sessions.create("anonymous", expiration="sliding")
    api.sim.add_fault("POST", "/accounts", status=503, times=1)
    api.accounts.create()
    retried = api.wire(path="/accounts")
    assert len(retried.exchange.attempts) == 1 and retried.exchange.dropped == 1
    assert "2 attempts" in retried.text()
    for _ in range(3):
        api.sim.clock()
    assert api.wire_log is not None and len(api.wire_log) == 3


def test_the_view_fits_a_stored_output(make_client: Callable[..., kit.Client]) -> None:
    api = make_client(record=True)
    api.sessions.create("anonymous", expiration="sliding")  # init data: a long JWK set
    view = api.wire(path="/sessions/user_session_initialization_data")
    text, page = view.text(), view._repr_html_()
    assert len(text) < 4000 and len(page) < 4000
    assert (
        text.splitlines()[1]
        == "GET http://127.0.0.1:<port>/sessions/user_session_initialization_data HTTP/1.1"
    )
    assert "<pre" in page and "&lt;partner-token&gt;" in page
    assert repr(view) == text
    with pytest.raises(LookupError, match="no exchange"):
        api.wire(path="/nowhere")
    assert api.wire(-2).exchange.index < api.wire().exchange.index


def test_long_bodies_are_folded_to_fit() -> None:
    long_body = json.dumps({"items": [{"id": f"item-{i:04d}", "note": "x" * 40} for i in range(300)]})
    message = kit._wire.Message((("content-type", "application/json"),), long_body, "application/json", 99)
    attempt = kit._wire.Attempt(
        datetime.now(UTC), "GET", "http://127.0.0.1:<port>/items", message, 200, "OK", message, 1.0
    )
    view = WireView(kit._wire.Exchange(1, "call", "GET", "/items", [attempt]))
    text, page = view.text(), view._repr_html_()
    assert len(long_body) > 20_000 and len(text) < 4000 and len(page) < 4000
    assert text.count("more characters folded") == 2  # the request's body and the response's
    assert '"id": "item-0000"' in text  # the start of each body is kept


def test_exchanges_round_trip_through_json(make_client: Callable[..., kit.Client]) -> None:
    api = make_client(record=True)
    api.sessions.create("anonymous", expiration="sliding")
    assert api.wire_log is not None
    for exchange in api.wire_log.exchanges():
        assert from_dict(json.loads(json.dumps(as_dict(exchange)))) == exchange


def test_a_call_with_many_attempts_still_fits() -> None:
    headers = tuple((f"x-header-{i}", "<value>" * 4) for i in range(20))
    message = kit._wire.Message(headers, None, "", 0)
    attempt = kit._wire.Attempt(
        datetime.now(UTC), "GET", "http://h/x", message, 503, "Service Unavailable", message, 1.0
    )
    view = WireView(kit._wire.Exchange(1, "call", "GET", "/x", [attempt] * 10))
    text, page = view.text(), view._repr_html_()
    assert len(text) < 4000 and len(page) < 4000
    assert text.endswith("see .exchange)") and page.startswith("<pre>")


def test_the_wire_view_numbers_a_call_as_the_tables_of_calls_do(
    make_client: Callable[..., kit.Client],
) -> None:
    """One numbering: ``call N`` in a wire view is row N of ``kit.notebook.calls`` and of
    ``kit.widgets.history_table``, both of which leave out the simulator's control calls (which
    ``api.history`` keeps); a partner token refused inside a call adds a row of its own."""
    from kit.notebook import calls
    from kit.widgets import history_table

    api = make_client(record=True)
    api.sim.reset(7)  # control calls before, between and after the partner API's
    api.sessions.create("anonymous")
    api.sim.personas()
    account = api.accounts.create()
    api.sim.advance(25 * 3600)  # past the partner token's lifetime: the next call is refused once
    api.sessions.open("account", account_id=account.account_id)
    table = calls(api, ["method", "path", "status"])
    history = api.history
    control = int(history["path"].str.startswith("/_sim").sum())
    assert control == 3 and len(table) == len(history) - control
    assert list(table.index) == list(range(1, len(table) + 1))
    accounts = api.wire(path="/accounts")
    (number,) = accounts.exchange.numbers
    assert accounts.text().startswith(f"call {number} · POST /accounts · 201")
    assert table.loc[number].tolist() == ["POST", "/accounts", 201]
    refused = api.wire(status=401)  # one call, two attempts, two rows: the 401 and the answer
    first, last = refused.exchange.numbers
    init = "GET /sessions/user_session_initialization_data"
    assert refused.text().startswith(f"calls {first} and {last} · {init} · 401 → 200")
    assert (table.loc[first, "status"], table.loc[last, "status"]) == (401, 200)
    assert table.loc[first + 1, "path"] == "/oauth/accesstoken"  # the token fetched in between
    assert api.wire(path="/_sim/clock/advance").text().startswith("control call · POST /_sim/clock/advance")
    numbered = [n for e in api.wire_log.exchanges() for n in e.numbers]  # type: ignore[union-attr]
    assert sorted(numbered) == list(table.index)  # every row is one call's, none twice
    assert list(history_table(api, last=2).index) == list(table.index[-2:])
    assert from_dict(as_dict(refused.exchange)).numbers == [first, last]  # kit regress carries them
