"""Benchmark 5 — population simulation: complete onboarding journeys per second.

Runs ``benchmarks.bench_simulate``'s ``measure`` (``kit.simulate.run`` on the embedded
simulator: every customer its own ``kit.connect()`` device, 8 worker threads, no faults) in a
fresh subprocess, a few times after a warm-up, and reports the median. The target is absolute:
journeys per second on 2 cores.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from benchmarks.bench_support import PY, ROOT, median

TARGET = 200.0

_RUN = r"""
import json, sys
from benchmarks import bench_simulate
import kit.lab.simulate as sim
customers, rounds, concurrency = (int(a) for a in sys.argv[1:4])
sim.run(customers=10, seed=7, progress=False)  # warm-up: starts the embedded simulator
for _ in range(rounds):
    print(json.dumps(bench_simulate.measure(customers, concurrency=concurrency, faults="none", seed=7)),
          flush=True)
"""


def measure(
    *, customers: int = 300, rounds: int = 3, concurrency: int = 8, timeout: float = 240.0
) -> dict[str, Any]:
    base = {"name": "population simulation (kit.simulate.run, no faults)", "target": f">= {TARGET:.0f}"}
    proc = subprocess.run(
        [PY, "-c", _RUN, str(customers), str(rounds), str(concurrency)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    runs = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not runs:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        return {**base, "skipped": f"bench_simulate.measure failed: {tail[0][:300]}", "met": None}
    jps = median([r["journeys_per_s"] for r in runs])
    return {
        **base,
        "kit": round(jps, 1),
        "kit_unit": f"journeys/s ({customers} customers, {concurrency} threads)",
        "reference": TARGET,
        "reference_unit": "journeys/s (the target, on 2 cores)",
        "ratio": round(jps / TARGET, 3),
        "target_of": "kit",
        "met": jps >= TARGET,
        "rounds": len(runs),
        "details": {
            "journeys_per_s": [r["journeys_per_s"] for r in runs],
            "steps_per_s": [r["steps_per_s"] for r in runs],
            "steps": runs[-1]["steps"],
            "money_conserved": all(r["money_conserved"] for r in runs),
        },
    }


if __name__ == "__main__":
    print(json.dumps(measure(customers=200, rounds=2), indent=2))
