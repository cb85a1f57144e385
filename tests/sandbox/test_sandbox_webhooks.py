"""Signed webhook deliveries on the sandbox profile, without a control plane.

The client's receiver judges signing times against the machine's clock outside the sim
profile; ``kit serve --no-control`` signs with the machine's time (A46), so its deliveries
verify. A server that kept its seeded clock would sign years in the past: refused. Checks that
need the receiver run when the API is on loopback and are skipped, with the reason, when not.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import kit
from kit.notebook import COMPANION, NEEDS, check, expect, results
from tests.sandbox.conftest import point_at
from tests.support.launcher import serve_process


def _closed_card(api: kit.Client) -> str:
    api.sessions.create("anonymous")
    account = api.accounts.create()
    api.sessions.promote("account", account_id=account.account_id)
    card = api.cards.create(account.account_id, type="virtual")
    api.cards.close(card.card_id, reason="stolen")
    return card.card_id


def test_the_receiver_verifies_a_local_sandboxs_deliveries_on_the_machine_clock(
    connect: Callable[..., kit.Client],
) -> None:
    api = connect()
    assert api.webhooks.reachable and not api.webhooks.listening  # not started unasked
    subscription = api.webhooks.listen()
    assert api.webhooks.listening and "card.closed" in subscription.events
    card_id = _closed_card(api)
    hook = api.webhooks.wait_for("card.closed", timeout=10, where=lambda e: e.data["card_id"] == card_id)
    assert hook.id.startswith("evt_") and hook.data["close_reason"] == "stolen"
    events = api.webhooks.events
    assert events[["type", "verified", "duplicate"]].values.tolist() == [["card.closed", True, False]]
    assert api.drift.empty


@pytest.fixture
def seeded_sandbox(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[kit.Client]:
    """A sandbox stand-in that keeps its seeded clock (``--clock seeded``)."""
    fixtures = tmp_path / "fixtures.toml"
    with serve_process("--no-control", "--clock", "seeded", "--sandbox-fixtures", str(fixtures)) as served:
        point_at(monkeypatch, served.base_url, fixtures)
        with kit.connect("sandbox", sleep=lambda _: None) as api:
            yield api


def test_a_delivery_signed_on_a_seeded_clock_is_refused_as_too_far_from_now(
    seeded_sandbox: kit.Client,
) -> None:
    api = seeded_sandbox
    api.webhooks.listen()
    _closed_card(api)
    deadline = time.monotonic() + 10
    while api.webhooks.events.empty and time.monotonic() < deadline:
        time.sleep(0.05)
    refused = api.webhooks.events
    assert not refused.empty, "the delivery never reached the receiver"
    assert set(refused["error"]) == {"SignatureExpired"} and not refused["verified"].any()
    with pytest.raises(kit.errors.WebhookTimeout):  # nothing verified to hand out
        api.webhooks.wait_for("card.closed", timeout=0.1)


@pytest.fixture
def restore_checks() -> Iterator[None]:
    saved = COMPANION.judged()
    yield
    COMPANION.seen(*saved)


def test_receiver_checks_run_on_a_loopback_api_and_are_skipped_elsewhere(restore_checks: None) -> None:
    ran: list[str] = []
    COMPANION.seen("sandbox", "http://127.0.0.1:8000")

    @check("a delivery reaches the receiver (local)", needs="webhook receiver")
    def _() -> None:
        ran.append("local")
        expect(ran, ["local"], what="the checks that ran", show=True)

    COMPANION.seen("sandbox", "https://sandbox.partner.example")

    @check("a delivery reaches the receiver (remote)", needs="webhook receiver")
    def _() -> None:
        ran.append("remote")

    @check("clock travel", needs="control plane")
    def _() -> None:
        ran.append("control")

    COMPANION.seen("sandbox", "http://localhost:9000")

    @check("clock travel on a local sandbox", needs="control plane")
    def _() -> None:
        ran.append("control, local")

    assert ran == ["local"]
    local, remote, control, control_local = results()[-4:]
    assert local.outcome == "passed"
    assert (remote.outcome, remote.reason) == ("skipped", NEEDS["webhook receiver"].reason)
    assert (control.outcome, control.reason) == ("skipped", NEEDS["control plane"].reason)
    assert control_local.outcome == "skipped"  # loopback gives a receiver, never a control plane
