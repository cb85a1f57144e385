"""Bounded stores (A50-A59): beyond each bound the oldest record is forgotten, with the answer
the register names and nothing else changed; within it, nothing changes.

The HTTP tests run on their own simulator whose bounds are made small (the same code, a few
records instead of thousands); the register's own values are pinned at the State level and
on ``GET /_sim/health``.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from kit.sim.state import Nonce, State
from kit.sim.stores import Bounds, DeliveryLog, Record, Store
from tests.sim.helpers import (
    API_VERSION,
    PARTNER_B,
    Device,
    Receiver,
    add_fault,
    advance,
    assert_problem,
    call,
    card_request,
    close_card,
    create_session,
    deliveries,
    init_data,
    journey,
    new_session,
    partner_token,
    send_event,
    subscribe,
    unchanged,
)
from tests.sim.helpers.clients import CheckedClient, checked, embedded, served_client

#: The register's bounds, written out: an edit of the register must be made here on purpose.
REGISTER_BOUNDS = {
    "nonces": 1000,
    "idempotency": 20000,
    "sessions": 10000,
    "deliveries": 5000,
    "partner_tokens": 10000,
    "session_starts": 10000,
    "inbound_events": 1000,
    "subscriptions": 100,
    "faults": 100,
}
KEPT = ("accounts", "persons", "cards", "transfers", "document_requests")
SMALL = {
    "nonces": 3,
    "idempotency_keys": 3,
    "sessions": 5,
    "session_grace_seconds": 3600,
    "deliveries": 3,
    "delivery_keep_seconds": 3600,
    "partner_tokens": 3,
    "rate_windows": 2,
    "inbound_events": 2,
    "subscriptions": 2,
    "faults": 2,
}
EVENT = {"event_type": "password.changed"}


@dataclass
class Aging:
    partner: str
    stale: bool


@pytest.fixture(scope="module")
def small_server() -> Iterator[Any]:
    yield from embedded(seed=7)


@pytest.fixture(scope="module")
def _small_client(small_server: Any) -> Iterator[CheckedClient]:
    yield from served_client(small_server)


@pytest.fixture
def small(small_server: Any, _small_client: CheckedClient) -> Iterator[CheckedClient]:
    """A client on a simulator with the SMALL bounds, reset to seed 7 (the reset applies them)."""
    small_server._server.config.app.state.sim.state.bounds = Bounds.from_register().replace(**SMALL)
    yield from checked(_small_client)


def stores(http: httpx.Client) -> dict[str, dict[str, Any]]:
    return http.get("/_sim/health").json()["stores"]


def size(http: httpx.Client, name: str) -> int:
    return int(stores(http)[name]["size"])


def session_status(http: httpx.Client, token: str, session: str) -> httpx.Response:
    """A read that checks the session and changes nothing (``GET /webhooks/jwks``)."""
    return call(http, "GET", "/webhooks/jwks", token=token, session=session)


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/down"  # nothing listens: every attempt fails


def closed_card(http: httpx.Client, token: str, account_id: str) -> str:
    card = card_request(http, token, account_id, "virtual").json()["card_id"]
    assert close_card(http, token, card, {"reason": "lost"}).status_code == 200
    deliveries(http)  # waits for the attempts in flight
    return card


# --- the register's bounds ---------------------------------------------------------------------


def test_health_reports_every_store_with_the_register_bounds(http: httpx.Client, token: str) -> None:
    body = http.get("/_sim/health").json()
    assert body["status"] == "ok" and body["api_version"] == API_VERSION
    got = body["stores"]
    assert {name: got[name]["bound"] for name in REGISTER_BOUNDS} == REGISTER_BOUNDS
    assert {name: got[name]["bound"] for name in KEPT} == dict.fromkeys(KEPT)
    assert set(got) == set(REGISTER_BOUNDS) | set(KEPT)
    assert got["partner_tokens"]["size"] == 1 and got["nonces"] == {"size": 0, "bound": 1000, "dropped": 0}


def test_state_bounds_are_the_registers() -> None:
    bounds = State(7, "2025-01-06T09:00:00Z").bounds
    assert bounds == Bounds.from_register()
    assert (bounds.session_grace_seconds, bounds.delivery_keep_seconds, bounds.idempotency_seconds) == (
        86400,
        86400,
        86400,
    )


def test_the_register_nonce_bound_forgets_the_oldest_of_the_partner_only() -> None:
    state = State(7, "2025-01-06T09:00:00Z")
    for n in range(1001):
        state.nonces[f"a{n}"] = Nonce("sim-partner", state.now)
    state.nonces["b0"] = Nonce("sim-partner-b", state.now)
    assert "a0" not in state.nonces and "a1" in state.nonces and "b0" in state.nonces
    assert len(state.nonces) == 1001 and state.nonces.dropped == 1


# --- the store itself --------------------------------------------------------------------------


def test_store_keeps_its_order_through_pop_setdefault_and_replace() -> None:
    store: Store[str, Record] = Store(2)
    store["a"] = Record("p")
    store.setdefault("b", Record("p"))
    store["a"] = Record("p")  # replacing keeps its place: "a" is still the oldest
    store["c"] = Record("p")
    assert list(store) == ["b", "c"] and store.dropped == 1
    assert store.pop("b").partner == "p" and store.pop("b", None) is None
    store["d"] = Record("p")
    assert list(store) == ["c", "d"] and store.dropped == 1
    with pytest.raises(KeyError):
        del store["b"]
    with pytest.raises(ValueError):
        Store(0)
    with pytest.raises(TypeError):
        Bounds.from_register().replace(nonsense=1)


def test_store_sweep_in_order_stops_at_the_first_fresh_record() -> None:
    store: Store[int, Aging] = Store(None)
    for n, (partner, stale) in enumerate([("p", True), ("p", False), ("p", True), ("q", True)]):
        store[n] = Aging(partner, stale)
    assert store.sweep(lambda r: r.stale, in_order=True) == 2
    assert list(store) == [1, 2], "2 is behind the fresh 1: left for a later sweep"
    assert store.sweep(lambda r: r.stale) == 1 and list(store) == [1]
    assert store.dropped == 3


def test_delivery_log_forgets_finished_deliveries_before_pending_ones() -> None:
    log: DeliveryLog[Record] = DeliveryLog(2)
    log["d1"] = Record("p")
    log["d2"] = Record("p")
    log.finished("d2")
    log["d3"] = Record("p")
    assert list(log) == ["d1", "d3"], "the finished d2 went before the older pending d1"
    log["d4"] = Record("p")
    assert list(log) == ["d3", "d4"], "all pending: the oldest pending went"
    log.finished("gone")  # forgotten meanwhile: nothing happens
    assert [key for key, _ in log.pending()] == ["d3", "d4"] and log.dropped == 2


# --- nonces (A50) ------------------------------------------------------------------------------


def test_nonces_beyond_the_bound_the_oldest_is_nonce_invalid(small: httpx.Client) -> None:
    token = partner_token(small)
    inits = [init_data(small, token) for _ in range(4)]
    assert stores(small)["nonces"] == {"size": 3, "bound": 3, "dropped": 1}
    before = stores(small)
    with unchanged(small, token):
        assert_problem(create_session(small, token, Device(), init=inits[0]), 400, "nonce-invalid")
    assert stores(small) == before
    for init in inits[1:]:
        assert create_session(small, token, Device(), init=init).status_code == 201
    assert size(small, "nonces") == 0, "a used nonce is forgotten at once"


def test_nonces_within_the_bound_and_of_another_partner_are_kept(small: httpx.Client) -> None:
    token, other = partner_token(small), partner_token(small, *PARTNER_B)
    inits = [init_data(small, token) for _ in range(3)]
    others = [init_data(small, other) for _ in range(3)]
    assert stores(small)["nonces"]["dropped"] == 0
    for init in inits:
        assert create_session(small, token, Device(), init=init).status_code == 201
    assert create_session(small, other, Device(), init=others[0]).status_code == 201


def test_expired_nonces_are_forgotten_when_the_clock_moves(small: httpx.Client) -> None:
    token = partner_token(small)
    init = init_data(small, token)
    advance(small, 299)
    assert size(small, "nonces") == 1
    advance(small, 1)
    assert stores(small)["nonces"] == {"size": 0, "bound": 3, "dropped": 1}
    assert_problem(create_session(small, token, Device(), init=init), 400, "nonce-invalid")


# --- idempotency keys (A51, A20) ---------------------------------------------------------------


def _keyed_event(http: httpx.Client, token: str, account_id: str, key: str) -> httpx.Response:
    return call(http, "POST", f"/accounts/{account_id}/events", token=token, idem=key, json_body=EVENT)


def test_idempotency_keys_beyond_the_bound_the_oldest_runs_again(small: httpx.Client) -> None:
    j = journey(small, token=partner_token(small), until="account")
    first = {key: _keyed_event(small, j.token, j.account_id, key).json() for key in ("k1", "k2", "k3")}
    replay = _keyed_event(small, j.token, j.account_id, "k1")
    assert replay.headers.get("idempotent-replayed") == "true" and replay.json() == first["k1"]
    _keyed_event(small, j.token, j.account_id, "k4")
    assert stores(small)["idempotency"] == {"size": 3, "bound": 3, "dropped": 1}
    replay = _keyed_event(small, j.token, j.account_id, "k3")  # within the bound: replayed
    assert replay.headers.get("idempotent-replayed") == "true" and replay.json() == first["k3"]
    again = _keyed_event(small, j.token, j.account_id, "k1")  # forgotten: runs again
    assert again.status_code == 202 and "idempotent-replayed" not in again.headers
    assert again.json()["event_id"] != first["k1"]["event_id"]


def test_idempotency_keys_past_their_day_are_purged_when_the_clock_moves(small: httpx.Client) -> None:
    j = journey(small, token=partner_token(small), until="account")
    first = _keyed_event(small, j.token, j.account_id, "k1").json()
    advance(small, 86399)
    assert size(small, "idempotency") == 1
    advance(small, 1)
    assert stores(small)["idempotency"]["size"] == 0, "purged, not only ignored"
    token = partner_token(small)  # the first one expired with the day
    again = _keyed_event(small, token, j.account_id, "k1")
    assert again.status_code == 202 and again.json()["event_id"] != first["event_id"]


# --- sessions (A52) ----------------------------------------------------------------------------


def test_sessions_beyond_the_bound_the_oldest_is_invalid_session(small: httpx.Client) -> None:
    token = partner_token(small)
    sessions = [new_session(small, token, Device()) for _ in range(6)]
    assert stores(small)["sessions"] == {"size": 5, "bound": 5, "dropped": 1}
    before = stores(small)
    assert_problem(session_status(small, token, sessions[0]), 401, "invalid-session")
    assert stores(small) == before
    assert all(session_status(small, token, s).status_code == 200 for s in sessions[1:])


def test_expired_and_superseded_sessions_answer_so_for_the_grace_then_invalid(small: httpx.Client) -> None:
    j = journey(small, token=partner_token(small), until="account")
    assert_problem(session_status(small, j.token, j.anonymous), 401, "session-superseded")
    advance(small, 1800 + 3599)  # a fixed session lives 30 minutes (A06), then the grace
    token = j.token
    assert_problem(session_status(small, token, j.anonymous), 401, "session-superseded")
    assert_problem(session_status(small, token, j.account_session), 401, "session-expired")
    assert call(small, "DELETE", "/sessions", token=token, session=j.account_session).status_code == 204
    advance(small, 1)
    assert stores(small)["sessions"] == {"size": 0, "bound": 5, "dropped": 2}
    assert_problem(session_status(small, token, j.anonymous), 401, "invalid-session")
    ended = call(small, "DELETE", "/sessions", token=token, session=j.anonymous)
    assert_problem(ended, 401, "invalid-session")


def test_ended_sessions_are_forgotten_when_the_clock_moves(small: httpx.Client) -> None:
    token = partner_token(small)
    ended, live = new_session(small, token, Device()), new_session(small, token, Device(), strategy="sliding")
    assert call(small, "DELETE", "/sessions", token=token, session=ended).status_code == 204
    assert_problem(session_status(small, token, ended), 401, "invalid-session")
    advance(small, 0)
    assert size(small, "sessions") == 1
    assert_problem(session_status(small, token, ended), 401, "invalid-session")
    assert session_status(small, token, live).status_code == 200


# --- webhook deliveries (A53) and subscriptions (A57) ------------------------------------------


def test_delivery_log_forgets_the_oldest_finished_and_keeps_pending(
    small: httpx.Client, receiver: Receiver
) -> None:
    j = journey(small, token=partner_token(small), until="account")
    up = subscribe(small, j.token, receiver.url, ["card.closed"])["subscription_id"]
    down = subscribe(small, j.token, closed_port_url(), ["card.closed"])["subscription_id"]
    closed_card(small, j.token, j.account_id)
    closed_card(small, j.token, j.account_id)
    log = [(d["subscription_id"], d["status"]) for d in deliveries(small)]
    assert log == [(down, "pending"), (up, "delivered"), (down, "pending")]
    assert stores(small)["deliveries"]["dropped"] == 1


def test_delivery_log_when_all_are_pending_forgets_the_oldest(small: httpx.Client) -> None:
    j = journey(small, token=partner_token(small), until="account")
    subscribe(small, j.token, closed_port_url(), ["card.closed"])
    events = []
    for _ in range(4):
        closed_card(small, j.token, j.account_id)
        events.append(deliveries(small)[-1]["event_id"])
    log = deliveries(small)
    assert [d["status"] for d in log] == ["pending"] * 3
    assert [d["event_id"] for d in log] == events[1:]
    advance(small, 16)  # the three kept are retried to the end; the forgotten one is not
    assert [len(d["attempts"]) for d in deliveries(small)] == [6, 6, 6]


def test_finished_deliveries_are_kept_a_day_after_their_last_attempt(
    small: httpx.Client, receiver: Receiver
) -> None:
    j = journey(small, token=partner_token(small), until="account")
    subscribe(small, j.token, receiver.url, ["card.closed"])
    subscribe(small, j.token, closed_port_url(), ["card.closed"])
    closed_card(small, j.token, j.account_id)
    advance(small, 3599)  # the failing one's retries run: failed, last attempt at +16 s
    assert [d["status"] for d in deliveries(small)] == ["delivered", "failed"]
    advance(small, 1)
    assert [d["status"] for d in deliveries(small)] == ["failed"]
    advance(small, 16)
    assert deliveries(small) == []


def test_subscriptions_beyond_the_bound_the_oldest_gets_no_deliveries(
    small: httpx.Client, receiver: Receiver
) -> None:
    j = journey(small, token=partner_token(small), until="account")
    subscribe(small, j.token, receiver.url, ["card.closed"])
    kept = [subscribe(small, j.token, closed_port_url(), ["card.closed"])["subscription_id"] for _ in "ab"]
    closed_card(small, j.token, j.account_id)
    assert [d["subscription_id"] for d in deliveries(small)] == kept
    assert receiver.received() == [] and stores(small)["subscriptions"]["dropped"] == 1


# --- partner tokens (A54), rate windows (A55), inbound events (A56), faults (A58) ---------------


def test_partner_tokens_beyond_the_bound_the_oldest_is_invalid(small: httpx.Client) -> None:
    tokens = [partner_token(small) for _ in range(4)]
    assert stores(small)["partner_tokens"] == {"size": 3, "bound": 3, "dropped": 1}
    with unchanged(small):
        assert_problem(call(small, "GET", "/webhooks/jwks", token=tokens[0]), 401, "invalid-partner-token")
    assert all(call(small, "GET", "/webhooks/jwks", token=t).status_code == 200 for t in tokens[1:])


def test_revoked_and_expired_tokens_are_forgotten_when_the_clock_moves(small: httpx.Client) -> None:
    revoked, kept = partner_token(small), partner_token(small)
    resp = call(small, "DELETE", "/authorization/server_api/access_tokens", token=revoked)
    assert resp.status_code == 204
    advance(small, 0)
    assert size(small, "partner_tokens") == 1
    assert_problem(call(small, "GET", "/webhooks/jwks", token=revoked), 401, "invalid-partner-token")
    advance(small, 86400)
    assert size(small, "partner_tokens") == 0
    assert_problem(call(small, "GET", "/webhooks/jwks", token=kept), 401, "invalid-partner-token")


def _sessions_until_refused(http: httpx.Client, token: str, device: Device, most: int = 31) -> int:
    for made in range(most):
        if create_session(http, token, device).status_code == 429:
            return made
    return most


def test_rate_windows_beyond_the_bound_only_relax_the_rate(small: httpx.Client) -> None:
    token = partner_token(small)
    busy = Device()
    assert _sessions_until_refused(small, token, busy) == 30  # A32: 30 a minute
    new_session(small, token, Device())  # two windows: within the bound, busy is still limited
    assert_problem(create_session(small, token, busy), 429, "rate-limited")
    new_session(small, token, Device())  # a third window: busy's, the oldest, is forgotten
    assert stores(small)["session_starts"] == {"size": 2, "bound": 2, "dropped": 1}
    assert create_session(small, token, busy).status_code == 201
    advance(small, 60)
    assert size(small, "session_starts") == 0


def test_inbound_events_beyond_the_bound_are_forgotten_answers_unchanged(small: httpx.Client) -> None:
    j = journey(small, token=partner_token(small), until="account")
    answers = [send_event(small, j.token, j.account_id, EVENT) for _ in range(3)]
    assert [a.status_code for a in answers] == [202, 202, 202]
    assert stores(small)["inbound_events"] == {"size": 2, "bound": 2, "dropped": 1}


def test_faults_beyond_the_bound_the_oldest_is_forgotten(small: httpx.Client) -> None:
    ids = [add_fault(small, method="GET", path="/webhooks/jwks", status=503) for _ in range(3)]
    listed = small.get("/_sim/faults").json()["faults"]
    assert [f["fault_id"] for f in listed] == ids[1:]


# --- determinism -------------------------------------------------------------------------------


def test_what_is_forgotten_is_the_same_for_the_same_calls(small: httpx.Client) -> None:
    def run() -> tuple[Any, ...]:
        small.post("/_sim/reset", json={"seed": 7})
        j = journey(small, token=partner_token(small), until="account")
        events = [send_event(small, j.token, j.account_id, EVENT).json()["event_id"] for _ in range(3)]
        tokens = [partner_token(small) for _ in range(3)]
        alive = [call(small, "GET", "/webhooks/jwks", token=t).status_code for t in [j.token, *tokens]]
        advance(small, 1800)
        return events, alive, stores(small)

    first = run()
    assert first == run()
    assert first[1] == [401, 200, 200, 200]
    assert first[2]["inbound_events"]["dropped"] == 1 and first[2]["partner_tokens"]["dropped"] == 1


def test_a_rate_window_chosen_longer_is_kept_as_long_when_the_clock_moves() -> None:
    """The sweep forgets a device's rate window after the personality's window (A32), not after
    a minute: else a device could pass the limit of a longer window by waiting a minute."""
    from kit import _choices as choices
    from kit.sim import Settings
    from kit.sim.server import start_embedded

    overlay = choices.parse({"A32": {"window_seconds": 300, "max_sessions_per_device_per_minute": 2}})
    server = start_embedded(Settings(seed=7, choices=overlay))
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            token, busy = partner_token(http), Device()
            assert _sessions_until_refused(http, token, busy) == 2
            advance(http, 120)  # the clock moves: the sweep runs; the window is five minutes
            assert size(http, "session_starts") == 1
            assert_problem(create_session(http, token, busy), 429, "rate-limited")
            advance(http, 200)
            assert create_session(http, token, busy).status_code == 201
    finally:
        server.stop()
