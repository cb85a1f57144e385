"""One shard of a population, run where it is sent: a worker process of this machine or a Dask
worker. :func:`run_shard` is the whole job.

A shard is a contiguous slice of the customers (:func:`kit.lab.populations.planning.shard_bounds`) with its
own simulator — embedded in the worker process, seeded with
:func:`kit.lab.populations.planning.shard_seed` — its own clients, and P2P only between its own customers.
It plans its own customers (:func:`kit.lab.populations.planning.plan_shard`), plays them in customer order
(``concurrency`` threads; 1 by default, which makes even injected faults repeatable), and
reduces each batch of rows to a :class:`~kit.lab.populations.aggregate.Partial`. With ``out`` the rows go to
``out/steps/shard-NNNN.parquet`` batch by batch and the ledger to ``out/ledger/``; without it
they come back in the :class:`ShardResult`. The caller's own simulator is never touched: the
shard's lives in another process.

A worker keeps its simulator between shards (reset to each shard's seed), so a process pool
pays the start-up once.

Under a dialect (``client_options["choices"]``, else ``PARTNER_API_CHOICES``, else
``KIT_SIM_CHOICES``, read where the shard runs) the shard's simulator serves it and its clients
speak it, as ``kit.connect("sim")``'s embedded simulator would (:func:`served_dialect`).

On another profile than ``sim`` (``spec.profile``, whose ``own_servers`` is false) the shard
has no simulator: its customers are clients of that profile's server, settings from this
process's environment (:mod:`kit.lab.populations.target`); no reset, no faults, and no ledger
check (it needs the control plane): the partial figures say the ledger was not checked.

Example::

    >>> spec = ShardSpec(index=0, first=0, end=20, draws=Draws(seed=7))
    >>> result = run_shard(spec)                      # doctest: +SKIP
    >>> result.partial.customers, len(result.steps)   # doctest: +SKIP
    (20, 301)
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

import kit
from kit._choices import Overlay
from kit._profiles import Profile, SimProfile
from kit.lab.populations.aggregate import JOURNEYS, STEP_COLUMNS, Partial, steps_frame
from kit.lab.populations.customer import CallKey, Crowd, Outcome
from kit.lab.populations.planning import CustomerPlan, Draws, plan_shard, shard_seed

if TYPE_CHECKING:
    from kit.sim.server import EmbeddedServer

__all__ = [
    "BATCH",
    "LEDGER_COLUMNS",
    "ShardResult",
    "ShardSpec",
    "init_worker",
    "peak_rss_mb",
    "run_shard",
    "shard_file",
    "warm_simulator",
]

#: Customers per batch: one Parquet row group and one partial each (bounds a shard's memory).
BATCH = 2_000
#: The columns of a shard's ledger.
LEDGER_COLUMNS = ["customer", "account_id", "opening", "sent", "received", "expected", "balance"]

_IDLE: list[EmbeddedServer] = []
_IDLE_LOCK = threading.Lock()
_PROGRESS: list[Callable[[int], None]] = []


@dataclasses.dataclass(frozen=True)
class ShardSpec:
    """What one shard runs: customers ``first`` to ``end - 1`` of a run (plain data, picklable;
    ``profile`` a class the worker can import: the simulator's, or a server's whose settings
    are in the worker's environment)."""

    index: int
    first: int
    end: int
    draws: Draws = dataclasses.field(default_factory=Draws)
    journeys: tuple[str, ...] = JOURNEYS
    faults: tuple[Mapping[str, Any], ...] = ()
    client_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    concurrency: int = 1
    out: str | None = None
    batch: int = BATCH
    profile: type[Profile] = SimProfile


@dataclasses.dataclass
class ShardResult:
    """What a shard sends back: its figures, and its rows and ledger unless they went to Parquet
    (or the ledger was not checked); its customers' calls by server, method, operation, status."""

    index: int
    partial: Partial
    steps: pd.DataFrame | None
    ledger: pd.DataFrame | None
    elapsed_s: float
    #: The worker's peak resident memory; NaN where the platform does not report it (Windows).
    peak_rss_mb: float
    calls: Counter[CallKey] = dataclasses.field(default_factory=Counter)


def shard_file(out: str | Path, table: str, index: int) -> Path:
    """Where shard ``index`` writes ``table`` (``steps`` or ``ledger``) under ``out``."""
    return Path(out) / table / f"shard-{index:04d}.parquet"


def init_worker(progress: Callable[[int], None] | None) -> None:
    """A local worker process's start (:mod:`kit.lab.populations._worker`): how to report customers done;
    Ctrl-C left to the caller (a kernel's shutdown interrupts its whole process group: no
    traceback from here)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _PROGRESS[:] = [progress] if progress is not None else []


def _tick(customers: int) -> None:
    for report in _PROGRESS:
        report(customers)


#: uvicorn's loop choice for a shard's simulator, which serves many clients at once: uvloop when
#: installed (a notebook's embedded simulator, serving one, keeps the standard library's loop).
SHARD_LOOP = "auto"


def warm_simulator() -> None:
    """Start this process's simulator before its first shard, kept for it (and the next ones):
    its control plane built (its first ``/_sim`` request builds the FastAPI app, see
    :mod:`kit.sim.app`) and a client's first calls made once. A worker process does this
    as it starts (:mod:`kit.lab.populations._warm`), while its caller is still planning; the
    shard then finds it idle. Nothing else changes: the shard resets it to its own seed."""
    overlay = served_dialect(None)
    server = _start(overlay)
    with kit.connect(SimProfile, base_url=server.base_url, drift="off", **_speaking(overlay)) as control:
        control.sim.health()
    with _IDLE_LOCK:
        _IDLE.append(server)


def served_dialect(path: str | None) -> Overlay | None:
    """The dialect a shard's simulator serves and its clients speak: the one the ``sim``
    profile's embedded simulator would (``choices=`` ``path``, else ``PARTNER_API_CHOICES``,
    else ``KIT_SIM_CHOICES``; ``None``: the register's spelling), read in this process."""
    return SimProfile().with_choices(path, os.environ)[1]


def _speaking(overlay: Overlay | None) -> dict[str, Any]:
    """The ``kit.connect`` option that makes a client speak ``overlay`` at a given base URL."""
    return {"choices": overlay.source} if overlay is not None and overlay.source else {}


def _start(overlay: Overlay | None) -> EmbeddedServer:
    from kit.sim.server import start_embedded
    from kit.sim.settings import Settings

    return start_embedded(Settings(choices=overlay), loop=SHARD_LOOP)


@contextlib.contextmanager
def _simulator(overlay: Overlay | None) -> Iterator[str]:
    """A simulator of this process serving ``overlay``, for one shard at a time: an idle one
    serving the same values reused, else a new one."""
    with _IDLE_LOCK:
        _IDLE[:] = [s for s in _IDLE if s.running]
        same = [s for s in _IDLE if _key(s.settings.choices) == _key(overlay)]
        server = same[-1] if same else None
        if server is not None:
            _IDLE.remove(server)
    if server is None:
        server = _start(overlay)
    try:
        yield server.base_url
    finally:
        with _IDLE_LOCK:
            _IDLE.append(server)


def _key(overlay: Overlay | None) -> str:
    from kit.sim.server import overlay_key

    return overlay_key(overlay)


def _ledger(control: kit.Client, outcomes: Mapping[int, Outcome]) -> tuple[pd.DataFrame, int]:
    """The shard's accounts: opening, sent, received, expected and actual balance; its transfers."""
    ours = {o.account_id: c for c, o in outcomes.items() if o.account_id is not None}
    account_of = {o.person_id: o.account_id for o in outcomes.values() if o.person_id is not None}
    balances = control.sim.ledger("accounts").set_index("account_id")["balance"]
    transfers = control.sim.ledger("transfers")
    transfers = transfers[transfers["from_account_id"].isin(ours)]
    sent = transfers.groupby("from_account_id")["amount"].sum()
    received = transfers.assign(to=transfers["to_person_id"].map(account_of)).groupby("to")["amount"].sum()
    rows = []
    for account_id, customer in sorted(ours.items(), key=lambda kv: kv[1]):
        opening = outcomes[customer].opening or Decimal("0")
        out = sent.get(account_id, Decimal("0"))
        into = received.get(account_id, Decimal("0"))
        rows.append(
            (customer, account_id, opening, out, into, opening - out + into, balances.get(account_id))
        )
    return pd.DataFrame(rows, columns=LEDGER_COLUMNS), len(transfers)


def _play(crowd: Crowd, plans: Sequence[CustomerPlan], concurrency: int) -> None:
    """The customers in order (one thread), or on a FIFO pool of ``concurrency`` threads."""
    if concurrency == 1:
        for p in plans:
            crowd.run_one(p)
        return
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="kit-shard") as pool:
        for future in [pool.submit(crowd.run_one, p) for p in plans]:
            future.result()


