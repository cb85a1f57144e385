"""Benchmark 4 — the simulator vs Stoplight Prism on ``GET /cards/{card_id}``.

The simulator answers from its state (partner bearer token checked, the card looked up,
headers of the contract); Prism (``prism mock``, logging silenced) mocks the simulator's own
``/openapi.json`` and checks the bearer scheme. Same load generator (``wrk`` when installed,
else the lean asyncio client of ``bench_support``), same connections, same duration, both
on loopback, rounds alternating. Prism is installed with npm into ``benchmarks/.prism``
(git-ignored); when it cannot be installed the benchmark says so and is skipped. What the
simulator's fast path is worth here: ``benchmarks/results/fastpath.json``.

    .venv/bin/python -m benchmarks.bench_prism      # 2 rounds of 3 s a side
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_support import hammer, median, new_loop, partner_token, raw_request, wait_http
from tests.support.launcher import serve_process, stop

TARGET = 1.0
PRISM_DIR = Path(__file__).resolve().parent / ".prism"
PRISM_BIN = PRISM_DIR / "node_modules" / ".bin" / "prism"
PRISM_PACKAGE = "@stoplight/prism-cli"


def ensure_prism(timeout: float = 300.0) -> tuple[Path | None, str]:
    """The prism executable (installing it with npm if needed), or None and why not."""
    if PRISM_BIN.exists():
        return PRISM_BIN, "already installed"
    npm = shutil.which("npm")
    if npm is None:
        return None, "npm is not installed"
    PRISM_DIR.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run(
            [npm, "install", "--prefix", str(PRISM_DIR), "--no-audit", "--no-fund", PRISM_PACKAGE],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None, f"npm install {PRISM_PACKAGE} took longer than {timeout:.0f} s"
    if proc.returncode != 0 or not PRISM_BIN.exists():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return None, f"npm install {PRISM_PACKAGE} failed: {tail[0][:200]}"
    return PRISM_BIN, "installed now"


def _load(
    port: int, path: str, token: str, *, connections: int, seconds: float, max_requests: int
) -> dict[str, Any]:
    wrk = shutil.which("wrk")
    if wrk:
        proc = subprocess.run(
            [
                wrk,
                "-t1",
                f"-c{connections}",
                f"-d{seconds:.0f}s",
                "-H",
                f"Authorization: Bearer {token}",
                f"http://127.0.0.1:{port}{path}",
            ],
            capture_output=True,
            text=True,
            timeout=seconds + 30,
        )
        out = proc.stdout
        total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
        dur = re.search(r"requests in ([\d.]+)(m?s)", out)
        assert dur is not None
        elapsed = float(dur.group(1)) / (1000 if dur.group(2) == "ms" else 1)
        bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        errors = int(bad.group(1)) if bad else 0
        return {
            "rps": (total - errors) / elapsed,
            "requests": total,
            "non_2xx": errors,
            "seconds": round(elapsed, 2),
            "generator": "wrk -t1",
        }
    loop = new_loop()
    try:
        request = raw_request(
            "GET", "127.0.0.1", port, path, {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        )
        result = loop.run_until_complete(
            hammer(
                "127.0.0.1",
                port,
                request,
                connections=connections,
                seconds=seconds,
                max_requests=max_requests,
            )
        )
    finally:
        loop.close()
    result["generator"] = "asyncio keep-alive client (bench_support.hammer)"
    return result


def _card(base_url: str) -> str:
    import kit

    with kit.connect("sim", base_url=base_url) as api:
        api.sessions.create("anonymous")
        account = api.accounts.create()
        api.sessions.promote("account", account_id=account.account_id)
        return api.cards.create(account.account_id, type="virtual").card_id


def measure(
    *, rounds: int = 3, seconds: float = 5.0, connections: int = 32, max_requests: int = 200_000
) -> dict[str, Any]:
    base = {"name": "GET /cards/{card_id}: simulator ÷ Stoplight Prism", "target": f">= {TARGET}"}
    prism, why = ensure_prism()
    if prism is None:
        return {**base, "skipped": f"Prism could not be installed: {why}", "met": None}
    version = subprocess.run(
        [str(prism), "--version"], capture_output=True, text=True, timeout=60
    ).stdout.strip()
    sim_rounds: list[dict[str, Any]] = []
    prism_rounds: list[dict[str, Any]] = []
    with serve_process() as served, tempfile.TemporaryDirectory() as tmp:
        import httpx

        token = partner_token(served.base_url)
        card_id = _card(served.base_url)
        path = f"/cards/{card_id}"
        spec = Path(tmp) / "openapi.json"
        spec.write_text(httpx.get(served.base_url + "/openapi.json").text, encoding="utf-8")
        import socket

        with socket.socket() as s:  # a free port for Prism (it binds it itself)
            s.bind(("127.0.0.1", 0))
            prism_port = s.getsockname()[1]
        proc = subprocess.Popen(
            [str(prism), "mock", "-h", "127.0.0.1", "-p", str(prism_port), "-v", "silent", str(spec)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=tmp,
        )
        try:
            wait_http(f"http://127.0.0.1:{prism_port}{path}", timeout=90, ok=lambda s: s in (200, 401))
            check = httpx.get(
                f"http://127.0.0.1:{prism_port}{path}", headers={"Authorization": f"Bearer {token}"}
            )
            if check.status_code != 200:
                return {**base, "skipped": f"Prism answered {check.status_code} to the route", "met": None}
            for port in (served.port, prism_port):  # warm-up
                _load(port, path, token, connections=connections, seconds=1, max_requests=5000)
            for r in range(rounds):
                order = (("sim", served.port), ("prism", prism_port))
                for side, port in order if r % 2 == 0 else order[::-1]:
                    one = _load(
                        port, path, token, connections=connections, seconds=seconds, max_requests=max_requests
                    )
                    (sim_rounds if side == "sim" else prism_rounds).append(one)
        finally:
            stop(proc)
    sim_rps = median([x["rps"] for x in sim_rounds])
    prism_rps = median([x["rps"] for x in prism_rounds])
    return {
        **base,
        "kit": round(sim_rps, 1),
        "kit_unit": "req/s, simulator (kit serve)",
        "reference": round(prism_rps, 1),
        "reference_unit": f"req/s, Prism {version} mock of the simulator's /openapi.json",
        "ratio": round(sim_rps / prism_rps, 3),
        "met": sim_rps / prism_rps >= TARGET,
        "rounds": rounds,
        "details": {
            "connections": connections,
            "seconds_per_round": seconds,
            "generator": sim_rounds[0]["generator"],
            "sim_rounds": sim_rounds,
            "prism_rounds": prism_rounds,
        },
    }


if __name__ == "__main__":
    t0 = time.perf_counter()
    print(json.dumps(measure(rounds=2, seconds=3), indent=2))
    print(f"{time.perf_counter() - t0:.1f} s")
