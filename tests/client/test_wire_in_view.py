"""What notebooks 03, 07 and 08 show of the wire: a kept session presented again, the server's
clock for a partner's own receiver, a delivery in the wire log by the time ``wait_for`` returns,
and a view's title that does not depend on how the notebook was run."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

import kit
from kit import errors
from kit._wire import Recorder
from kit._wire_view import WireView
from kit.crypto import WebhookKeys
from kit.webhooks import Receiver

from .conftest import onboard
from .test_webhooks import JWKS, NOW, _delivery


def test_a_kept_session_presented_after_promotion_is_refused_as_superseded(
    make_client: Callable[..., kit.Client],
) -> None:
    api = make_client(record=True)
    customer = onboard(api, promote=False)  # an account session, the person's KYC established
    kept = api.sessions.current
    assert kept is not None and kept.info.session_type == "account"
    assert "session_token=••••••" in repr(kept)  # the handle never shows its token
    api.sessions.promote("person", person_id=customer.person_id)
    promoted = api.sessions.current

    with api.sessions.presenting(kept), pytest.raises(errors.SessionSuperseded) as refused:
        api.kyc.questions(customer.person_id)
    assert (refused.value.status, refused.value.code) == (401, "session-superseded")
    assert api.sessions.current is promoted  # the promoted session is sent again after the block
    assert api.session is not None and api.session.session_type == "person"
    api.kyc.questions(customer.person_id)  # and it is valid: the refusal changed nothing

    view = api.wire(path="/kyc/questions", status=401).text()
    assert "svc-session-id: <session-token>" in view and "session-superseded" in view
    assert kept.token.reveal() not in view


def test_presenting_restores_the_current_session_when_the_call_fails(
    make_client: Callable[..., kit.Client],
) -> None:
    api = make_client()
    api.sessions.create("anonymous")
    current = api.sessions.current
    with pytest.raises(errors.SessionRequired), api.sessions.presenting(None):
        api.accounts.create()  # POST /accounts needs the anonymous session (A43)
    assert api.sessions.current is current


def test_the_webhook_clock_is_the_simulators_and_makes_no_call_of_the_history(
    make_client: Callable[..., kit.Client],
) -> None:
    api = make_client(record=True)
    api.webhooks.listen()  # its first use subscribes the receiver: calls of their own
    api.sim.advance(3600)
    before = (len(api.history), len(api.wire_log or []))
    judged = api.webhooks.clock()
    assert (len(api.history), len(api.wire_log or [])) == before
    assert judged == api.sim.clock() and judged.year == 2025  # the seeded clock, not the machine's


class _SlowRecorder(Receiver):
    """Takes its time recording each delivery, as a busy wire log would."""

    def __init__(self, **options: Any) -> None:
        self.recorded: list[int] = []
        super().__init__(**options)

    def _answered(self, body: bytes, headers: Any, status: int, started: float) -> None:
        time.sleep(0.2)
        self.recorded.append(status)


def test_a_delivery_is_recorded_before_wait_for_returns() -> None:
    keys = WebhookKeys(JWKS)
    receiver = _SlowRecorder(keys=lambda: keys, clock=lambda: datetime.fromtimestamp(NOW, UTC))
    try:
        body, headers = _delivery("evt_slow")
        send = {"content": body, "headers": headers}
        poster = threading.Thread(target=httpx.post, args=(receiver.url,), kwargs=send)
        poster.start()
        event = receiver.wait_for("card.closed", timeout=10)
        assert event.id == "evt_slow"
        assert receiver.recorded == [200]  # already in the log when wait_for woke
        poster.join(10)
    finally:
        receiver.close()


def test_a_view_title_names_the_step_not_the_notebook_cell() -> None:
    recorder = Recorder()
    with recorder.step("open an account"), recorder.call("POST", "/accounts") as exchange:
        exchange.comment = "notebook cell In [7]"
    headers = [("content-type", "application/json")]
    recorder.delivery("http://127.0.0.1:5000/webhooks", headers, b"{}", 200, 1.0)
    call, delivery = recorder.exchanges()
    call.attempts.extend(delivery.attempts)  # a call needs an attempt to be shown
    title = WireView(call).text().splitlines()[0]
    assert title == "call 1 · POST /accounts · 200 · step: open an account"
    assert "In [7]" not in WireView(call)._repr_html_()
