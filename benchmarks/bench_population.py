"""Benchmark 5 — population simulation at the machine's limit, and past it.

- ``measure`` (5. population): ``kit.simulate.run`` journeys/s (shards in local worker
  processes, each with its own simulator) ÷ the machine's capacity for the same work done by
  hand: ``cores ÷ one bare sequential journey's time`` (benchmark 2's bare side: the same 17
  calls with httpx + joserfc, against ``kit serve``). Both sides in this run, each round's
  bare journeys around its population run; the median of the rounds' ratios.
- ``measure_cluster`` (7. cluster): the same shards on a 2-worker ``distributed.LocalCluster``
  ÷ on local processes, rounds alternating.
- ``measure_memory`` (8. memory): a shard's peak memory at two sizes (fresh interpreters) gives
  memory per simulated customer; projected for 1,000,000 customers streamed to Parquet, ÷ 8 GiB.

Each population figure is steady state: a warm-up run first starts the worker processes (its
time is recorded as ``cold_start_s``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_client import _recipient, bare_journey
from benchmarks.bench_support import PY, ROOT, median
from tests.support.launcher import serve_process

TARGET = 0.9
CLUSTER_TARGET = 0.9
BUDGET_GIB = 8.0
MILLION = 1_000_000
#: The layout the 1,000,000-customer projection assumes: customers per shard.
SHARD_SIZE = 25_000


def _cores() -> int:
    from kit.lab.populations.engine import default_workers

    return default_workers()


def _population(customers: int, shards: int, cluster: Any = None) -> dict[str, Any]:
    import kit.lab.populations.simulate as sim

    result = sim.run(customers=customers, seed=7, shards=shards, cluster=cluster, progress=False)
    assert result.money_conserved
    return {
        "journeys_per_s": result.journeys_per_second,
        "seconds": result.elapsed_s,
        "steps": len(result.steps),
        "peak_rss_mb": float(result.shards["peak_rss_mb"].max()),
    }


def _bare(url: str, pii: dict[str, str], recipient: str, count: int, start: int) -> list[float]:
    times = []
    for n in range(start, start + count):
        t0 = time.perf_counter()
        bare_journey(url, pii, recipient, n)
        times.append(time.perf_counter() - t0)
    return times


def measure(
    *, customers: int = 1200, shards: int = 4, rounds: int = 3, bare_journeys: int = 20
) -> dict[str, Any]:
    """Each round pairs its own two sides: half its bare journeys just before the population
    run and half just after, so both sides see the same moment of a shared machine; the figure
    is the median of the rounds' ratios (a load spike during one round's bare journeys used to
    move every round's reference, the pooled median, while only one run felt it)."""
    cores = _cores()
    cold_t0 = time.perf_counter()
    _population(40, 2)  # warm-up: starts the worker processes (the bare side's warm-up below)
    cold = time.perf_counter() - cold_t0
    before, after = bare_journeys // 2, bare_journeys - bare_journeys // 2
    bare: list[list[float]] = []
    runs: list[dict[str, Any]] = []
    with serve_process() as served:
        url = served.base_url
        recipient, pii = _recipient(url)
        bare_journey(url, pii, recipient, -1)  # warm-up
        for r in range(rounds):
            first = r * bare_journeys
            around = _bare(url, pii, recipient, before, first)
            runs.append(_population(customers, shards))
            around += _bare(url, pii, recipient, after, first + before)
            bare.append(around)
    capacities = [cores / median(times) for times in bare]
    ratios = [run["journeys_per_s"] / capacity for run, capacity in zip(runs, capacities, strict=True)]
    ratio = median(ratios)
    jps = median([r["journeys_per_s"] for r in runs])
    capacity = median(capacities)
    journey_ms = median([median(times) for times in bare]) * 1000
    return {
        "name": "population journeys/s ÷ (cores ÷ one bare sequential journey)",
        "kit": round(jps, 1),
        "kit_unit": f"journeys/s (kit.simulate, {customers} customers, {shards} shards, {cores} processes)",
        "reference": round(capacity, 1),
        "reference_unit": f"journeys/s = {cores} cores ÷ {journey_ms:.1f} ms (bare httpx + joserfc)",
        "ratio": round(ratio, 3),
        "target": f">= {TARGET}",
        "met": ratio >= TARGET,
        "rounds": len(runs),
        "details": {
            "pairing": f"per round: {before} bare journeys, the population run, {after} bare journeys; "
            "the figure is the median of the rounds' ratios",
            "ratios": [round(x, 3) for x in ratios],
            "journeys_per_s": [round(r["journeys_per_s"], 1) for r in runs],
            "capacity_per_round": [round(c, 1) for c in capacities],
            "bare_journey_ms": [[round(t * 1000, 1) for t in times] for times in bare],
            "cold_start_s": round(cold, 2),
            "worker_peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
            "steps": runs[-1]["steps"],
        },
    }


