"""``make soak``: a shared ``kit serve`` under a week of team traffic, its memory sampled.

Runs :func:`tests.soak.harness.run_soak` (at least 200,000 requests of many devices through
``kit serve`` with its default crypto workers, one week of simulator time in hourly clock
steps, a webhook receiver down a quarter of the time), prints the figures and writes
``benchmarks/results/soak.json``. Fails (exit 1) on any 5xx or wrong answer, or when the
server's resident memory, workers included, grows more than 5 % after the warm-up. Loopback
only; bounded in requests and in time (47 s on a quiet 2-core machine, 2½ minutes on a busy one).

    .venv/bin/python -m benchmarks.soak [--requests 200000] [--time-limit 1800] [--state]

``--state`` runs ``kit serve --state FILE`` (a temporary file) and writes ``soak_state.json``,
with the records each home keeps in the file at the end: the capped ones stay capped there too.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.bench_support import ROOT, machine
from tests.soak.harness import SoakConfig, run_soak


def main(argv: list[str] | None = None) -> int:
    defaults = SoakConfig()
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=defaults.requests)
    parser.add_argument("--devices", type=int, default=defaults.devices)
    parser.add_argument("--concurrency", type=int, default=defaults.concurrency)
    parser.add_argument(
        "--clock-steps", type=int, default=defaults.clock_steps, help="over the week; 0: a frozen clock"
    )
    parser.add_argument("--time-limit", type=float, default=defaults.time_limit_s, help="seconds")
    parser.add_argument(
        "--state", action="store_true", help="kit serve --state FILE: the whole state in a SQLite file"
    )
    parser.add_argument("--out", type=Path, help="default: benchmarks/results/soak.json (soak_state.json)")
    args = parser.parse_args(argv)
    out = args.out or ROOT / "benchmarks" / "results" / ("soak_state.json" if args.state else "soak.json")
    config = SoakConfig(
        requests=args.requests,
        devices=args.devices,
        concurrency=args.concurrency,
        clock_steps=args.clock_steps,
        time_limit_s=args.time_limit,
        state=args.state,
    )
    host = machine()
    result = run_soak(config)

    figures = result.figures()
    width = max(map(len, figures))
    print("soak figures")
    for name, value in figures.items():
        print(f"  {name:<{width}}  {value}")
    print("stores at the end (size / bound per partner / forgotten):")
    for name, store in result.stores.items():
        print(f"  {name:<{width}}  {store['size']:>7,} / {store['bound'] or 'kept'} / {store['dropped']:,}")
    for line in result.failures():
        print("  !", line)
    print("result:", "OK" if result.ok else "FAILED")

    if result.file_rows:
        print("records in the state file at the end:", result.file_rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": host, **result.record()}
    out.write_text(json.dumps(record, indent=2) + "\n")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
