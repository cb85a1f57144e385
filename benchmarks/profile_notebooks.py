"""Where a notebook's seconds go (benchmark 3's profile): ``python -m benchmarks.profile_notebooks``.

Two parts, both written to ``benchmarks/results/notebooks_profile.json`` (``--out``):

- ``notebooks``: every notebook alone, one after the other, each through ``kit regress``'s own
  worker function (:func:`kit.regress.worker.execute`) in a fresh process: its wall time, the
  CPU seconds of that process and everything it waited for (the kernel, a population's
  workers), so ``idle = wall − CPU`` is time spent waiting (sleeps, the wall clock, webhooks,
  a kernel's start-up hand-shakes); and papermill's own phases from the executed notebook:
  kernel start (until the first cell), the cells, the gaps between them, and the end (the
  kernel's shutdown), with the slowest cells.
- ``components``: what every notebook's set-up costs in a fresh interpreter, median of
  ``--rounds``: importing ipykernel, pandas, the kit and its companion, the first
  ``kit.notebook.connect("sim")`` (the embedded simulator), the reset, matplotlib and ipywidgets.

Not a benchmark (no ratio): the profile that tells which fix is worth making. Sequential, so a
loaded machine stretches every figure alike; the load average is recorded.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.bench_support import PY, ROOT, median

RESULTS = ROOT / "benchmarks" / "results" / "notebooks_profile.json"

_ONE = r"""
import json, os, resource, sys, time
from pathlib import Path
from kit.regress.worker import execute, init_worker, pinned_kernelspec
from kit.regress import kernels
src, out, tmp, forked = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "forked"
os.environ["JUPYTER_PATH"] = str(pinned_kernelspec(Path(tmp) / "jupyter", forked=forked))
init_worker({"KIT_REGRESS": "1"})
os.makedirs(f"{tmp}/ipc", exist_ok=True)
import papermill  # imported before, as kit regress's workers have it
if forked:  # as kit regress runs them: the fork server started, its imports done
    server = kernels.serving(Path(tmp), {"KIT_REGRESS": "1"})
    init_worker(server.__enter__())
    execute(os.path.join(os.path.dirname(src), "00_quickstart.ipynb"), out, os.path.dirname(src), {}, 120.0,
            f"{tmp}/ipc")
from kit.regress import worker
worker._PAPERMILL["shutdown_kernel"] = sys.argv[5]
def zygote_cpu():  # forked kernels are the fork server's children, reaped by it as they end
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and b"kit.regress.kernels" in open(f"/proc/{pid}/cmdline", "rb").read():
                fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
                if int(fields[1]) == os.getpid():  # this process's server: its reaped kernels' CPU
                    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            pass
    return 0.0
def cpu(who):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime + (zygote_cpu() if who == resource.RUSAGE_CHILDREN else 0.0)
own0, kids0 = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
t0 = time.perf_counter()
outcome = execute(src, out, os.path.dirname(src), {}, 120.0, f"{tmp}/ipc", f"{tmp}/wire")
wall = time.perf_counter() - t0
print(json.dumps({"wall": wall, "cpu_worker": cpu(resource.RUSAGE_SELF) - own0,
                  "cpu_children": cpu(resource.RUSAGE_CHILDREN) - kids0, "error": outcome["error"]}))
"""

_COMPONENTS = r"""
import json, time
t = [time.perf_counter()]
def lap(): t.append(time.perf_counter())
import ipykernel.kernelapp; lap()
import pandas; lap()
import kit, kit.notebook; lap()
api = kit.notebook.connect("sim", seed=7); lap()
api.sim.reset(7); lap()
import matplotlib.pyplot; lap()
import ipywidgets; lap()
names = ["import ipykernel", "import pandas", "import kit, kit.notebook", "first connect('sim')",
         "sim.reset", "import matplotlib.pyplot", "import ipywidgets"]
