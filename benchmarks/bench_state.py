"""Benchmark 10 — what ``kit serve --state FILE`` costs: with the state file ÷ without.

Two ``kit serve`` processes side by side, one keeping its state in a SQLite file (WAL,
``synchronous=NORMAL``, every change written before its answer leaves) and one in memory;
rounds alternate between them. Two figures, each a slowdown (≥ 1: slower with the file):

- sessions: sessions/s without ÷ with (benchmark 1's harness: init data + ``POST /sessions``
  over HTTP, many connections);
- journey: ms per journey of one client through ``kit`` with ÷ without (benchmark 2's
  journey: onboarding, KYC, a card opened and closed, an event, a transfer).

Each figure is taken twice: by the wall clock (what a user sees, but on a machine shared with
other work it measures the scheduler as much as the server) and by the CPU time the server's
process spends on it (``psutil``: the event loop's process, where every write happens; the
crypto workers' decrypts are the same on both sides and left out). The ratio reported is the
largest CPU slowdown; the wall-clock ones and the load average are in the details. Both
servers run the same options (``kit serve``'s defaults, the same crypto workers) and the
same client; rounds alternate which goes first.

    .venv/bin/python -m benchmarks.bench_state      # 3 rounds
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_client import _recipient, kit_journey
from benchmarks.bench_sessions import ALG, _sessions
from benchmarks.bench_support import median, new_loop, partner_token
from tests.support.launcher import serve_process

TARGET = 1.25


def _sessions_runner(base_url: str, port: int, loop: Any) -> Any:
    import httpx
    from joserfc.jwk import ECKey, RSAKey

    devices = [ECKey.generate_key("P-256", private=True) for _ in range(32)]
    jwks_list = [{"keys": [{**d.as_dict(private=False), "use": "enc"}]} for d in devices]
    token = partner_token(base_url)
    init = httpx.get(
        base_url + "/sessions/user_session_initialization_data", headers={"Authorization": f"Bearer {token}"}
    ).json()
    rsa = next(k for k in init["jwks"]["keys"] if k["alg"] == ALG)
    run = functools.partial(
        _sessions, "127.0.0.1", port, token, jwks_list, RSAKey.import_key(rsa), rsa["kid"], connections=16
    )
    loop.run_until_complete(run(count=50, batch=50, tag="warm", deadline_s=30))
    return run


def _cpu(process: Any) -> float:
    """CPU seconds the server's own process has spent (all its threads): to the nanosecond
    from Linux's scheduler statistics, else psutil's (in clock ticks)."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{process.pid}/task"):
            with open(f"/proc/{process.pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
    except OSError:
        times = process.cpu_times()
        return float(times.user + times.system)
    return total / 1e9


def measure(*, rounds: int = 5, sessions: int = 400, journeys: int = 4) -> dict[str, Any]:
    import psutil

    rates: dict[str, list[float]] = {"memory": [], "file": []}
    times: dict[str, list[float]] = {"memory": [], "file": []}
    session_cpu: dict[str, list[float]] = {"memory": [], "file": []}
    journey_cpu: dict[str, list[float]] = {"memory": [], "file": []}
    with (
        tempfile.TemporaryDirectory() as folder,
        serve_process() as memory,
        serve_process("--state", str(Path(folder) / "bench.kitstate")) as durable,
        contextlib.closing(new_loop()) as loop,
    ):
        servers = {"memory": memory, "file": durable}
        procs = {k: psutil.Process(s.process.pid) for k, s in servers.items()}
        runners = {k: _sessions_runner(s.base_url, s.port, loop) for k, s in servers.items()}
        people = {k: _recipient(s.base_url) for k, s in servers.items()}
        for k, s in servers.items():
            kit_journey(s.base_url, people[k][1], people[k][0], -1)  # warm-up
        for r in range(rounds):
            order = ("memory", "file") if r % 2 == 0 else ("file", "memory")
            for k in order:
                c0 = _cpu(procs[k])
                one = loop.run_until_complete(
                    runners[k](count=sessions, batch=100, tag=f"{k}{r}", deadline_s=60)
                )
                session_cpu[k].append((_cpu(procs[k]) - c0) / max(one["created"], 1))
                rates[k].append(one["sessions_per_s"])
            for n in range(journeys):
                for k in order:
                    recipient, pii = people[k]
                    t0, c0 = time.perf_counter(), _cpu(procs[k])
                    kit_journey(servers[k].base_url, pii, recipient, r * journeys + n)
                    times[k].append(time.perf_counter() - t0)
                    journey_cpu[k].append(_cpu(procs[k]) - c0)
        file_bytes = sum(p.stat().st_size for p in Path(folder).iterdir())
    sessions_slowdown = median(rates["memory"]) / median(rates["file"])
    journey_slowdown = median(times["file"]) / median(times["memory"])
    sessions_cpu_slowdown = median(session_cpu["file"]) / median(session_cpu["memory"])
    journey_cpu_slowdown = median(journey_cpu["file"]) / median(journey_cpu["memory"])
    worst = max(sessions_cpu_slowdown, journey_cpu_slowdown)
    return {
        "name": "kit serve --state: with the state file ÷ in memory (slowdown)",
        "kit": round(worst, 3),
        "kit_unit": "the larger CPU slowdown of the two below (server process CPU with ÷ without)",
        "reference": 1.0,
        "reference_unit": "in memory",
        "ratio": round(worst, 3),
        "target": f"<= {TARGET}",
        "met": worst <= TARGET,
        "rounds": rounds,
        "details": {
            "server_cpu_us_per_session": {k: round(median(v) * 1e6, 1) for k, v in session_cpu.items()},
            "sessions_cpu_slowdown": round(sessions_cpu_slowdown, 3),
            "server_cpu_ms_per_journey": {k: round(median(v) * 1000, 2) for k, v in journey_cpu.items()},
            "journey_cpu_slowdown": round(journey_cpu_slowdown, 3),
            "load_average_1min": round(os.getloadavg()[0], 1),
            "sessions_per_s": {k: round(median(v), 1) for k, v in rates.items()},
            "sessions_slowdown": round(sessions_slowdown, 3),
            "journey_ms": {k: round(median(v) * 1000, 1) for k, v in times.items()},
            "journey_slowdown": round(journey_slowdown, 3),
            "state_file_bytes": file_bytes,
        },
    }


if __name__ == "__main__":
    print(json.dumps(measure(rounds=3), indent=2))
