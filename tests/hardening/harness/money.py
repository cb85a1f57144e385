"""Exactly-once money through the client: P2P transfers sent by ``kit.connect`` clients with
injected before- and after-commit faults and client retries; the ledger is compared with
what was intended (duplicates, losses, money conserved)."""

from __future__ import annotations

import random
import uuid
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import httpx

from tests.sim.helpers.control import ledger, reset


@dataclass
class MoneyReport:
    intended: int = 0
    in_ledger: int = 0
    duplicates: int = 0
    losses: int = 0
    mismatches: int = 0
    balance_errors: int = 0
    money_before: Decimal = Decimal(0)
    money_after: Decimal = Decimal(0)
    faults_fired: dict[str, int] = field(default_factory=dict)
    client_retries: int = 0
    replayed: int = 0
    gave_up: int = 0

    @property
    def conserved(self) -> bool:
        return self.money_before == self.money_after


@dataclass
class Customer:
    api: Any
    account_id: str
    person_id: str


@dataclass
class _Intent:
    key: str
    sender: Customer
    receiver: Customer
    amount: Decimal


def customer(api: Any, persona: int) -> Customer:
    """The client's onboarding journey (``kit.lab.journeys``) with simulator persona ``persona``."""
    from kit.lab.journeys import onboard

    done = onboard(api, persona=persona)
    assert done.status == "established" and done.person_id is not None, done
    return Customer(api, done.account_id, done.person_id)


def _balances(http: httpx.Client) -> dict[str, Decimal]:
    return {a["account_id"]: Decimal(a["balance"]["value"]) for a in ledger(http)["accounts"]}


def _inject_faults(control: Any, fault_rate: float) -> None:
    """``fault_rate`` of the transfer POSTs fail, half before the commit, half after it."""
    # draw_fault takes the first fault that fires: rates r and r/(1-r) split it in halves.
    half = fault_rate / 2
    for when, rate in (("before_commit", half), ("after_commit", half / (1 - half))):
        control.add_fault("POST", "/p2p/transfers", rate=rate, when=when, retry_after=1, latency_ms=1)


def _send(intent: _Intent, *, naive: bool, max_outer_attempts: int) -> str | None:
    """The caller's own bounded retry around the client's; the transfer id, or None."""
    from kit.errors import ApiError, TransportError

    key = intent.key
    for attempt in range(max_outer_attempts):
        if naive and attempt:
            key = f"{intent.key}-again{attempt}"
        try:
            t = intent.sender.api.p2p.transfer(
                from_account_id=intent.sender.account_id,
                to_person_id=intent.receiver.person_id,
                amount=intent.amount,
                idempotency_key=key,
            )
        except (ApiError, TransportError) as exc:
            if getattr(exc, "code", None) not in ("injected-fault", None):
                raise
            continue
        return t.transfer_id
    return None


def _reconcile(
    report: MoneyReport,
    http: httpx.Client,
    before: dict[str, Decimal],
    intents: list[_Intent],
    acknowledged: dict[int, str],
) -> None:
    """Compare the ledger with the intents: duplicates, losses, mismatches, balances."""
    book = ledger(http)
    after = {a["account_id"]: Decimal(a["balance"]["value"]) for a in book["accounts"]}
    report.money_after = sum(after.values(), Decimal(0))
    by_id = Counter(t["transfer_id"] for t in book["transfers"])
    rows = {t["transfer_id"]: t for t in book["transfers"]}
    report.in_ledger = len(book["transfers"])
    matched = 0
    expected = dict(before)
    for i, intent in enumerate(intents):
        expected[intent.sender.account_id] -= intent.amount
        expected[intent.receiver.account_id] += intent.amount
        tid = acknowledged.get(i)
        if tid is None or tid not in rows:
            report.losses += 1
            continue
        matched += 1
        row = rows[tid]
        if (
            row["from_account_id"] != intent.sender.account_id
            or row["to_person_id"] != intent.receiver.person_id
            or Decimal(row["amount"]["value"]) != intent.amount
        ):
            report.mismatches += 1
    report.duplicates = report.in_ledger - matched + sum(n - 1 for n in by_id.values())
    report.balance_errors = sum(1 for acc, value in expected.items() if after.get(acc) != value)


def run_transfers(
    base_url: str,
    *,
    count: int,
    customers: int = 4,
    fault_rate: float = 0.30,
    seed: int = 11,
    max_outer_attempts: int = 8,
    naive: bool = False,
) -> MoneyReport:
    """``count`` P2P transfers between ``customers`` onboarded customers, with ``fault_rate``
    of the POSTs failing (half before commit, half after), all retried by the client with
    the same Idempotency-Key. The ledger must show each intended transfer exactly once.

    ``naive``: the negative control — no client retries, and the caller retries with a new
    key each time, as a client without idempotency would: after-commit faults then move
    money twice, and the report must say so.
    """
    import kit

    report = MoneyReport(intended=count)
    rng = random.Random(seed)
    with httpx.Client(base_url=base_url, timeout=30.0) as http:
        reset(http, 7)
        clients = [
            kit.connect(
                "sim", base_url=base_url, sleep=lambda _s: None, seed=seed + i, max_retries=0 if naive else 6
            )
            for i in range(customers)
        ]
        try:
            people = [customer(api, i % 12) for i, api in enumerate(clients)]
            for person in people:
                person.api.sim.fund(person.account_id, "100000.00")
            before = _balances(http)
            report.money_before = sum(before.values(), Decimal(0))
            _inject_faults(clients[0].sim, fault_rate)
            intents: list[_Intent] = []
            acknowledged: dict[int, str] = {}
            for i in range(count):
                sender, receiver = rng.sample(people, 2)
                amount = Decimal(rng.randint(1, 5000)) / 100
                intents.append(_Intent(f"hx-{seed}-{i}-{uuid.uuid4().hex[:8]}", sender, receiver, amount))
                tid = _send(intents[-1], naive=naive, max_outer_attempts=max_outer_attempts)
                if tid is None:
                    report.gave_up += 1
                else:
                    acknowledged[i] = tid
            faults = http.get("/_sim/faults").json()["faults"]
            report.faults_fired = {f["when"]: f["fired"] for f in faults}
            http.delete("/_sim/faults")
            _reconcile(report, http, before, intents, acknowledged)
            for api in clients:
                history = api.history
                report.client_retries += int(history["retries"].sum())
                report.replayed += int(history["replayed"].sum())
        finally:
            for api in clients:
                api.close()
    return report