print(json.dumps({n: b - a for n, a, b in zip(names, t, t[1:])}))
"""


def _phases(path: Path) -> dict[str, Any]:
    """papermill's phases in an executed notebook: start, cells, gaps, end, slowest cells."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    meta = nb["metadata"]["papermill"]
    at = datetime.fromisoformat
    cells = [
        (i, c["metadata"]["papermill"], "".join(c["source"]).strip().splitlines()[:1])
        for i, c in enumerate(nb["cells"])
        if c["cell_type"] == "code" and c["metadata"].get("papermill", {}).get("start_time")
    ]
    pm = [c[1] for c in cells]
    gaps = sum((at(b["start_time"]) - at(a["end_time"])).total_seconds() for a, b in itertools.pairwise(pm))
    slowest = sorted(cells, key=lambda c: -c[1]["duration"])[:3]
    return {
        "kernel_start_s": round((at(pm[0]["start_time"]) - at(meta["start_time"])).total_seconds(), 3),
        "cells_s": round(sum(c["duration"] for c in pm), 3),
        "gaps_s": round(gaps, 3),
        "end_s": round((at(meta["end_time"]) - at(pm[-1]["end_time"])).total_seconds(), 3),
        "papermill_s": round(meta["duration"], 3),
        "slowest_cells": [
            {"cell": i, "seconds": round(m["duration"], 3), "first_line": (line or [""])[0][:80]}
            for i, m, line in slowest
        ],
    }


def profile_notebook(
    source: Path, tmp: str, forked: bool = False, shutdown: str = "graceful"
) -> dict[str, Any]:
    out = Path(tmp) / source.name
    folder = Path(tmp) / source.stem
    folder.mkdir()
    proc = subprocess.run(
        [PY, "-c", _ONE, str(source), str(out), str(folder), "forked" if forked else "plain", shutdown],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    run = json.loads(proc.stdout.strip().splitlines()[-1])
    cpu = run["cpu_worker"] + run["cpu_children"]
    return {
        "wall_s": round(run["wall"], 3),
        "cpu_s": round(cpu, 3),
        "idle_s": round(max(0.0, run["wall"] - cpu), 3),
        "error": run["error"] and run["error"]["ename"],
        **_phases(out),
    }


def components(rounds: int) -> dict[str, float]:
    runs = []
    for _ in range(rounds):
        proc = subprocess.run([PY, "-c", _COMPONENTS], cwd=ROOT, capture_output=True, text=True, check=True)
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return {k: round(median([r[k] for r in runs]), 3) for k in runs[0]}


def measure(
    selection: list[str] | None = None, rounds: int = 3, forked: bool = False, shutdown: str = "graceful"
) -> dict[str, Any]:
    from kit.regress import discover

    notebooks = discover(ROOT / "notebooks", selection or ())
    load = os.getloadavg()
    per: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="kit-nbprofile-") as tmp:
        for source in notebooks:
            per[source.name] = profile_notebook(source, tmp, forked, shutdown)
            shown = {k: v for k, v in per[source.name].items() if k != "slowest_cells"}
            print(f"{source.name:40} {json.dumps(shown)}", flush=True)
    totals = {k: round(sum(p[k] for p in per.values()), 2) for k in
              ("wall_s", "cpu_s", "idle_s", "kernel_start_s", "cells_s", "gaps_s", "end_s")}  # fmt: skip
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "load_avg_at_start": [round(x, 2) for x in load],
        "load_avg_at_end": [round(x, 2) for x in os.getloadavg()],
        "components_s": components(rounds),
        "totals": totals,
        "notebooks": per,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="a selection (default: every notebook)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the component timings")
    parser.add_argument("--out", type=Path, default=None, help="write here (default: print only)")
    parser.add_argument("--forked", action="store_true", help="kernels from kit regress's fork server")
    parser.add_argument("--shutdown", default="graceful", choices=("immediate", "graceful"))
    parser.add_argument("--label", default="profile", help="the key this run is stored under in --out")
    args = parser.parse_args(argv)
    result = measure(args.notebooks, args.rounds, args.forked, args.shutdown)
    print(json.dumps({"components_s": result["components_s"], "totals": result["totals"]}, indent=1))
    if args.out:
        record = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else {}
        record[args.label] = result
        args.out.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
