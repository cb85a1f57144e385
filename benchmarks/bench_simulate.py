"""Population simulation throughput: journeys (customers) per second, by shards and engine.

Not a timed test: it measures, prints and writes ``benchmarks/results/simulate.json``. Each
customer is one ``kit.connect()`` device going through onboarding (3 sessions, account,
person, KYC), a card opened and closed, ~1 inbound event and, for half of them, a P2P
transfer — about 15 HTTP calls and 5 JWE encryptions to the server key per customer. The
shards run in local worker processes (``--workers``) or on a Dask scheduler (``--cluster``).

Example::

    $ .venv/bin/python -m benchmarks.bench_simulate --customers 1000
    $ .venv/bin/python -m benchmarks.bench_simulate --customers 200 --faults flaky --shards 4 8
    $ .venv/bin/python -m benchmarks.bench_simulate --cluster tcp://127.0.0.1:8786
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import kit.lab.populations.simulate as sim

RESULTS = Path(__file__).resolve().parent / "results" / "simulate.json"


def measure(
    customers: int, *, shards: int, faults: str, seed: int, workers: int | None = None, cluster: Any = None
) -> dict[str, Any]:
    """One run; its figures (wall clock, journeys and steps per second, the ledger check)."""
    started = time.perf_counter()
    result = sim.run(
        customers=customers,
        seed=seed,
        shards=shards,
        workers=workers,
        cluster=cluster,
        faults=None if faults == "none" else faults,
        progress=False,
    )
    total = time.perf_counter() - started
    steps = len(result.steps)
    return {
        "customers": customers,
        "shards": shards,
        "engine": result.settings["engine"],
        "faults": faults,
        "seed": seed,
        "steps": steps,
        "run_s": round(result.elapsed_s, 2),
        "total_s_with_setup": round(total, 2),
        "journeys_per_s": round(result.journeys_per_second, 2),
        "steps_per_s": round(steps / result.elapsed_s, 1),
        "retries": int(result.steps["retries"].sum()),
        "money_conserved": result.money_conserved,
        "worker_peak_rss_mb": float(result.shards["peak_rss_mb"].max()),
        "funnel": dict(
            zip(result.funnel["stage"].astype(str), result.funnel["customers"].tolist(), strict=True)
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--customers", type=int, default=1000)
    parser.add_argument("--shards", type=int, nargs="+", default=[sim.DEFAULT_SHARDS * 2])
    parser.add_argument("--workers", type=int, default=None, help="local processes (default: one per core)")
    parser.add_argument("--cluster", default=None, help="a Dask scheduler address instead of local processes")
    parser.add_argument("--faults", nargs="+", default=["none"], choices=list(sim.FAULT_PROFILES))
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    engine = {"workers": args.workers, "cluster": args.cluster}
    sim.run(customers=20, seed=args.seed, shards=2, progress=False, **engine)  # warm-up: start the workers
    runs = []
    for faults in args.faults:
        for shards in args.shards:
            figures = measure(args.customers, shards=shards, faults=faults, seed=args.seed, **engine)
            runs.append(figures)
            print(
                f"{figures['customers']} customers, {shards} shards ({figures['engine']}), faults {faults}: "
                f"{figures['run_s']} s, {figures['journeys_per_s']} journeys/s, "
                f"{figures['steps_per_s']} steps/s, retries {figures['retries']}, "
                f"money conserved {figures['money_conserved']}"
            )
    report = {
        "benchmark": "kit.simulate.run",
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "load_avg_1m_at_end": round(os.getloadavg()[0], 2),
        },
        "runs": runs,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(Path.cwd()) if RESULTS.is_relative_to(Path.cwd()) else RESULTS}")


if __name__ == "__main__":
    main()