class _Sink:
    """Where a shard's rows go: kept in memory, or appended to its Parquet file batch by batch."""

    def __init__(self, out: str | None, index: int) -> None:
        self.frames: list[pd.DataFrame] = []
        self.path = shard_file(out, "steps", index) if out is not None else None
        self.writer: Any = None

    def add(self, frame: pd.DataFrame) -> None:
        if self.path is None:
            self.frames.append(frame)
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(
            frame.astype({"step": "string", "outcome": "string"}), schema=_schema(), preserve_index=False
        )
        if self.writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.writer = pq.ParquetWriter(self.path, table.schema)
        self.writer.write_table(table)

    def close(self) -> pd.DataFrame | None:
        if self.writer is not None:
            self.writer.close()
        if self.path is not None:
            return None
        return steps_frame(pd.concat(self.frames, ignore_index=True)) if self.frames else steps_frame([])


def _schema() -> Any:
    import pyarrow as pa

    types = [
        pa.int64(),
        pa.int64(),
        pa.string(),
        pa.string(),
        pa.int64(),
        pa.string(),
        pa.float64(),
        pa.int64(),
    ]
    return pa.schema(list(zip(STEP_COLUMNS, types, strict=True)))


def _play_all(spec: ShardSpec, options: Mapping[str, Any]) -> tuple[Partial, Crowd, pd.DataFrame | None]:
    plans = plan_shard(spec.index, spec.first, spec.end, spec.draws)
    seed = spec.draws.seed
    crowd = Crowd(plans, spec.journeys, seed, {**spec.client_options, **options}, spec.profile)
    sink, partial = _Sink(spec.out, spec.index), Partial()
    try:
        for start in range(0, len(plans), spec.batch):
            chunk = plans[start : start + spec.batch]
            _play(crowd, chunk, spec.concurrency)
            frame = steps_frame(crowd.take_rows(p.customer for p in chunk))
            planned = sum(p.p2p_amount is not None for p in chunk)
            partial = partial.merge(Partial.of(frame, customers=len(chunk), p2p_planned=planned))
            sink.add(frame)
            _tick(len(chunk))
    finally:
        steps = sink.close()
    return partial, crowd, steps


