"""``kit serve --state FILE`` survives a SIGKILL: nothing acknowledged is lost.

A server is killed in the middle of concurrent P2P transfers and card closes (each with an
Idempotency-Key) while the clock moves, then restarted on the same file and port. The test
checks what a team relies on: the partner token and every session still work, cards and
accounts are there, every key answered before the crash replays the same transfer, retrying
every key gives exactly one transfer per key, money is conserved to the cent, and the webhook
deliveries still pending are delivered after the restart (at least once, one event id each).

Bounded: three customers, at most 3,000 operations each, a kill as soon as 45 are answered and
the clock has moved;
loopback only.
"""

from __future__ import annotations

import threading
import time
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from tests.sim.helpers.journeys import Journey, journey, p2p_transfer
from tests.sim.helpers.resources import create_card
from tests.sim.helpers.webhooks import Receiver, subscribe
from tests.sim.helpers.wire import call, wait_until
from tests.support.launcher import serve_process

CUSTOMERS = 3
OPERATIONS = 3000  # per customer, at most: the kill comes long before
AMOUNT = "0.05"  # small: no sender runs dry before the kill, however the threads are scheduled
CARDS = 4  # per customer, closed one by one during the traffic
CLOCK_STEPS = 5  # one second each: retries fall due, none runs out before the restart (A25)
RETRY_OFFSETS_TOTAL = 1 + 2 + 4 + 8 + 16


class Traffic:
    """What each key was sent for and what (if anything) came back before the kill."""

    def __init__(self) -> None:
        self.transfers: dict[str, tuple[Journey, str]] = {}  # key -> (sender, recipient person)
        self.closes: dict[str, tuple[Journey, str]] = {}  # key -> (owner, card id)
        self.answers: dict[str, httpx.Response] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def customer(self, base_url: str, index: int, sender: Journey, to: Journey, cards: list[str]) -> None:
        with httpx.Client(base_url=base_url, timeout=10) as http:
            for n in range(OPERATIONS):
                if self.stop.is_set():
                    return
                key = f"c{index}-{n}"
                closing = n % 8 == 7 and cards
                try:
                    if closing:
                        card_id = cards.pop()
                        with self.lock:
                            self.closes[key] = (sender, card_id)
                        resp = close_with_key(http, sender, card_id, key)
                    else:
                        with self.lock:
                            self.transfers[key] = (sender, str(to.person_id))
                        resp = p2p_transfer(http, sender, str(to.person_id), AMOUNT, idem=key)
                except httpx.HTTPError:
                    return  # the server died under this request: unanswered
                with self.lock:
                    self.answers[key] = resp


def close_with_key(http: httpx.Client, owner: Journey, card_id: str, key: str) -> httpx.Response:
    return call(
        http,
        "POST",
        f"/cards/{card_id}/close",
        token=owner.token,
        session=owner.person_session,
        idem=key,
        json_body={"reason": "lost"},
    )


def _move_clock(base_url: str) -> None:
    """One second at a time, during the traffic: the failed first attempts' retries fall due."""
    with httpx.Client(base_url=base_url, timeout=30) as http:
        for _ in range(CLOCK_STEPS):
            time.sleep(0.05)
            assert http.post("/_sim/clock/advance", json={"seconds": 1}).status_code == 200


