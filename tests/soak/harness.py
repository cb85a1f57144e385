"""The soak run: mixed traffic of many devices through ``kit serve`` for a week of simulator time,
with the server's resident memory (its crypto workers included) sampled as it goes.

What a week of team use looks like here: a shared server whose clock moves only when someone
moves it. People and CI jobs advance it in small steps (a notebook moves it half an hour or
a day), so the run spreads one week of simulator time over ``clock_steps`` even steps; between
two steps the clock stands still while traffic piles up, which is when only the bounds on
counts hold memory down. The loopback webhook receiver is down a quarter of the time, two
stretches in eight, so some deliveries are retried on the next step and some fail for good.

The run fails when any answer is a 5xx or not what it must be (a replay not replayed, a kept
session refused…), or when memory keeps growing after the warm-up: more than ``max_growth``
over the samples after the first ``warmup`` of the requests (:func:`tests.soak.memory.growth`).
It is bounded in requests and in time, and talks to loopback only.

    >>> result = run_soak(SoakConfig(requests=15_000))  # doctest: +SKIP
    >>> result.ok, result.figures()["growth_pct"]  # doctest: +SKIP
    (True, 0.4)
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tests.soak.memory import Growth, Sample, children, cpu_seconds, growth, sample
from tests.soak.receiver import Receiver
from tests.soak.traffic import OPERATIONS, PARTNERS, Device, Traffic
from tests.soak.wire import Pool
from tests.support.launcher import serve_process

WEEK_SECONDS = 7 * 86400
TOKEN_REFRESH_SECONDS = 12 * 3600  # tokens live a day (A01): devices take a new one at half-life
NEW_CLIENT_STEPS = 8  # every eighth step a new client of the team subscribes to card.closed


@dataclass(frozen=True)
class SoakConfig:
    """How big the run is. ``crypto_workers`` None: ``kit serve``'s default (one per spare core)."""

    requests: int = 200_000
    devices: int = 48
    concurrency: int = 16
    sim_seconds: int = WEEK_SECONDS
    clock_steps: int = 168
    warmup: float = 0.2
    samples: int = 120
    max_growth: float = 0.05
    time_limit_s: float = 1800.0
    seed: int = 7
    crypto_workers: int | None = None
    state: bool = False  # kit serve --state FILE (a temporary file): the bounds must hold in it


@dataclass
class SoakResult:
    config: SoakConfig
    seconds: float = 0.0
    requests: int = 0
    samples: list[Sample] = field(default_factory=list)
    stores: dict[str, Any] = field(default_factory=dict)
    clock: dict[str, str] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)
    operations: dict[str, int] = field(default_factory=dict)
    server_errors: int = 0
    unexpected: int = 0
    examples: list[str] = field(default_factory=list)
    deliveries_received: int = 0
    timed_out: bool = False
    growth: Growth | None = None
    clock_step_seconds: float = 0.0
    setup_seconds: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)
    file_rows: dict[str, int] = field(default_factory=dict)  # --state: records per home, at the end
    file_bytes: int = 0

    @property
    def ok(self) -> bool:
        return (
            not self.timed_out
            and self.requests >= self.config.requests
            and self.server_errors == 0
            and self.unexpected == 0
            and self.growth is not None
            and self.growth.theil_sen < self.config.max_growth
        )

    def failures(self) -> list[str]:
        """Why the run failed (empty when it passed)."""
        out = [f"{self.server_errors} answers were 5xx or dropped"] if self.server_errors else []
        if self.unexpected:
            out.append(f"{self.unexpected} answers were not what they must be: {self.examples[:5]}")
        if self.timed_out or self.requests < self.config.requests:
            out.append(f"only {self.requests} of {self.config.requests} requests within the time limit")
        if self.growth is None or self.growth.theil_sen >= self.config.max_growth:
            out.append(f"memory kept growing after the warm-up: {self.growth}")
        return out

    def figures(self) -> dict[str, Any]:
        """The run's figures, for a table and for ``benchmarks/results/soak.json``."""
        warm = [s for s in self.samples if s.requests >= self.config.warmup * self.config.requests]
        return {
            "requests": self.requests,
            "seconds": round(self.seconds, 1),
            "requests_per_second": round(self.requests / self.seconds) if self.seconds else 0,
            "setup_seconds": round(self.setup_seconds, 1),
            "clock_step_seconds": round(self.clock_step_seconds, 1),
            "cpu_seconds": self.cpu,
            "processes_measured": max((s.processes for s in self.samples), default=0),
            "rss_mib_start": self.samples[0].total_mib if self.samples else None,
            "rss_mib_after_warmup": warm[0].total_mib if warm else None,
            "rss_mib_end": self.samples[-1].total_mib if self.samples else None,
            "growth_pct": round(100 * self.growth.theil_sen, 2) if self.growth else None,
            "window_growth_pct": round(100 * self.growth.windows, 2) if self.growth else None,
            "server_errors_5xx": self.server_errors,
            "unexpected_answers": self.unexpected,
            "webhooks_received": self.deliveries_received,
            "simulator_time": self.clock,
            **({"state_file_mib": round(self.file_bytes / 2**20, 1)} if self.config.state else {}),
        }

    def record(self) -> dict[str, Any]:
        return {
            "config": asdict(self.config),
            "figures": self.figures(),
            "stores_at_end": self.stores,
            **({"state_file_rows": self.file_rows} if self.config.state else {}),
            "statuses": self.statuses,
            "operations": self.operations,
            "samples": [asdict(s) for s in self.samples],
            "ok": self.ok,
        }


