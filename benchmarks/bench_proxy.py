"""Benchmark 11 — a notebook run through ``kit proxy`` ÷ the same run straight to the server.

Server: ``kit serve --no-control --choices data/choices/camel.toml --sandbox-fixtures F`` (a
subprocess, loopback), one for the whole benchmark. Each round runs ``kit regress -p
profile=sandbox --choices camel.toml --jobs 1`` over :data:`NOTEBOOKS` twice, in alternating
order: once with ``PARTNER_API_BASE_URL`` the server's, once a ``kit proxy --to`` it (started
before the round's clock, with ``--out``, ``--har`` and ``--write-choices``: every check and
record on). The figure is the median wall time through the proxy ÷ the median direct.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_support import CLIENT_ID, CLIENT_SECRET, PY, ROOT, median
from kit import _env as env
from tests.support.launcher import proxy_process, serve_process

TARGET = 1.1
#: The notebooks run each time: a journey with cards (05) and every error family (14).
NOTEBOOKS = ("05_cards_close_with_reason", "14_errors")
CAMEL = ROOT / "data" / "choices" / "camel.toml"


def _regress(base_url: str, fixtures: Path, out: Path, timeout: float) -> tuple[float, int]:
    variables = {
        env.BASE_URL: base_url,
        env.CLIENT_ID: CLIENT_ID,
        env.CLIENT_SECRET: CLIENT_SECRET,
        env.SANDBOX_FIXTURES: str(fixtures),
    }
    environ = {k: v for k, v in os.environ.items() if k not in (env.ACCESS_TOKEN, env.EXPECT_CHOICES)}
    command = [PY, "-m", "kit", "regress", *NOTEBOOKS, "-p", "profile=sandbox", "--choices", str(CAMEL)]
    t0 = time.perf_counter()
    proc = subprocess.run(
        [*command, "--jobs", "1", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**environ, **variables},
    )
    return time.perf_counter() - t0, proc.returncode


def measure(*, rounds: int = 3, timeout: float = 240.0) -> dict[str, Any]:
    direct: list[float] = []
    proxied: list[float] = []
    exits: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        fixtures = work / "fixtures.toml"
        with serve_process(
            "--no-control", "--choices", str(CAMEL), "--sandbox-fixtures", str(fixtures)
        ) as served:
            for r in range(rounds):
                for side in ("direct", "proxy") if r % 2 == 0 else ("proxy", "direct"):
                    out = work / f"{side}{r}"
                    if side == "direct":
                        seconds, code = _regress(served.base_url, fixtures, out, timeout)
                        direct.append(seconds)
                    else:
                        args = (
                            "--choices",
                            str(CAMEL),
                            "--out",
                            str(out / "proxy"),
                            "--har",
                            str(out / "p.har"),
                        )
                        with proxy_process(
                            served.base_url, *args, "--write-choices", str(out / "p.toml")
                        ) as p:
                            seconds, code = _regress(p.base_url, fixtures, out, timeout)
                        proxied.append(seconds)
                    exits.append(code)
    kit_s, reference_s = median(proxied), median(direct)
    return {
        "name": "notebooks through kit proxy ÷ straight to the server (kit regress, loopback)",
        "kit": round(kit_s, 2),
        "kit_unit": f"s for kit regress --jobs 1 over {len(NOTEBOOKS)} notebooks through kit proxy",
        "reference": round(reference_s, 2),
        "reference_unit": "s for the same run straight to kit serve",
        "ratio": round(kit_s / reference_s, 3),
        "target": f"<= {TARGET}",
        "met": kit_s / reference_s <= TARGET,
        "rounds": rounds,
        "details": {
            "notebooks": list(NOTEBOOKS),
            "direct_s": [round(s, 2) for s in direct],
            "proxy_s": [round(s, 2) for s in proxied],
            "exit_codes": exits,
        },
    }


if __name__ == "__main__":
    json.dump(measure(rounds=int(sys.argv[1]) if len(sys.argv) > 1 else 1), sys.stdout, indent=2)
    print()
