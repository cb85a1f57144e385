"""The clock without a control plane (A46): the machine's, as a partner's sandbox has it.

Times in answers and webhook signatures are the wall clock's, retries fall due as it passes,
every answer names A46; a simulator with its control plane keeps the seeded clock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from kit.sim import Settings
from kit.sim.clock import Clock, format_time
from kit.sim.runtime import Sim
from kit.sim.state import Card
from kit.sim.timeflow import follow_wall_clock
from tests.sim.helpers.clients import embedded
from tests.sim.helpers.contract import RETRY_OFFSETS
from tests.sim.helpers.encryption import Device
from tests.sim.helpers.journeys import new_session
from tests.sim.helpers.resources import close_card, create_account, create_card
from tests.sim.helpers.webhooks import Receiver, signing_keys, subscribe, verify_signature
from tests.sim.helpers.wire import parse_time, partner_token

SEEDED_START = "2025-01-06T09:00:00Z"


def _card(http: httpx.Client, token: str) -> dict:
    anonymous = new_session(http, token, Device())
    account = create_account(http, token, anonymous)
    return create_card(http, token, account["account_id"], "virtual")


def _near_now(value: datetime, slack: float = 5.0) -> bool:
    return abs((value - datetime.now(UTC)).total_seconds()) <= slack


# --- the clock itself -------------------------------------------------------------------------


class _Source:
    """A machine clock the test moves by hand."""

    def __init__(self, now: str) -> None:
        self.now = parse_time(now)

    def __call__(self) -> datetime:
        return self.now


def test_a_wall_clock_reads_its_source_in_whole_seconds_and_never_goes_back() -> None:
    source = _Source("2026-03-01T12:00:00.750Z")
    clock = Clock(SEEDED_START, wall=True, source=source)
    assert format_time(clock.now) == "2026-03-01T12:00:00Z"
    source.now += timedelta(seconds=30)
    assert format_time(clock.now) == "2026-03-01T12:00:30Z"
    source.now -= timedelta(minutes=5)  # the machine's clock stepped back (NTP)
    assert format_time(clock.now) == "2026-03-01T12:00:30Z"


def test_advance_on_a_wall_clock_is_an_offset_and_reset_clears_it() -> None:
    source = _Source("2026-03-01T12:00:00Z")
    clock = Clock(SEEDED_START, wall=True, source=source)
    assert format_time(clock.advance(3600)) == "2026-03-01T13:00:00Z"
    source.now += timedelta(seconds=10)
    assert format_time(clock.now) == "2026-03-01T13:00:10Z"
    assert format_time(clock.after(50)) == "2026-03-01T13:01:00Z"
    clock.reset()
    assert format_time(clock.now) == "2026-03-01T12:00:10Z"


def test_a_seeded_clock_ignores_the_machine() -> None:
    clock = Clock(SEEDED_START, source=_Source("2026-03-01T12:00:00Z"))
    assert format_time(clock.now) == SEEDED_START
    clock.advance(60)
    clock.reset()
    assert format_time(clock.now) == SEEDED_START


@pytest.mark.parametrize(
    ("settings", "wall"),
    [
        ({}, False),
        ({"control": False}, True),
        ({"control": False, "wall_clock": False}, False),
        ({"wall_clock": True}, True),
    ],
)
def test_the_wall_clock_is_the_default_exactly_without_a_control_plane(settings: dict, wall: bool) -> None:
    assert Settings(**settings).follows_wall_clock is wall


# --- over HTTP ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def seeded_nocontrol() -> Iterator[httpx.Client]:
    for server in embedded(seed=7, control=False, wall_clock=False):
        with httpx.Client(base_url=server.base_url, timeout=10) as client:
            yield client


def test_without_a_control_plane_answers_carry_the_machine_time_and_name_a46(
    nocontrol_http: httpx.Client,
) -> None:
    token = partner_token(nocontrol_http)
    card = _card(nocontrol_http, token)
    assert _near_now(parse_time(card["created_at"])), card["created_at"]
    resp = nocontrol_http.get(f"/cards/{card['card_id']}", headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 200, resp.text
    assert "A46" in resp.headers["svc-assumptions"].split(",")
    refused = nocontrol_http.get("/cards/card_nope", headers={"Authorization": f"Bearer {token}"})
    assert refused.status_code == 404 and "A46" in refused.headers["svc-assumptions"].split(",")


@pytest.mark.parametrize("server", ["seeded_nocontrol", "http"], ids=["no-control-seeded", "control"])
def test_a_seeded_clock_keeps_seeded_times_and_answers_do_not_name_a46(
    server: str, request: pytest.FixtureRequest
) -> None:
    client: httpx.Client = request.getfixturevalue(server)
    token = partner_token(client)
    card = _card(client, token)
    assert card["created_at"] == SEEDED_START
    resp = client.get(f"/cards/{card['card_id']}", headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 200 and "A46" not in resp.headers["svc-assumptions"].split(",")


def test_on_the_wall_clock_a_delivery_is_signed_now_and_retried_as_time_passes(
    nocontrol_http: httpx.Client,
) -> None:
    token = partner_token(nocontrol_http)
    receiver = Receiver()
    receiver.fail_next = 1  # the first attempt fails: the retry at +1 s must come by itself
    try:
        subscribe(nocontrol_http, token, receiver.url, ["card.closed"])
        card = _card(nocontrol_http, token)
        assert close_card(nocontrol_http, token, card["card_id"], {"reason": "lost"}).status_code == 200
        first, second = receiver.wait_for(2, timeout=10)[:2]
    finally:
        receiver.close()
    assert first.json()["id"] == second.json()["id"]
    jwks = signing_keys(nocontrol_http, token)
    headers = [verify_signature(r.headers["svc-webhook-signature"], r.body, jwks) for r in (first, second)]
    iats = [header["iat"] for header in headers]
    assert all(_near_now(datetime.fromtimestamp(iat, UTC)) for iat in iats), iats
    assert iats[1] - iats[0] >= RETRY_OFFSETS[0]  # due at the first attempt + 1 s of wall time


def _follow_until(sim: Sim, done: Callable[[], bool]) -> None:
    """Run the wall-clock loop, in fast rounds, until ``done()`` (at most 5 s), then stop it."""

    async def run() -> None:
        task = asyncio.create_task(follow_wall_clock(sim, retries_every=0.01, expiry_every=0.02))
        while not done():
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(asyncio.wait_for(run(), timeout=5))


def test_the_wall_clock_loop_outlives_a_failing_round() -> None:
    sim = Sim(Settings(control=False))
    rounds: list[str] = []

    async def flaky() -> None:
        rounds.append("run_due")
        if len(rounds) == 1:
            raise RuntimeError("one bad round")

    sim.delivery.run_due = flaky  # type: ignore[method-assign]

    _follow_until(sim, lambda: len(rounds) >= 4)
    assert len(rounds) >= 4


def test_on_the_wall_clock_cards_expire_as_time_passes_without_any_request() -> None:
    sim = Sim(Settings(control=False))
    now = sim.state.now
    card = Card(
        card_id="card_wall",
        partner="sim-partner",
        account_id="acc_wall",
        type="temporary",
        last4="0000",
        expires_on=(now - timedelta(days=1)).date().isoformat(),
        expires_at=now - timedelta(seconds=1),
        created_at=now - timedelta(days=30),
    )
    sim.state.cards[card.card_id] = card

    _follow_until(sim, lambda: card.status != "active")
    assert card.status == "expired"