def measure_cluster(*, customers: int = 1200, shards: int = 4, rounds: int = 3) -> dict[str, Any]:
    try:
        import distributed
    except ImportError:
        return {"name": "cluster", "skipped": "dask[distributed] is not installed", "met": None}
    local: list[float] = []
    dask: list[float] = []
    _population(40, 2)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as lc,
        distributed.Client(lc) as client,
    ):
        t0 = time.perf_counter()
        _population(40, 4, client)  # warm-up: the Dask workers import the kit
        cold = time.perf_counter() - t0
        for r in range(rounds):
            for side in ("dask", "local") if r % 2 == 0 else ("local", "dask"):
                figure = _population(customers, shards, client if side == "dask" else None)["journeys_per_s"]
                (dask if side == "dask" else local).append(figure)
    ratio = median(dask) / median(local)
    return {
        "name": "population on a 2-worker Dask LocalCluster ÷ on local processes (same shards)",
        "kit": round(median(dask), 1),
        "kit_unit": f"journeys/s on LocalCluster(n_workers=2) ({customers} customers, {shards} shards)",
        "reference": round(median(local), 1),
        "reference_unit": "journeys/s on local worker processes",
        "ratio": round(ratio, 3),
        "target": f">= {CLUSTER_TARGET}",
        "met": ratio >= CLUSTER_TARGET,
        "rounds": len(dask),
        "details": {
            "dask_journeys_per_s": [round(x, 1) for x in dask],
            "local_journeys_per_s": [round(x, 1) for x in local],
            "dask_cold_start_s": round(cold, 2),
        },
    }


_SHARD = r"""
import json, sys, resource
from kit.lab.populations.shard import ShardSpec, run_shard
n = int(sys.argv[1])
result = run_shard(ShardSpec(index=0, first=0, end=n, out=sys.argv[2]))
print(json.dumps({"peak_rss_mb": result.peak_rss_mb, "customers": n}))
"""

_CALLER = r"""
import json, sys, resource
import kit.lab.populations.simulate as sim
result = sim.run(customers=int(sys.argv[1]), seed=7, shards=int(sys.argv[2]), out=sys.argv[3], progress=False)
result.summary()
print(json.dumps({"caller_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "money_conserved": result.money_conserved}))
"""


def _shard_peak(customers: int, folder: str) -> float:
    proc = subprocess.run(
        [PY, "-c", _SHARD, str(customers), folder],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["peak_rss_mb"])


def measure_memory(*, small: int = 300, large: int = 1500) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        low = _shard_peak(small, f"{tmp}/a")
        high = _shard_peak(large, f"{tmp}/b")
        steps = sum(f.stat().st_size for f in Path(f"{tmp}/b/steps").glob("*.parquet"))
        proc = subprocess.run(
            [PY, "-c", _CALLER, str(large), "4", f"{tmp}/c"], cwd=ROOT, capture_output=True, text=True,
            timeout=600, check=True,
        )  # fmt: skip
        caller = json.loads(proc.stdout.strip().splitlines()[-1])
    per_customer_kb = (high - low) * 1024 / (large - small)
    base_mb = low - per_customer_kb * small / 1024
    cores = _cores()
    worker_mb = base_mb + per_customer_kb * SHARD_SIZE / 1024
    projected_gib = (caller["caller_peak_rss_mb"] + cores * worker_mb) / 1024
    parquet_bytes_per_customer = steps / large
    return {
        "name": "memory: a 1,000,000-customer run streamed to Parquet ÷ 8 GiB",
        "kit": round(projected_gib, 2),
        "kit_unit": (
            f"GiB projected = caller {caller['caller_peak_rss_mb']:.0f} MB + {cores} workers × "
            f"({base_mb:.0f} MB + {SHARD_SIZE:,} customers/shard × {per_customer_kb:.1f} KB)"
        ),
        "reference": BUDGET_GIB,
        "reference_unit": "GiB",
        "ratio": round(projected_gib / BUDGET_GIB, 3),
        "target": "<= 1.0",
        "met": projected_gib <= BUDGET_GIB,
        "rounds": 1,
        "details": {
            "shard_peak_rss_mb": {str(small): low, str(large): high},
            "memory_per_customer_kb": round(per_customer_kb, 2),
            "worker_base_mb": round(base_mb, 1),
            "shards_for_a_million": MILLION // SHARD_SIZE,
            "worker_peak_mb_at_shard_size": round(worker_mb, 1),
            "caller_peak_rss_mb_streamed": round(caller["caller_peak_rss_mb"], 1),
            "parquet_bytes_per_customer": round(parquet_bytes_per_customer, 1),
            "parquet_gib_for_a_million": round(parquet_bytes_per_customer * MILLION / 2**30, 2),
            "workers_that_fit_8_gib": int((BUDGET_GIB * 1024 - caller["caller_peak_rss_mb"]) // worker_mb),
        },
    }


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "population"
    fn = {"population": measure, "cluster": measure_cluster, "memory": measure_memory}[which]
    print(json.dumps(fn(), indent=2))