def _on_own_simulator(spec: ShardSpec) -> tuple[Partial, Crowd, pd.DataFrame | None, pd.DataFrame]:
    drift = spec.client_options.get("drift", "off")
    overlay = served_dialect(spec.client_options.get("choices"))
    speaking = _speaking(overlay)
    with (
        _simulator(overlay) as base_url,
        kit.connect(spec.profile, base_url=base_url, drift=drift, **speaking) as control,
    ):
        control.sim.reset(shard_seed(spec.draws.seed, spec.index))
        control.sim.clear_faults()
        try:
            for fault in spec.faults:
                control.sim.add_fault(**fault)
            partial, crowd, steps = _play_all(spec, {"base_url": base_url, **speaking})
        finally:
            control.sim.clear_faults()
        ledger, transfers = _ledger(control, crowd.outcomes)
    return partial.with_ledger(ledger, transfers), crowd, steps, ledger


def peak_rss_mb() -> float:
    """This process's peak resident memory in MB (one decimal), NaN where the platform has no
    ``resource`` module to report it (Windows)."""
    try:
        import resource  # POSIX only
    except ImportError:
        return math.nan
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return round(peak / (1024 if sys.platform != "darwin" else 1024**2), 1)


def run_shard(spec: ShardSpec) -> ShardResult:
    """Run one shard on a simulator of this process, or as clients of the profile's server
    (see the module docstring).

    Raises:
        KitError: the shard's simulator could not be reached or reset, or the server's settings
            are missing (the customers' own errors are rows, not exceptions).
    """
    started = time.perf_counter()
    ledger: pd.DataFrame | None = None
    if spec.profile.own_servers:
        partial, crowd, steps, ledger = _on_own_simulator(spec)
    else:
        partial, crowd, steps = _play_all(spec, {})
        partial = partial.without_ledger()
    if spec.out is not None and ledger is not None:
        path = shard_file(spec.out, "ledger", spec.index)
        path.parent.mkdir(parents=True, exist_ok=True)
        ledger.astype(
            {c: "string" for c in ("opening", "sent", "received", "expected", "balance")}
        ).to_parquet(path, index=False)
    return ShardResult(
        index=spec.index,
        partial=partial,
        steps=steps,
        ledger=None if spec.out is not None else ledger,
        elapsed_s=time.perf_counter() - started,
        peak_rss_mb=peak_rss_mb(),
        calls=crowd.calls,
    )
