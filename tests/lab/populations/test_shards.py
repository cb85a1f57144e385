"""Shards past the caller: worker processes and a real Dask ``LocalCluster`` (2 worker processes)
give the same ``steps``; a run streamed to Parquet summarises from the shards' partial figures;
the caller's own simulator and session are never touched.

Bounded: 300 customers in 4 shards, four times (local, cluster, cluster to Parquet, and the
caller's-session run), ≈25 s on 2 cores including the cluster's start.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import kit
import kit.lab.populations.simulate as sim
from kit.lab.journeys import onboard
from kit.lab.populations.aggregate import Partial

N, SEED, SHARDS = 300, 7, 4


def _rows(result: sim.SimulationResult) -> pd.DataFrame:
    return result.steps.drop(columns="latency_ms")


@pytest.fixture(scope="module")
def local() -> sim.SimulationResult:
    return sim.run(customers=N, seed=SEED, shards=SHARDS, progress=False)


@pytest.fixture(scope="module")
def client() -> Iterator[object]:
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as lc,
        distributed.Client(lc) as dask_client,
    ):
        yield dask_client


@pytest.mark.slow  # worker processes and a Dask cluster: ≈4 s
def test_the_caller_session_survives_a_population(sim_url: str) -> None:
    device = {"device_id": "dev-caller", "platform": "ios", "model": "x", "os_version": "1"}
    with kit.connect("sim", device=device) as api:
        api.sim.reset(SEED)
        api.webhooks.listen()
        done = onboard(api, persona=0, expiration="sliding")
        before = api.sim.ledger()

        result = sim.run(customers=20, seed=SEED, shards=2, progress=False)

        assert result.money_conserved and result.partial.customers == 20
        # Same session, same webhook subscription, same simulator: nothing reset or reissued.
        assert api.session is not None and api.session.person_id == done.person_id
        card = api.cards.create(done.account_id, type="virtual")  # refused if the run had reset it
        api.cards.close(card.card_id, reason="lost")
        event = api.webhooks.wait_for(
            "card.closed", timeout=5, where=lambda e: e.data.get("card_id") == card.card_id
        )
        assert event.data["close_reason"] == "lost"  # delivered: the subscription survived
        after = api.sim.ledger()
        assert after["account_id"].tolist() == before["account_id"].tolist() == [done.account_id]


@pytest.mark.slow  # worker processes and a Dask cluster: ≈14 s
def test_shards_are_seeded_slices(local: sim.SimulationResult) -> None:
    assert local.shards["customers"].tolist() == [75, 75, 75, 75]
    assert local.shards["first"].tolist() == [0, 75, 150, 225]
    assert local.settings["shards"] == SHARDS and local.money_conserved
    assert local.plans == sim.plan(N, seed=SEED, shards=SHARDS)
    # Another shard count: the same draws for every customer, only the P2P recipients differ
    # (a recipient is an earlier customer of the sender's own shard).
    other = sim.plan(N, seed=SEED, shards=2)
    drawn = [dataclasses.replace(p, p2p_to=None) for p in local.plans]
    assert [dataclasses.replace(p, p2p_to=None) for p in other] == drawn
    assert [p.p2p_to for p in other] != [p.p2p_to for p in local.plans]
    assert sim.plan(N, seed=SEED, shards=SHARDS)[75:150] == sim.plan_shard(1, 75, 150, sim.Draws(seed=SEED))
    assert sim.run(customers=3, seed=SEED, shards=10, progress=False).settings["shards"] == 3


@pytest.mark.slow  # worker processes and a Dask cluster: ≈18 s
def test_a_local_cluster_gives_the_same_steps(local: sim.SimulationResult, client: object) -> None:
    on_dask = sim.run(customers=N, seed=SEED, shards=SHARDS, cluster=client, progress=False)
    pd.testing.assert_frame_equal(_rows(on_dask), _rows(local))
    assert on_dask.money_conserved and on_dask.settings["engine"] == "dask"
    assert on_dask.summary().text() == local.summary().text()
    pd.testing.assert_frame_equal(
        on_dask.ledger.drop(columns="account_id"), local.ledger.drop(columns="account_id")
    )


@pytest.mark.slow  # worker processes and a Dask cluster: ≈15 s
def test_a_run_streamed_to_parquet_summarises_without_its_rows(
    local: sim.SimulationResult, client: object, tmp_path: Path
) -> None:
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "shard-0099.parquet").write_bytes(b"stale")  # an earlier run's: removed
    streamed = sim.run(
        customers=N,
        seed=SEED,
        shards=SHARDS,
        cluster=client.scheduler.address,
        out=tmp_path,
        progress=False,  # type: ignore[attr-defined]
    )
    assert sorted(p.name for p in (tmp_path / "steps").iterdir()) == [
        f"shard-000{k}.parquet" for k in range(4)
    ]
    # The summary came from the shards' figures: no row was read back for it.
    summary = streamed.summary()
    assert streamed._steps is None and streamed.out == tmp_path
    assert summary.text() == local.summary().text()
    assert streamed.money_conserved and streamed.transfers_in_ledger == local.transfers_in_ledger
    # The rows, with pandas or dask.dataframe: the same as the run held in memory.
    pd.testing.assert_frame_equal(_rows(streamed), _rows(local))
    raw = pd.read_parquet(tmp_path / "steps")
    assert len(raw) == len(local.steps) and list(raw.columns) == sim.STEP_COLUMNS
    dd = pytest.importorskip("dask.dataframe")
    counts = dd.read_parquet(str(tmp_path / "steps")).groupby("step").size().compute()
    assert counts.to_dict() == local.steps["step"].astype(str).value_counts().to_dict()
    pd.testing.assert_frame_equal(
        streamed.ledger.drop(columns="account_id"), local.ledger.drop(columns="account_id")
    )
    # Percentiles from the histograms: within a bin of the exact ones (wall clock differs per run).
    approx = streamed.latency.set_index("step")
    assert approx["calls"].to_dict() == local.latency.set_index("step")["calls"].to_dict()
    assert (approx["p50_ms"] <= approx["p90_ms"]).all() and (
        approx["p99_ms"] <= approx["max_ms"] * 1.03
    ).all()


def test_partials_add_up_to_the_figures_of_all_rows(local: sim.SimulationResult) -> None:
    steps = local.steps
    halves = [steps[steps["customer"] < 150], steps[steps["customer"] >= 150]]
    parts = [Partial.of(h, customers=150) for h in halves]
    whole = Partial.of(steps, customers=N)
    merged = Partial.total(parts)
    assert merged.reached == whole.reached and merged.errors == whole.errors
    assert merged.retries == whole.retries and merged.customers == N
    pd.testing.assert_frame_equal(merged.funnel(), whole.funnel())
    pd.testing.assert_frame_equal(merged.error_table(), whole.error_table())
    pd.testing.assert_frame_equal(merged.latency_table(), whole.latency_table())
    # and they match pandas over every row
    ok = steps[steps["outcome"] == "ok"]
    assert dict(merged.reached) == ok.groupby("step", observed=True)["customer"].nunique().to_dict()
    bad = steps[steps["outcome"] != "ok"]
    assert merged.error_table()["count"].sum() == len(bad)
    exact = steps[steps["outcome"] != "skipped"].groupby("step", observed=True)["latency_ms"].quantile(0.5)
    approx = merged.latency_table().set_index("step")["p50_ms"]
    for step, value in exact.items():
        assert abs(approx[str(step)] - value) <= 0.05 * value + 0.02, (step, approx[str(step)], value)


def test_bad_shard_settings_are_refused_before_anything_runs() -> None:
    with pytest.raises(ValueError, match="shards"):
        sim.run(customers=10, shards=0, progress=False)
    with pytest.raises(ValueError, match="concurrency"):
        sim.run(customers=10, concurrency=0, progress=False)
    with pytest.raises(ValueError, match="kyc_failure_rate"):
        sim.run(customers=10, kyc_failure_rate=2.0, progress=False)
    with pytest.raises(ValueError, match="close reason"):
        sim.run(customers=10, reason_mix={"misplaced": 1.0}, progress=False)


def test_a_warmed_simulator_serves_the_first_shard() -> None:
    """A worker starts its simulator as it starts (``_warm``); its first shard uses that one."""
    from kit.lab.populations import shard
    from kit.lab.populations.planning import Draws

    shard.warm_simulator()
    warmed = shard._IDLE[-1]
    try:
        assert warmed.running
        result = shard.run_shard(shard.ShardSpec(index=0, first=0, end=2, draws=Draws(seed=7)))
        assert result.partial.customers == 2 and result.ledger is not None
        assert shard._IDLE[-1] is warmed and shard._IDLE.count(warmed) == 1
        assert {key[0] for key in result.calls} == {warmed.base_url}  # (server, method, operation, status)
    finally:
        with shard._IDLE_LOCK:
            shard._IDLE.remove(warmed)
        warmed.stop()
