"""Population simulation: plans, funnel vs rates, ledger, faults — on the default engine (shards
in local worker processes, each with its own simulator).

Bounded: one 200-customer run shared by the module, three 30-customer runs for determinism and
two 50-customer runs with faults (≈15 s in all on 2 cores, the worker processes kept between).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from decimal import Decimal

import httpx
import pandas as pd
import pytest
from matplotlib.figure import Figure

import kit.lab.populations.simulate as sim
from kit import register

N = 200
KYC_FAILURE_RATE = 0.2
REASON_MIX = {"lost": 3.0, "stolen": 1.0}
P2P_RATE = 0.5


def _within(observed: int, n: int, p: float, sigmas: float = 4.0) -> bool:
    """Binomial tolerance: |observed - n p| <= sigmas * sqrt(n p (1 - p))."""
    return abs(observed - n * p) <= sigmas * math.sqrt(n * p * (1 - p))


@pytest.fixture(scope="module")
def population(sim_url: str) -> Iterator[sim.SimulationResult]:
    yield sim.run(
        customers=N,
        seed=11,
        kyc_failure_rate=KYC_FAILURE_RATE,
        reason_mix=REASON_MIX,
        event_rate=1.0,
        p2p_rate=P2P_RATE,
        shards=4,
        progress=False,
    )


# --- planning (no network) ----------------------------------------------------------------------


def test_plans_are_seeded_and_well_formed() -> None:
    a = sim.plan(300, seed=5, kyc_failure_rate=0.3)
    assert a == sim.plan(300, seed=5, kyc_failure_rate=0.3)
    assert a != sim.plan(300, seed=6, kyc_failure_rate=0.3)
    assert len({p.device["device_id"] for p in a}) == 300
    personas = [p["persona_id"] for p in register.personas()]
    assert [p.persona_id for p in a[: len(personas) + 1]] == [*personas, personas[0]]
    assert _within(sum(p.fails_kyc for p in a), 300, 0.3)
    for p in a:
        if p.p2p_to is not None:  # an earlier customer planned to pass KYC
            assert p.p2p_to < p.customer and not a[p.p2p_to].fails_kyc
        if p.p2p_amount is not None:
            assert Decimal("1.00") <= p.p2p_amount <= Decimal("50.00")
        assert set(p.events) <= set(register.spec()["inbound_event_types"])
    # Switching journeys or rates elsewhere does not reshuffle who fails KYC.
    b = sim.plan(300, seed=5, kyc_failure_rate=0.3, p2p_rate=0.9, event_rate=3)
    assert [p.fails_kyc for p in a] == [p.fails_kyc for p in b]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kyc_failure_rate": 1.5},
        {"p2p_rate": -0.1},
        {"event_rate": -1},
        {"reason_mix": {"misplaced": 1.0}},
        {"reason_mix": {"lost": 0.0}},
    ],
)
def test_bad_settings_are_refused(kwargs: dict) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError):
        sim.plan(10, **kwargs)


def test_bad_run_arguments_are_refused_before_anything_runs() -> None:
    with pytest.raises(ValueError, match="journey"):
        sim.run(customers=1, journeys=("onboarding", "savings"), progress=False)
    with pytest.raises(ValueError, match="fault profile"):
        sim.run(customers=1, faults="hurricane", progress=False)


# --- one population -----------------------------------------------------------------------------


@pytest.mark.slow  # population runs: ≈9 s
def test_steps_are_tidy_and_sorted(population: sim.SimulationResult) -> None:
    steps = population.steps
    assert list(steps.columns) == sim.STEP_COLUMNS
    assert steps["customer"].nunique() == N
    assert steps[["customer", "t"]].equals(steps[["customer", "t"]].sort_values(["customer", "t"]))
    assert (steps.groupby("customer")["t"].apply(lambda t: list(t) == list(range(len(t))))).all()
    assert isinstance(steps["step"].dtype, pd.CategoricalDtype)
    assert str(steps["status"].dtype) == "Int64" and steps["latency_ms"].dtype == "float64"
    # Without faults nothing errors and nothing is retried; only KYC refusals and lost recipients.
    assert set(steps["outcome"].astype(str)) <= {"ok", "failed", "skipped"}
    assert int(steps["retries"].sum()) == 0


def test_funnel_matches_the_configured_kyc_failure_rate(population: sim.SimulationResult) -> None:
    funnel = population.funnel.set_index("stage")["customers"]
    assert funnel["started"] == funnel["kyc_questions"] == N
    failed = N - funnel["kyc_established"]
    assert _within(failed, N, KYC_FAILURE_RATE), failed
    # Exactly the customers planned to fail are the ones refused.
    refused = population.steps.query("step == 'kyc_answers' and outcome == 'failed'")
    assert set(refused["customer"]) == {p.customer for p in population.plans if p.fails_kyc}
    assert set(refused["code"]) == {"kyc-failed"}
    assert funnel["person_session"] == funnel["card_closed"] == funnel["kyc_established"]


def test_close_reasons_follow_the_mix(population: sim.SimulationResult) -> None:
    closed = population.steps.query("step == 'close_card' and outcome == 'ok'")["customer"]
    reasons = [population.plans[c].close_reason for c in closed]
    assert set(reasons) <= set(REASON_MIX)
    assert _within(reasons.count("lost"), len(reasons), 0.75)


def test_events_and_p2p_follow_the_plan(population: sim.SimulationResult) -> None:
    ok = population.steps[population.steps["outcome"] == "ok"]
    established = {p.customer for p in population.plans if not p.fails_kyc}
    expected_events = sum(len(population.plans[c].events) for c in established)
    assert (ok["step"] == "send_event").sum() == expected_events
    senders = [p for p in population.plans if p.customer in established and p.p2p_amount is not None]
    assert _within(len(senders), len(established), P2P_RATE)
    sent = ok[ok["step"] == "p2p_transfer"]
    assert len(sent) == sum(p.p2p_to is not None for p in senders)
    summary = population.summary()
    assert summary.p2p["p2p_confirmed"] == summary.p2p["transfers_in_ledger"] == len(sent) > 0


def test_every_planned_transfer_is_accounted_for(population: sim.SimulationResult) -> None:
    figures = population.summary().p2p
    planned = [p for p in population.plans if p.p2p_amount is not None]
    parts = ("p2p_confirmed", "p2p_failed", "p2p_no_recipient", "p2p_not_attempted")
    assert figures["p2p_planned"] == len(planned) == sum(figures[k] for k in parts)
    # No faults: a sender stops before P2P only by failing KYC, as planned.
    assert figures["p2p_not_attempted"] == sum(p.fails_kyc for p in planned) > 0
    assert figures["p2p_no_recipient"] == sum(not p.fails_kyc and p.p2p_to is None for p in planned) > 0
    assert figures["p2p_failed"] == 0


def test_each_planned_transfer_is_read_from_the_steps(population: sim.SimulationResult) -> None:
    transfers = population.transfers()
    planned = [p for p in population.plans if p.p2p_amount is not None]
    assert transfers["customer"].tolist() == [p.customer for p in planned]
    # The steps, sender by sender, agree with the shards' counters the summary adds up.
    counts = transfers["transfer"].value_counts()
    figures = population.summary().p2p
    fates = {
        "p2p_confirmed": "confirmed",
        "p2p_no_recipient": "no recipient",
        "p2p_not_attempted": "not attempted",
    }
    assert {k: int(counts.get(v, 0)) for k, v in fates.items()} == {k: figures[k] for k in fates}
    assert "failed" not in counts
    by = transfers.groupby("transfer")["stopped"].agg(set)
    assert by["confirmed"] == {"-"}
    assert by["not attempted"] == {"sender: kyc_answers failed (kyc-failed)"}  # no faults: KYC only
    assert by["no recipient"] == {"none planned"}
    assert transfers.loc[transfers["transfer"] == "no recipient", "p2p_to"].isna().all()


def test_a_transfer_skipped_for_its_recipient_names_where_the_recipient_stopped() -> None:
    rows = [
        (0, 0, "anonymous_session", "error", 503, "injected-fault", 1.0, 4),
        (1, 0, "anonymous_session", "ok", 201, None, 1.0, 0),
        (1, 1, "p2p_transfer", "skipped", None, "no-eligible-recipient", 0.0, 0),
        (2, 0, "p2p_transfer", "error", 503, "injected-fault", 1.0, 4),
        (3, 0, "p2p_transfer", "ok", 201, None, 1.0, 0),
    ]
    result = sim.SimulationResult(sim.Partial(), {}, 0.0, pd.DataFrame(), steps=sim.steps_frame(rows))
    plan = sim.plan(4, seed=7)
    result._plans = [
        dataclasses.replace(plan[0], p2p_amount=Decimal("5.00"), p2p_to=None),
        dataclasses.replace(plan[1], p2p_amount=Decimal("5.00"), p2p_to=0),
        dataclasses.replace(plan[2], p2p_amount=Decimal("5.00"), p2p_to=1),
        dataclasses.replace(plan[3], p2p_amount=Decimal("5.00"), p2p_to=1),
    ]
    transfers = result.transfers()
    assert transfers[["transfer", "stopped"]].values.tolist() == [
        ["not attempted", "sender: anonymous_session error (injected-fault)"],
        ["no recipient", "recipient: anonymous_session error (injected-fault)"],
        ["failed", "sender: p2p_transfer error (injected-fault)"],
        ["confirmed", "-"],
    ]
    assert transfers["p2p_to"].tolist() == [pd.NA, 0, 1, 1]


def test_money_is_conserved_across_all_p2p(population: sim.SimulationResult) -> None:
    assert population.money_conserved
    # Checked again from the shards' ledgers: nothing created, nothing lost.
    ledger = population.ledger
    opening = Decimal(register.value("A10")["starting_balance"])
    assert len(ledger) == N and ledger["customer"].tolist() == list(range(N))
    assert ledger["balance"].sum() == opening * N
    assert ledger["account_id"].is_unique  # each shard's simulator has its own seed, so its own ids
    assert (ledger["balance"] != opening).sum() > 0  # money did move between customers
    assert population.ledger["expected"].equals(population.ledger["balance"])
    # P2P stays inside a shard: a recipient is an earlier customer of the sender's shard.
    bounds = sim.shard_bounds(N, 4)
    for p in population.plans:
        if p.p2p_to is not None:
            shard = next(k for k, (a, b) in enumerate(bounds) if a <= p.customer < b)
            assert bounds[shard][0] <= p.p2p_to < p.customer


def test_summary_and_plots(population: sim.SimulationResult) -> None:
    summary = population.summary()
    text = str(summary)
    assert text.startswith("Funnel") and "kyc-failed" in text and "_ms" not in text
    assert "p50_ms" in summary.text(latency=True)
    assert set(summary.latency["step"].astype(str)) >= {"anonymous_session", "p2p_transfer"}
    assert "<h4>Funnel</h4>" in summary._repr_html_()
    for fig in (
        population.plot_funnel(),
        population.plot_latency(),
        population.plot_errors(),
        sim.plot_compare({"a": population, "b": population}),
    ):
        assert isinstance(fig, Figure) and fig.axes
    table = sim.compare({"a": population, "b": population})
    assert table["a"].tolist() == table["b"].tolist() == population.funnel["customers"].tolist()


# --- repeatability and faults -------------------------------------------------------------------


@pytest.mark.slow  # population runs: ≈9 s
def test_same_seed_same_steps_apart_from_latency() -> None:
    runs = [sim.run(customers=30, seed=3, shards=3, workers=w, progress=False) for w in (1, 2)]
    a, b = (r.steps.drop(columns="latency_ms") for r in runs)
    pd.testing.assert_frame_equal(a, b)
    other = sim.run(customers=30, seed=4, shards=3, progress=False, journeys=("onboarding",))
    assert set(other.steps["step"].astype(str)) == set(sim.STEPS[:7])
    assert not other.steps.drop(columns="latency_ms").equals(a)


@pytest.mark.slow  # population runs: ≈6 s
def test_faults_are_retried_money_moves_once_and_the_run_repeats(reset_sim: str) -> None:
    sim_url = reset_sim  # the caller's simulator, reset: no fault another test left behind
    assert httpx.get(f"{sim_url}/_sim/faults").json() == {"faults": []}
    faults = [
        {"method": "POST", "path": "/p2p/transfers", "status": 503, "rate": 0.5, "when": "after_commit"},
        {"method": "POST", "path": "/accounts/{account_id}/cards", "status": 503, "rate": 0.3},
    ]
    result, again = (
        sim.run(customers=50, seed=9, p2p_rate=1.0, faults=faults, shards=2, progress=False) for _ in range(2)
    )
    # Each shard plays its customers in order: its simulator draws the faults in the same order.
    pd.testing.assert_frame_equal(
        result.steps.drop(columns="latency_ms"), again.steps.drop(columns="latency_ms")
    )
    steps = result.steps
    p2p = steps[steps["step"] == "p2p_transfer"]
    assert p2p["retries"].sum() > 0 and steps.loc[steps["step"] == "create_card", "retries"].sum() > 0
    # after_commit: every retry is answered from the idempotency store — one transfer each.
    assert result.money_conserved
    confirmed = int((p2p["outcome"] == "ok").sum())
    gave_up = int(((p2p["outcome"] == "error") & (p2p["code"] == "injected-fault")).sum())
    assert confirmed <= result.transfers_in_ledger <= confirmed + gave_up
    failed = result.transfers().query("transfer == 'failed'")
    assert len(failed) == result.summary().p2p["p2p_failed"] == int((p2p["outcome"] == "error").sum())
    assert set(failed["stopped"]) <= {"sender: p2p_transfer error (injected-fault)"}
    assert httpx.get(f"{sim_url}/_sim/faults").json() == {"faults": []}  # the caller's: never touched
