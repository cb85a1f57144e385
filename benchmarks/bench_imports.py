"""Benchmark 6 — import time of ``kit`` ÷ import time of httpx + joserfc.

Each side is imported in a fresh interpreter (``python -c``), timed with ``perf_counter``
around the import statement only (interpreter start-up excluded), rounds alternating.
Also records whether ``import kit`` pulled in pandas (it should not: only the DataFrame
views need it, and they import it when first used).
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from benchmarks.bench_support import PY, ROOT, comparison, median

TARGET = None  # the issue sets none; the table shows the ratio for the record

_TIMED = (
    "import sys, time; t = time.perf_counter(); {stmt}; d = time.perf_counter() - t; "
    "print(d, 'pandas' in sys.modules)"
)
KIT = "import kit"
REFERENCE = "import httpx, joserfc.jwe, joserfc.jwk, joserfc.jws"


def _once(stmt: str) -> tuple[float, bool]:
    out = subprocess.run(
        [PY, "-c", _TIMED.format(stmt=stmt)], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    return float(out[0]), out[1] == "True"


def measure(*, rounds: int = 7) -> dict[str, Any]:
    kit_s: list[float] = []
    ref_s: list[float] = []
    pandas = False
    _once(KIT), _once(REFERENCE)  # warm the file-system cache and .pyc files
    for r in range(rounds):
        for stmt in (KIT, REFERENCE) if r % 2 == 0 else (REFERENCE, KIT):
            seconds, with_pandas = _once(stmt)
            if stmt == KIT:
                kit_s.append(seconds)
                pandas = pandas or with_pandas
            else:
                ref_s.append(seconds)
    details = {
        "import_kit_pulls_pandas": pandas,
        "kit_ms": [round(x * 1000, 1) for x in kit_s],
        "reference_ms": [round(x * 1000, 1) for x in ref_s],
    }
    return comparison(
        "import kit ÷ import httpx + joserfc",
        median(kit_s) * 1000,
        median(ref_s) * 1000,
        units=("ms to import kit (fresh interpreter)", "ms to import httpx + joserfc"),
        rounds=rounds,
        details=details,
    )


if __name__ == "__main__":
    print(json.dumps(measure(rounds=5), indent=2))