def run_soak(config: SoakConfig) -> SoakResult:
    """Start ``kit serve`` (loopback), run the soak against it, stop it; the result."""
    args = [] if config.crypto_workers is None else ["--crypto-workers", str(config.crypto_workers)]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "soak.kitstate"
        if config.state:
            args += ["--state", str(path)]
        with serve_process(*args, seed=config.seed) as served:
            result = asyncio.run(_Run(config, served.base_url, served.process.pid).main())
        if config.state:  # the server has stopped: its file holds what it kept
            result.file_bytes = sum(p.stat().st_size for p in Path(folder).iterdir())
            with contextlib.closing(sqlite3.connect(path)) as conn:
                result.file_rows = dict(conn.execute("SELECT home, count(*) FROM records GROUP BY home"))
        return result


class _Run:
    def __init__(self, config: SoakConfig, base_url: str, pid: int) -> None:
        self.config = config
        self.base_url = base_url
        self.pid = pid
        self.result = SoakResult(config)
        self.step = 0
        self.next_sample = 0
        self.started = time.monotonic()
        self.cpu_started = time.process_time()
        self.step_due = asyncio.Event()
        self.open = asyncio.Event()  # traffic flows while set; a clock step clears it
        self.idle = asyncio.Event()
        self.in_flight = 0
        self.token_age = [0, 0]

    def _per_step(self) -> float:
        """Requests between two clock steps (``clock_steps=0``: the clock never moves)."""
        return self.config.requests / self.config.clock_steps if self.config.clock_steps else float("inf")

    def _on_request(self, count: int) -> None:
        if count >= self.next_sample:
            self.result.samples.append(sample(self.pid, count, time.monotonic() - self.started))
            self.next_sample = count + max(1, self.config.requests // self.config.samples)
        if self.step < self.config.clock_steps and count >= (self.step + 1) * self._per_step():
            self.step_due.set()

    async def main(self) -> SoakResult:
        cfg = self.config
        receiver = Receiver()
        await receiver.up()
        client = Pool(self.base_url, size=cfg.concurrency + 1)  # one more for the clock
        try:
            operations = dict(OPERATIONS)
            if not cfg.clock_steps:  # a bound device opens 30 sessions a minute (A32): with the
                del operations["session_opened"]  # clock frozen, that minute never ends
            traffic = Traffic(client, random.Random(cfg.seed), receiver.url, operations)
            for partner in range(len(PARTNERS)):
                await traffic.new_token(partner, "setup")
                await traffic.subscribe(partner, ["card.closed"], "setup")
            devices = [Device(n % len(PARTNERS)) for n in range(cfg.devices)]
            await asyncio.gather(*(traffic.enroll(d) for d in devices))
            self.result.setup_seconds = time.monotonic() - self.started
            traffic.on_request = self._on_request
            self.open.set()
            self.idle.set()
            workers = [asyncio.create_task(self._worker(traffic, devices)) for _ in range(cfg.concurrency)]
            controller = asyncio.create_task(self._controller(traffic, client, receiver))
            await asyncio.gather(*workers)
            controller.cancel()
            self.result.samples.append(
                sample(self.pid, traffic.tally.requests, time.monotonic() - self.started)
            )
            health = (await client.request("GET", "/_sim/health")).json()
            self.result.stores = health.get("stores", {})
            self.result.clock["end"] = (await client.request("GET", "/_sim/clock")).json()["now"]
            self.result.cpu = {
                "server": round(cpu_seconds(self.pid), 1),
                "workers": round(sum(cpu_seconds(k) for k in children(self.pid)), 1),
                "load_generator": round(time.process_time() - self.cpu_started, 1),
            }
        finally:
            await client.aclose()
        await receiver.down()
        self._finish(traffic, receiver)
        return self.result

    def _finish(self, traffic: Traffic, receiver: Receiver) -> None:
        r, tally = self.result, traffic.tally
        r.seconds = time.monotonic() - self.started
        r.requests = tally.requests
        r.statuses = {str(k): v for k, v in sorted(tally.statuses.items())}
        r.operations = dict(sorted(tally.operations.items()))
        r.server_errors, r.unexpected, r.examples = tally.server_errors, tally.unexpected, tally.examples
        r.deliveries_received = receiver.received
        after = [
            (s.requests, s.total_mib) for s in r.samples if s.requests >= self.config.warmup * r.requests
        ]
        r.growth = growth(after) if len(after) >= 5 else None

    async def _worker(self, traffic: Traffic, devices: list[Device]) -> None:
        cfg = self.config
        while traffic.tally.requests < cfg.requests:
            if time.monotonic() - self.started > cfg.time_limit_s:
                self.result.timed_out = True
                return
            while not self.open.is_set():  # woken as a clock step began: wait for its end
                await self.open.wait()
            self.in_flight += 1
            self.idle.clear()
            try:
                await traffic.run_one(traffic.rng.choice(devices))
            finally:
                self.in_flight -= 1
                if self.in_flight == 0:
                    self.idle.set()

    async def _controller(self, traffic: Traffic, client: Pool, receiver: Receiver) -> None:
        """Every step: hold traffic, set the receiver, move the clock, new tokens and a subscription."""
        cfg = self.config
        seconds = cfg.sim_seconds // max(1, cfg.clock_steps)
        self.result.clock["start"] = (await client.request("GET", "/_sim/clock")).json()["now"]
        while True:
            await self.step_due.wait()
            self.step_due.clear()
            self.open.clear()
            await self.idle.wait()
            self.step += 1
            if self.step % 8 in (5, 6):  # down two stretches in eight: across one clock move
                await receiver.down()
            else:
                await receiver.up()
            began = time.monotonic()
            resp = await client.request("POST", "/_sim/clock/advance", body={"seconds": seconds})
            if resp.status != 200:
                traffic.tally.wrong(f"clock: {resp.status}")
            traffic.sim_seconds += seconds
            for partner in range(len(PARTNERS)):
                self.token_age[partner] += seconds
                if self.token_age[partner] >= TOKEN_REFRESH_SECONDS:
                    self.token_age[partner] = 0
                    await traffic.new_token(partner, "clock")
                if self.step % NEW_CLIENT_STEPS == 0:  # a new client of the team subscribes
                    await traffic.subscribe(partner, ["card.closed"], "clock")
            self.result.clock_step_seconds += time.monotonic() - began
            self.open.set()
