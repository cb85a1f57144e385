"""Exactly-once money under faults, through the client (issue #6, item 4).

Four customers onboarded by ``kit.connect`` send each other 60 transfers while 30 % of the
transfer POSTs fail — half before the commit, half after it (the money moved, the client
was told 503) — with ``Retry-After`` and a little latency. The client retries with the same
Idempotency-Key. The ledger must hold every intended transfer exactly once and the money
must add up. ``make stress`` runs 1,000.
"""

from __future__ import annotations

from typing import Any

from tests.hardening.harness import run_transfers


def test_every_transfer_exactly_once_under_injected_faults(sim_server: Any) -> None:
    report = run_transfers(sim_server.base_url, count=60, fault_rate=0.30, seed=11)
    # the faults really happened, of both kinds, and the client really retried
    assert report.faults_fired.get("before_commit", 0) >= 3, report
    assert report.faults_fired.get("after_commit", 0) >= 3, report
    assert report.client_retries >= sum(report.faults_fired.values()), report
    assert report.replayed == report.faults_fired["after_commit"], report
    # and yet every transfer moved money once
    assert report.in_ledger == report.intended == 60, report
    assert (report.duplicates, report.losses, report.mismatches, report.gave_up) == (0, 0, 0, 0), report
    assert report.balance_errors == 0, report
    assert report.conserved, report


def test_a_client_without_idempotency_would_duplicate(sim_server: Any) -> None:
    """The negative control: the same run with a new key per retry shows duplicates, so the
    check above can fail."""
    report = run_transfers(sim_server.base_url, count=30, fault_rate=0.30, seed=11, naive=True)
    assert report.faults_fired.get("after_commit", 0) >= 1, report
    assert report.duplicates == report.faults_fired["after_commit"] > 0, report
    assert report.balance_errors > 0, report
    assert report.conserved  # P2P moves money between customers: the total stays, the balances do not
