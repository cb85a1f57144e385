"""Benchmark 3 — the notebook suite vs the kernel floor.

Suite: ``python -m kit regress --jobs 2`` over every notebook (a subprocess, wall clock, into
one temporary output folder kept across the rounds, as ``out/regress`` is between a user's runs:
``kit regress`` starts the notebooks that took longest last time first).
Floor: ``notebooks × t_trivial ÷ 2``, where ``t_trivial`` is what
papermill takes, in-process with the same settings as ``kit regress`` (kernel ``python3``, IPC
transport), for a notebook with one trivial cell — mostly a kernel start; the median of the runs that did not
stall in the kernel's shutdown (ipykernel now and then hangs in its close; stock jupyter_client
terminates it after 2.5 s, kit regress's manager after 0.5 s: counting those runs would flatter
the suite). Rounds alternate the two sides.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import tempfile
import time
from typing import Any

from benchmarks.bench_support import PY, ROOT, median

TARGET = 3.0
JOBS = 2
#: A trivial run taking more than this many times the fastest stalled in the kernel's shutdown.
STALL = 3.0

_FLOOR = r"""
import json, os, sys, tempfile, time
import nbformat, papermill
from traitlets.config import Config
runs = int(sys.argv[1])
with tempfile.TemporaryDirectory() as tmp:
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("1 + 1"))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src = os.path.join(tmp, "trivial.ipynb")
    nbformat.write(nb, src)
    cfg = Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(tmp, "ipc")}})
    times = []
    for i in range(runs + 1):  # the first run warms imports and caches
        t0 = time.perf_counter()
        papermill.execute_notebook(src, os.path.join(tmp, f"out{i}.ipynb"), kernel_name="python3",
                                   progress_bar=False, log_output=False, cwd=tmp, start_timeout=60,
                                   execution_timeout=60, config=cfg)
        times.append(time.perf_counter() - t0)
    print(json.dumps(times[1:]))
"""


def _notebooks() -> list[str]:
    from kit.regress import discover

    return [p.name for p in discover(ROOT / "notebooks")]


def _regress(out: str, timeout: float) -> dict[str, Any]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [PY, "-m", "kit", "regress", "--jobs", str(JOBS), "--out", out],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    seconds = time.perf_counter() - t0
    per_notebook: dict[str, float] = {}
    for line in proc.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].endswith(".ipynb"):
            with contextlib.suppress(ValueError):
                per_notebook.setdefault(cells[0], float(cells[2]))  # the first table: the notebooks
    return {"seconds": seconds, "exit": proc.returncode, "per_notebook_s": per_notebook}


def _floor(runs: int, timeout: float) -> list[float]:
    proc = subprocess.run(
        [PY, "-c", _FLOOR, str(runs)], cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=True
    )
    return [float(t) for t in json.loads(proc.stdout.strip().splitlines()[-1])]


def measure(*, rounds: int = 2, floor_runs: int = 5, timeout: float = 240.0) -> dict[str, Any]:
    names = _notebooks()
    suites: list[dict[str, Any]] = []
    trivial: list[float] = []
    with tempfile.TemporaryDirectory() as out:
        for r in range(rounds):
            steps = ("suite", "floor") if r % 2 == 0 else ("floor", "suite")
            for step in steps:
                if step == "suite":
                    suites.append(_regress(out, timeout))
                else:
                    trivial.extend(_floor(floor_runs, timeout))
    suite_s = median([s["seconds"] for s in suites])
    # A stock papermill run now and then waits ~3.4 s for the kernel to end (ipykernel 7.4 hangs
    # in its own close; stock jupyter_client terminates it after 2.5 s, kit regress's manager after
    # 0.5 s, kit.regress.worker.SHUTDOWN_WAIT_S): such a run is no floor, and counting it would
    # flatter the suite. The floor is the median of the runs that did not stall.
    fastest = min(trivial)
    unstalled = [t for t in trivial if t <= STALL * fastest]
    t_trivial = median(unstalled)
    floor_s = len(names) * t_trivial / JOBS
    last = suites[-1]["per_notebook_s"]
    return {
        "name": "notebook suite (kit regress, 2 jobs) ÷ kernel floor",
        "kit": round(suite_s, 2),
        "kit_unit": f"s for kit regress --jobs {JOBS} over {len(names)} notebooks",
        "reference": round(floor_s, 2),
        "reference_unit": f"s = {len(names)} × {t_trivial:.2f} s (papermill, trivial notebook) ÷ {JOBS}",
        "ratio": round(suite_s / floor_s, 3),
        "target": f"<= {TARGET}",
        "met": suite_s / floor_s <= TARGET,
        "rounds": len(suites),
        "details": {
            "notebooks": len(names),
            "trivial_notebook_s": [round(t, 3) for t in trivial],
            "trivial_runs_stalled_in_kernel_shutdown": len(trivial) - len(unstalled),
            "suite_s": [round(s["seconds"], 2) for s in suites],
            "suite_exit_codes": [s["exit"] for s in suites],
            "per_notebook_s_last_round": last,
            "slowest": max(last, key=last.get) if last else None,
        },
    }


if __name__ == "__main__":
    json.dump(measure(rounds=int(sys.argv[1]) if len(sys.argv) > 1 else 1), sys.stdout, indent=2)
    print()