@pytest.mark.slow
def test_sigkill_during_traffic_loses_nothing_acknowledged(tmp_path: Path) -> None:
    state = str(tmp_path / "team.kitstate")
    receiver = Receiver()
    receiver.fail_always = True  # deliveries stay pending until after the restart
    traffic = Traffic()
    try:
        with serve_process("--state", state, "--crypto-workers", "0") as first:
            port = first.port
            with httpx.Client(base_url=first.base_url, timeout=30) as http:
                people = [journey(http, persona_index=i) for i in range(CUSTOMERS)]
                token = people[0].token
                people = [
                    people[0],
                    *(journey(http, persona_index=i, token=token) for i in range(1, CUSTOMERS)),
                ]
                subscribe(http, token, receiver.url, ["card.closed"])
                cards = {
                    i: [
                        create_card(http, token, p.account_id, session=p.person_session)["card_id"]
                        for _ in range(CARDS)
                    ]
                    for i, p in enumerate(people)
                }
                all_cards = {card: people[i] for i, ids in cards.items() for card in ids}
                accounts = [p.account_id for p in people]
                total = sum(
                    Decimal(a["balance"]["value"]) for a in http.get("/_sim/ledger").json()["accounts"]
                )
                workers = [
                    threading.Thread(
                        target=traffic.customer,
                        args=(first.base_url, i, people[i], people[(i + 1) % CUSTOMERS], list(cards[i])),
                    )
                    for i in range(CUSTOMERS)
                ]
                for worker in workers:
                    worker.start()
                clock = threading.Thread(target=_move_clock, args=(first.base_url,))
                clock.start()
                wait_until(
                    lambda: len(traffic.answers) >= CUSTOMERS * 15 and not clock.is_alive(), timeout=120
                )
                first.process.kill()  # SIGKILL, in the middle of the traffic
                first.process.wait(timeout=10)
            for worker in workers:
                worker.join(timeout=30)
        answered = dict(traffic.answers)
        assert CUSTOMERS * 15 <= len(answered) < CUSTOMERS * OPERATIONS  # killed mid-traffic
        assert any(key in answered for key in traffic.closes)
        receiver.fail_always = False
        with serve_process("--state", state, "--crypto-workers", "0", "--port", str(port)) as second:
            assert second.port == port
            with httpx.Client(base_url=second.base_url, timeout=30) as http:
                # the partner token and every session still work; cards and accounts are there
                for card_id, owner in all_cards.items():
                    got = call(
                        http, "GET", f"/cards/{card_id}", token=owner.token, session=owner.person_session
                    )
                    assert got.status_code == 200, got.text
                ledger = http.get("/_sim/ledger").json()
                assert {a["account_id"] for a in ledger["accounts"]} >= set(accounts)
                # every key answered before the crash replays the same answer
                for key, resp in answered.items():
                    if key in traffic.transfers and resp.status_code == 201:
                        sender, to = traffic.transfers[key]
                        again = p2p_transfer(http, sender, to, AMOUNT, idem=key)
                        assert again.headers.get("idempotent-replayed") == "true", again.text
                        assert again.json()["transfer_id"] == resp.json()["transfer_id"]
                # retrying every key gives exactly one transfer per key
                ids = {}
                for key, (sender, to) in traffic.transfers.items():
                    again = p2p_transfer(http, sender, to, AMOUNT, idem=key)
                    assert again.status_code == 201, again.text
                    ids[key] = again.json()["transfer_id"]
                ledger = http.get("/_sim/ledger").json()
                assert len(set(ids.values())) == len(ids) == len(ledger["transfers"])
                assert {t["transfer_id"] for t in ledger["transfers"]} == set(ids.values())
                for key, (owner, card_id) in traffic.closes.items():
                    again = close_with_key(http, owner, card_id, key)
                    assert again.status_code == 200 and again.json()["status"] == "closed", again.text
                    if key in answered:
                        assert again.headers.get("idempotent-replayed") == "true"
                # money is conserved to the cent
                assert sum(Decimal(a["balance"]["value"]) for a in ledger["accounts"]) == total
                # one card.closed per close, each delivered after the restart (the receiver
                # failed them all before it): at least once, deduplicable by event id
                for seconds in (1, 2, 4, 8, 16, RETRY_OFFSETS_TOTAL):
                    http.post("/_sim/clock/advance", json={"seconds": seconds})
                log = http.get("/_sim/webhooks/deliveries").json()["deliveries"]
                assert len(log) == len(traffic.closes)
                assert {d["status"] for d in log} == {"delivered"}, log
                ok = [r.json()["id"] for r in receiver.received() if r.json()["type"] == "card.closed"]
                assert {d["event_id"] for d in log} <= set(ok)
    finally:
        receiver.close()
