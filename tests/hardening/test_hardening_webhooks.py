"""Webhooks under failure (issue #6, item 5), complementing ``tests/sim/test_sim_webhooks.py``
(one event, retry timing) and ``tests/client/test_webhooks.py`` (synthetic signatures).

Here: many events of every kind to a receiver that fails its first attempts or processes
and then fails (so the simulator sends it again), verified with the client's own
``kit.webhooks.verify`` against the simulator's clock; a receiver down beyond the retry
window; and the verifier against real deliveries tampered byte by byte, signed by another
key under the same kid, replayed late, or delivered twice.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest

from kit import errors
from kit.webhooks import verify
from tests.sim.helpers.contract import RETRY_OFFSETS
from tests.sim.helpers.control import advance, deliveries, open_document_request
from tests.sim.helpers.journeys import journey
from tests.sim.helpers.resources import close_card, create_card, submit_document
from tests.sim.helpers.webhooks import LoopbackServer, signing_keys, subscribe
from tests.sim.helpers.wire import parse_time, wait_until

EVENTS = ["card.closed", "document_request.created", "document_request.completed"]


class FlakyReceiver:
    """A loopback receiver: the first ``fail_first`` attempts of each event get 500 (before
    processing, or after it when ``process_then_fail``); ``down`` answers 503 to all.
    Processing = ``kit.webhooks.verify`` with the simulator's clock and a seen-set."""

    def __init__(
        self, base_url: str, jwks: dict[str, Any], *, fail_first: int = 0, process_then_fail: bool = False
    ):
        self.jwks = jwks
        self.fail_first = fail_first
        self.process_then_fail = process_then_fail
        self.down = False
        self.attempts: Counter[str] = Counter()
        self.processed: list[str] = []
        self.outcomes: Counter[str] = Counter()
        self.raw: list[tuple[bytes, dict[str, str]]] = []
        self.seen: set[str] = set()
        self._lock = threading.Lock()
        self._clock = httpx.Client(base_url=base_url, timeout=5)
        self.server = LoopbackServer(lambda _path, headers, body: (self.handle(body, headers), {}))

    @property
    def url(self) -> str:
        return self.server.url("/hooks")

    def now(self) -> datetime:
        return parse_time(self._clock.get("/_sim/clock").json()["now"])

    def handle(self, body: bytes, headers: dict[str, str]) -> int:
        with self._lock:
            self.raw.append((body, headers))
            if self.down:
                return 503
            event_id = json.loads(body)["id"]
            self.attempts[event_id] += 1
            failing = self.attempts[event_id] <= self.fail_first
            if failing and not self.process_then_fail:
                return 500
            try:
                verify(body, headers, self.jwks, now=self.now(), seen=self.seen)
                self.processed.append(event_id)
                self.outcomes["verified"] += 1
            except errors.DuplicateDelivery:
                self.outcomes["duplicate"] += 1
            except errors.WebhookVerificationError as exc:
                self.outcomes[type(exc).__name__] += 1
                return 400
            return 500 if failing else 200

    def close(self) -> None:
        self.server.close()
        self._clock.close()


def _settled(http: httpx.Client, attempts: int, count: int) -> list[dict[str, Any]]:
    """Wait (bounded) until ``count`` deliveries each have ``attempts`` attempts recorded."""
    got = wait_until(
        lambda: (
            [d for d in deliveries(http) if len(d["attempts"]) >= attempts]
            if len([d for d in deliveries(http) if len(d["attempts"]) >= attempts]) >= count
            else None
        ),
        timeout=10,
    )
    assert got, deliveries(http)
    return got


def _make_events(http: httpx.Client, token: str, cards: int) -> int:
    """``cards`` card.closed, one document_request.created and .completed per customer."""
    a = journey(http, token=token)
    b = journey(http, token=token, persona_index=1)
    for _ in range(cards):
        card = create_card(http, token, a.account_id)["card_id"]
        assert close_card(http, token, card, {"reason": "lost"}).status_code == 200
    for j in (a, b):
        doc = open_document_request(http, j.person_id)
        resp = submit_document(http, token, j.person_session, doc, {"kind": "bill"})
        assert resp.status_code == 200, resp.text
    return cards + 4


@pytest.fixture
def receivers() -> Iterator[list[FlakyReceiver]]:
    made: list[FlakyReceiver] = []
    yield made
    for r in made:
        r.close()


@pytest.mark.parametrize("process_then_fail", [False, True], ids=["fails-first", "processes-then-fails"])
def test_every_event_arrives_once_after_the_retries(
    http: httpx.Client, token: str, sim_server: Any, receivers: list, process_then_fail: bool
) -> None:
    rec = FlakyReceiver(
        sim_server.base_url, signing_keys(http, token), fail_first=2, process_then_fail=process_then_fail
    )
    receivers.append(rec)
    subscribe(http, token, rec.url, EVENTS)
    count = _make_events(http, token, cards=6)
    _settled(http, 1, count)
    advance(http, 1)
    _settled(http, 2, count)
    advance(http, 1)  # +2 s: the third attempt of each succeeds
    done = _settled(http, 3, count)
    assert all(d["status"] == "delivered" for d in done), done
    assert all([a["status_code"] for a in d["attempts"]] == [500, 500, 200] for d in done), done
    # each event processed exactly once, every signature and skew good
    assert len(rec.processed) == len(set(rec.processed)) == count, rec.processed
    assert Counter(json.loads(b)["type"] for b, _ in rec.raw) == {
        "card.closed": 18, "document_request.created": 6, "document_request.completed": 6,
    }  # fmt: skip
    expected_duplicates = 2 * count if process_then_fail else 0
    assert rec.outcomes == Counter({"verified": count, "duplicate": expected_duplicates}) - Counter(), (
        rec.outcomes
    )
    advance(http, 60)  # nothing more goes out once delivered
    assert len(rec.raw) == 3 * count


