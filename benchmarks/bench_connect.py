"""Benchmark 9 — ``kit.connect("sim")`` in a fresh interpreter, beyond ``import kit``.

What every notebook pays before its first call: the embedded simulator's imports (FastAPI,
uvicorn, pydantic), building its app, its seeded server keys and starting uvicorn, then the
client. Each round is a fresh interpreter (``python -c``) timing ``import kit`` and then
``kit.connect("sim")`` with ``perf_counter``; the figure is the median of the second part.
The target is absolute (the issue's): at most 0.3 s beyond ``import kit``.

``--profile`` prints where the time goes (cProfile of one cold connect, by cumulative time).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from benchmarks.bench_support import PY, ROOT, median

TARGET_S = 0.3

_TIMED = (
    "import time; t0 = time.perf_counter(); import kit; t1 = time.perf_counter(); "
    "api = kit.connect('sim'); t2 = time.perf_counter(); print(t1 - t0, t2 - t1)"
)
#: Where a cold connect's time goes, part by part (each part's imports once, in this order).
_PARTS = (
    "import time; t = [time.perf_counter()]; import kit; import kit._client; t.append(time.perf_counter()); "
    "import kit.sim.server; t.append(time.perf_counter()); "
    "from kit.sim.state import keys_for; keys_for(7); t.append(time.perf_counter()); "
    "api = kit.connect('sim'); t.append(time.perf_counter()); "
    "print(*(b - a for a, b in zip(t, t[1:])))"
)
PARTS = ("client_imports", "simulator_imports", "server_keys_seed_7", "app_server_and_client")
_PROFILE = (
    "import cProfile, pstats, kit; p = cProfile.Profile(); p.enable(); kit.connect('sim'); p.disable(); "
    "pstats.Stats(p).sort_stats('cumulative').print_stats({n})"
)


def _once() -> tuple[float, float]:
    out = subprocess.run(
        [PY, "-c", _TIMED], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    ).stdout.split()
    return float(out[0]), float(out[1])


def _parts() -> dict[str, float]:
    out = subprocess.run(
        [PY, "-c", _PARTS], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    ).stdout.split()
    return dict(zip(PARTS, (float(x) for x in out), strict=True))


def profile(lines: int = 25) -> str:
    """cProfile of one cold ``kit.connect("sim")`` (after ``import kit``), top ``lines`` entries."""
    return subprocess.run(
        [PY, "-c", _PROFILE.format(n=lines)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout


def measure(*, rounds: int = 5) -> dict[str, Any]:
    _once()  # warm the file-system cache and .pyc files
    imports, connects = zip(*(_once() for _ in range(rounds)), strict=True)
    seconds = median(connects)
    parts = [_parts() for _ in range(3)]
    return {
        "name": 'kit.connect("sim") beyond import kit (fresh interpreter)',
        "kit": round(seconds * 1000, 1),
        "kit_unit": 'ms for kit.connect("sim") after import kit',
        "reference": round(TARGET_S * 1000, 1),
        "reference_unit": "ms (the target)",
        "ratio": round(seconds / TARGET_S, 3),
        "target": "<= 1.0",
        "met": seconds <= TARGET_S,
        "rounds": rounds,
        "details": {
            "connect_ms": [round(x * 1000, 1) for x in connects],
            "import_kit_ms": [round(x * 1000, 1) for x in imports],
            "parts_ms_median": {k: round(median([p[k] for p in parts]) * 1000, 1) for k in PARTS},
        },
    }


if __name__ == "__main__":
    if "--profile" in sys.argv:
        print(profile())
    else:
        print(json.dumps(measure(), indent=2))
