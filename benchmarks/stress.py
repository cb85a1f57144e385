"""``make stress``: the big hardening runs of issue #6, with their figures.

Fuzzes the partner API from its own /openapi.json (at least 2,000 generated requests),
sends 1,000 P2P transfers through the client under 30 % injected faults, and runs a full
client journey through the leak scanner. Prints a table and writes
``benchmarks/results/stress.json`` (date, machine). Loopback only; a few minutes on 2 cores.

    .venv/bin/python -m benchmarks.stress [--requests 2000] [--transfers 1000] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from kit.sim import Settings
from kit.sim.server import start_embedded
from tests.hardening.harness import run_fuzz, run_leak_journey, run_transfers

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="generated requests, at least")
    parser.add_argument("--transfers", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "stress.json")
    args = parser.parse_args(argv)

    server = start_embedded(Settings(seed=7))
    started = time.perf_counter()
    try:
        t0 = time.perf_counter()
        fuzz = run_fuzz(server.base_url, max_examples=50, min_requests=args.requests, seed=args.seed)
        fuzz_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        money = run_transfers(server.base_url, count=args.transfers, fault_rate=0.30, seed=args.seed)
        money_s = time.perf_counter() - t0
        with tempfile.TemporaryDirectory() as tmp:
            leaks = run_leak_journey(server.base_url, Path(tmp))
    finally:
        server.stop()

    figures = {
        "requests_fuzzed": fuzz.requests,
        "operations_fuzzed": len(fuzz.operations),
        "server_errors_5xx": len(fuzz.server_errors),
        "schema_violations": len(fuzz.schema_violations),
        "problem_violations": len(fuzz.problem_violations),
        "transfers": money.intended,
        "transfers_in_ledger": money.in_ledger,
        "faults_before_commit": money.faults_fired.get("before_commit", 0),
        "faults_after_commit": money.faults_fired.get("after_commit", 0),
        "client_retries": money.client_retries,
        "duplicates": money.duplicates,
        "losses": money.losses,
        "mismatches": money.mismatches,
        "balance_errors": money.balance_errors,
        "money_conserved": money.conserved,
        "leak_hits": leaks.hits,
        "leak_scan_detects_planted": leaks.planted_found,
    }
    bad = (
        figures["server_errors_5xx"]
        + figures["schema_violations"]
        + figures["problem_violations"]
        + figures["duplicates"]
        + figures["losses"]
        + figures["mismatches"]
        + figures["balance_errors"]
        + figures["leak_hits"]
    )
    ok = bad == 0 and money.conserved and leaks.planted_found and fuzz.requests >= args.requests

    width = max(map(len, figures))
    print("stress figures (zero is the goal where it says 0)")
    for name, value in figures.items():
        shown = "yes" if value is True else "no" if value is False else f"{value:,}"
        print(f"  {name:<{width}}  {shown:>10}")
    print(f"  {'fuzz seconds':<{width}}  {fuzz_s:>10.1f}")
    print(f"  {'transfer seconds':<{width}}  {money_s:>10.1f}")
    print(f"  {'total seconds':<{width}}  {time.perf_counter() - started:>10.1f}")
    for line in (fuzz.failures() + leaks.csv_findings + leaks.log_findings)[:20]:
        print("  !", line)
    print("result:", "OK" if ok else "FAILED")

    args.out.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
        },
        "seed": args.seed,
        "seconds": round(time.perf_counter() - started, 1),
        "figures": figures,
        "status_codes": {str(k): v for k, v in sorted(fuzz.statuses.items())},
        "ok": ok,
    }
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