def test_a_receiver_down_beyond_the_window_leaves_failed_deliveries(
    http: httpx.Client, token: str, sim_server: Any, receivers: list
) -> None:
    rec = FlakyReceiver(sim_server.base_url, signing_keys(http, token))
    receivers.append(rec)
    rec.down = True
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{sock.getsockname()[1]}/gone"
    sock.close()  # nothing listens there
    up_sub = subscribe(http, token, rec.url, ["card.closed"])["subscription_id"]
    dead_sub = subscribe(http, token, dead, ["card.closed"])["subscription_id"]
    j = journey(http, token=token, until="account")
    cards = [create_card(http, token, j.account_id)["card_id"] for _ in range(3)]
    for card in cards:
        close_card(http, token, card, {})
    _settled(http, 1, 6)
    start = parse_time(deliveries(http)[0]["attempts"][0]["at"])
    elapsed = 0
    for n, offset in enumerate(RETRY_OFFSETS, start=2):
        advance(http, offset - elapsed)
        elapsed = offset
        _settled(http, n, 6)
    failed = wait_until(lambda: [d for d in deliveries(http) if d["status"] == "failed"] if all(
        d["status"] == "failed" for d in deliveries(http)) else None, timeout=10)  # fmt: skip
    assert failed and len(failed) == 6, deliveries(http)
    for d in failed:
        assert len(d["attempts"]) == 6
        offsets = [(parse_time(a["at"]) - start).total_seconds() for a in d["attempts"]]
        assert offsets == [0, *RETRY_OFFSETS]
        codes = {a["status_code"] for a in d["attempts"]}
        assert codes == {up_sub: {503}, dead_sub: {None}}[d["subscription_id"]], d  # None: no connection
    assert rec.processed == []
    # back up: the failed deliveries stay failed (no more attempts), a new event gets through
    rec.down = False
    advance(http, 3600)
    assert all(len(d["attempts"]) == 6 and d["status"] == "failed" for d in deliveries(http))
    card = create_card(http, token, j.account_id)["card_id"]
    close_card(http, token, card, {"reason": "damaged"})
    assert wait_until(lambda: len(rec.processed) == 1, timeout=10), rec.outcomes
    by_status = Counter((d["subscription_id"], d["status"]) for d in deliveries(http))
    assert by_status == {
        (up_sub, "failed"): 3,
        (dead_sub, "failed"): 3,
        (up_sub, "delivered"): 1,
        (dead_sub, "pending"): 1,
    }


# --- the verifier against real deliveries -------------------------------------------------------


@pytest.fixture
def delivery(
    http: httpx.Client, token: str, sim_server: Any, receivers: list
) -> tuple[bytes, dict[str, str], dict, datetime]:
    rec = FlakyReceiver(sim_server.base_url, signing_keys(http, token))
    receivers.append(rec)
    subscribe(http, token, rec.url, ["card.closed"])
    j = journey(http, token=token, until="account")
    card = create_card(http, token, j.account_id)["card_id"]
    close_card(http, token, card, {"reason": "stolen"})
    assert wait_until(lambda: rec.processed, timeout=10)
    body, headers = rec.raw[0]
    return body, headers, signing_keys(http, token), rec.now()


def test_every_single_byte_change_of_a_real_body_is_rejected(delivery: Any) -> None:
    body, headers, jwks, now = delivery
    verify(body, headers, jwks, now=now, seen=None)  # the original is good
    for i in range(len(body)):
        changed = bytearray(body)
        changed[i] ^= 0x20 if 0x41 <= changed[i] <= 0x7A else 0x01
        with pytest.raises(errors.WebhookVerificationError):
            verify(bytes(changed), headers, jwks, now=now, seen=None)
    for variant in (body + b"\n", b" " + body, body[:-1], body.replace(b'"stolen"', b'"lost"')):
        with pytest.raises(errors.WebhookVerificationError):
            verify(variant, headers, jwks, now=now, seen=None)


def test_a_key_the_server_never_used_is_rejected_even_under_its_kid(delivery: Any) -> None:
    from kit.sim.state import keys_for

    body, headers, jwks, now = delivery
    other = keys_for(8).signing_jwks()
    with pytest.raises(errors.UnknownSigningKey):
        verify(body, headers, other, now=now, seen=None)
    impostor = {"keys": [{**other["keys"][0], "kid": jwks["keys"][0]["kid"]}]}
    with pytest.raises(errors.SignatureInvalid):
        verify(body, headers, impostor, now=now, seen=None)


def test_replays_older_than_five_minutes_and_duplicates_are_rejected(delivery: Any) -> None:
    body, headers, jwks, now = delivery
    iat = int(now.timestamp())
    verify(body, headers, jwks, now=iat + 300, seen=None)
    verify(body, headers, jwks, now=iat - 300, seen=None)
    for late in (iat + 301, iat + 86400, iat - 301):
        with pytest.raises(errors.SignatureExpired):
            verify(body, headers, jwks, now=late, seen=None)
    seen: set[str] = set()
    verify(body, headers, jwks, now=now, seen=seen)
    with pytest.raises(errors.DuplicateDelivery):
        verify(body, headers, jwks, now=now, seen=seen)
    with pytest.raises(errors.DuplicateDelivery):  # a late duplicate within the window: still one
        verify(body, headers, jwks, now=iat + 10, seen=seen)
