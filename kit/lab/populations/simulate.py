"""Population simulation (public name ``kit.simulate``): N synthetic customers through the
API's journeys, in shards, on worker processes or a Dask cluster — on the simulator, or a
handful of them against another profile's server.

:func:`run` splits the customers into ``shards`` (contiguous slices). Each shard runs in a worker
process with its own simulator (seeded from the run's seed and the shard number), plans its own
customers from seeded ``random.Random`` streams — who answers the KYC questions wrong on
purpose, which card type and close reason, which inbound events, whether and how much they send
by P2P and to whom (an earlier customer of the same shard) — and plays them in order, each as
its own device (one :func:`kit.connect` per customer). Fault profiles are injected through each
shard's control plane. The caller's own simulator (``kit.connect("sim")``) is never touched.

On another profile (``profile="sandbox"``: one whose server this machine cannot start at will,
:attr:`kit._profiles.Profile.own_servers`) the shards are clients of that profile's server
instead, capped at ``server_cap`` customers (5 by default), playing its published test personas;
no faults, and no ledger check — both need the simulator's control plane, and the result says
what was skipped and why. :attr:`SimulationResult.calls` counts the customers' calls by server
and status: where the work was done (:mod:`kit.lab.populations.target`).

Where the shards run: local worker processes by default (no Dask, nothing to start; the pool is
kept for the next run, :func:`shutdown` ends it), or a Dask cluster (``cluster=`` a
``distributed.Client`` or a scheduler address). With ``out=`` each shard streams its steps to
``out/steps/shard-NNNN.parquet`` (and its ledger to ``out/ledger/``), readable with
``pandas.read_parquet(out / "steps")`` or ``dask.dataframe.read_parquet``; the summary is
computed from the shards' partial figures without loading the rows.

The result holds one row per step (:attr:`SimulationResult.steps`), the funnel, the error mix,
latency percentiles, and a ledger check that money was conserved across all P2P transfers.

Determinism: for a seed and a shard count, ``steps`` is the same from run to run apart from
``latency_ms`` — whatever runs the shards, local processes or Dask, and with faults too: a
shard plays its customers one after another (``concurrency=1``), so its simulator draws faults
in the same order every time. Resource ids are kept out of ``steps``.

The plans come from :mod:`kit.lab.populations.planning`, each shard runs in
:mod:`kit.lab.populations.shard`, the engine is :mod:`kit.lab.populations.engine`, the tables and
figures are :mod:`kit.lab.populations.results`' — all re-exported here.

No PII is printed or stored: customers are the simulator's personas, cycled with distinct
device ids (the simulator does not mind repeated PII); only persona ids appear.

Example::

    >>> import kit.simulate
    >>> result = kit.simulate.run(customers=200, seed=7, progress=False)   # doctest: +SKIP
    >>> result.funnel[["stage", "customers"]].head(2)                      # doctest: +SKIP
                stage  customers
    0         started        200
    1  anonymous_session     200
    >>> result.money_conserved                                             # doctest: +SKIP
    True
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from kit._operations import BY_KEY as OPERATION_TABLE
from kit._profiles import Profile
from kit.lab.display import person_watching
from kit.lab.populations import planning
from kit.lab.populations.aggregate import Partial
from kit.lab.populations.engine import default_workers, run_shards, shutdown
from kit.lab.populations.keep import SavedResultError
from kit.lab.populations.planning import (
    CLOSE_REASONS,
    CustomerPlan,
    Draws,
    plan_shard,
    plans_table,
    shard_bounds,
)
from kit.lab.populations.results import (
    FUNNEL_STAGES,
    JOURNEYS,
    OUTCOMES,
    STEP_COLUMNS,
    STEPS,
    SimulationResult,
    Summary,
    calls_frame,
    compare,
    load,
    plot_compare,
    steps_frame,
)
from kit.lab.populations.shard import LEDGER_COLUMNS, ShardResult, ShardSpec
from kit.lab.populations.target import DEFAULT_SERVER_CAP, Target

__all__ = [
    "CLOSE_REASONS",
    "DEFAULT_CLIENT_OPTIONS",
    "DEFAULT_SERVER_CAP",
    "DEFAULT_SHARDS",
    "FAULT_PROFILES",
    "FUNNEL_STAGES",
    "JOURNEYS",
    "OUTCOMES",
    "STEPS",
    "STEP_COLUMNS",
    "CustomerPlan",
    "Draws",
    "SavedResultError",
    "SimulationResult",
    "Summary",
    "compare",
    "load",
    "plan",
    "plan_shard",
    "plans_table",
    "plot_compare",
    "run",
    "shard_bounds",
    "shutdown",
]

#: Shards when ``run(shards=None)``: a constant, not the machine's cores — the shard count is
#: part of what a seed reproduces. More shards than cores keep every core busy to the end.
DEFAULT_SHARDS = 4

#: Named fault profiles for ``run(faults=…)``, each fault by its operation's key
#: (:mod:`kit._operations`) and ``api.sim.add_fault`` arguments: the shard's client adds it at
#: the path it speaks for that operation, so a fault follows a dialect's moved path.
#: ``flaky`` hurts but retries absorb most of it; ``degraded`` is bad enough to lose customers.
FAULT_OPERATIONS: dict[str, tuple[dict[str, Any], ...]] = {
    "none": (),
    "flaky": (
        {"operation": "create_session", "status": 503, "rate": 0.10},
        {"operation": "create_card", "status": 503, "rate": 0.10},
        {"operation": "create_transfer", "status": 503, "rate": 0.20, "when": "after_commit"},
    ),
    "degraded": (
        {"operation": "create_session", "status": 503, "rate": 0.45},
        {"operation": "kyc_answers", "status": 503, "rate": 0.30, "when": "after_commit"},
        {"operation": "send_event", "status": 429, "rate": 0.40},
        {"operation": "create_transfer", "status": 503, "rate": 0.40, "when": "after_commit"},
    ),
}


def _at_default_path(fault: Mapping[str, Any]) -> dict[str, Any]:
    """``fault`` as ``api.sim.add_fault`` arguments at its operation's default method and path."""
    rest = {name: value for name, value in fault.items() if name != "operation"}
    operation = OPERATION_TABLE[fault["operation"]]
    return {"method": operation.methods[0], "path": operation.path, **rest}


#: The fault profiles as the register's simulator serves them: each fault's method and default
#: path (what a person reads; ``run`` adds them by operation, at the client's paths).
FAULT_PROFILES: dict[str, tuple[dict[str, Any], ...]] = {
    name: tuple(_at_default_path(fault) for fault in faults) for name, faults in FAULT_OPERATIONS.items()
}

# Retries against the simulator need not wait: its faults do not depend on time. A backoff of a
# few milliseconds keeps a faulty run quick (a shard waits out each of its retries) while the
# retry logic (same Idempotency-Key, bounded attempts, jitter) runs exactly as in production.
# The contract check (drift) is off: the test suite holds the simulator to its contract, and the
# check's first use costs each worker process seconds of imports (openapi-core) that a short run
# would spend on nothing else. client_options={"drift": "report"} turns it back on.
DEFAULT_CLIENT_OPTIONS: dict[str, Any] = {
    "backoff_base": 0.001,
    "backoff_cap": 0.004,
    "max_retries": 4,
    "drift": "off",
}
#: Against another profile's server the client's own backoff stands (a real server is waited for).
SERVER_CLIENT_OPTIONS: dict[str, Any] = {"drift": "off"}


def _fault_specs(faults: str | Iterable[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    if faults is None:
        return []
    if isinstance(faults, str):
        if faults not in FAULT_OPERATIONS:
            raise ValueError(f"unknown fault profile {faults!r}; known: {', '.join(FAULT_OPERATIONS)}")
        return [dict(f) for f in FAULT_OPERATIONS[faults]]
    return [dict(f) for f in faults]


def _chosen(journeys: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(journeys)
    unknown = [j for j in chosen if j not in JOURNEYS]
    if unknown:
        raise ValueError(f"unknown journey(s) {unknown}; known: {', '.join(JOURNEYS)}")
    return chosen


def _out_folder(out: str | Path | None) -> Path | None:
    """The Parquet folder, emptied of an earlier run's shard files (nothing else is removed)."""
    if out is None:
        return None
    folder = Path(out).resolve()
    for table in ("steps", "ledger"):
        for stale in (folder / table).glob("shard-*.parquet"):
            stale.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def plan(
    customers: int,
    *,
    seed: int = 7,
    kyc_failure_rate: float = 0.05,
    reason_mix: Mapping[str | None, float] | None = None,
    event_rate: float = 1.0,
    p2p_rate: float = 0.5,
    shards: int = 1,
    profile: str | Profile | type[Profile] = "sim",
    server_cap: int = DEFAULT_SERVER_CAP,
) -> list[CustomerPlan]:
    """The plans :func:`run` plays with the same arguments (no network): on the simulator every
    customer's (:func:`kit.lab.populations.planning.plan`); on another profile at most
    ``server_cap`` customers, cycling that server's published personas (the fixtures file).

    Example::

        >>> [p.persona_id for p in plan(3, seed=7)]
        ['persona-01', 'persona-02', 'persona-03']

    Raises:
        ValueError: as :func:`kit.lab.populations.planning.plan`; ``server_cap`` < 1.
        ConfigError, FixturesError: another profile without its settings or fixtures file.
    """
    target = Target.of(profile, server_cap)
    return planning.plan(
        target.customers(customers),
        seed=seed,
        kyc_failure_rate=kyc_failure_rate,
        reason_mix=reason_mix,
        event_rate=event_rate,
        p2p_rate=p2p_rate,
        personas=target.personas,
        shards=shards,
    )


def _progress(total: int, show: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, disable=not show, desc="customers", unit="customer")


def _shards_table(specs: list[ShardSpec], results: list[ShardResult]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "shard": [s.index for s in specs],
            "first": [s.first for s in specs],
            "customers": [s.end - s.first for s in specs],
            "seconds": [round(r.elapsed_s, 3) for r in results],
            "peak_rss_mb": [r.peak_rss_mb for r in results],
        }
    )


def run(
    customers: int = 1000,
    seed: int = 7,
    *,
    journeys: Iterable[str] = JOURNEYS,
    kyc_failure_rate: float = 0.05,
    reason_mix: Mapping[str | None, float] | None = None,
    event_rate: float = 1.0,
    p2p_rate: float = 0.5,
    faults: str | Iterable[Mapping[str, Any]] | None = None,
    shards: int | None = None,
    workers: int | None = None,
    cluster: Any = None,
    out: str | Path | None = None,
    concurrency: int = 1,
    progress: bool | None = None,
    client_options: Mapping[str, Any] | None = None,
    profile: str | Profile | type[Profile] = "sim",
    server_cap: int = DEFAULT_SERVER_CAP,
) -> SimulationResult:
    """Run ``customers`` synthetic customers through ``journeys``, in shards (see the module).

    - ``kyc_failure_rate``: share of customers who answer the KYC questions wrong on purpose
      (one attempt; they stop there).
    - ``reason_mix``: close reason → weight (``None`` closes without a reason); uniform over
      the register's reasons (A15) by default.
    - ``event_rate``: mean number of inbound events per customer (Poisson), types uniform over
      the spec's eight.
    - ``p2p_rate``: share of customers who send one P2P transfer (1.00–50.00 USD) to an
      earlier customer of their shard planned to pass KYC (money only moves between customers).
    - ``faults``: a :data:`FAULT_PROFILES` name or a list of ``api.sim.add_fault`` keyword
      dicts (an ``operation`` key, or a ``method`` and ``path``), injected into every shard's
      simulator and cleared at the end.
    - ``shards``: slices of customers, each with its own simulator (default
      :data:`DEFAULT_SHARDS`, at most one per customer). Part of what a seed reproduces.
    - ``workers``: local worker processes (default one per core); ignored with ``cluster``.
    - ``cluster``: a ``dask.distributed.Client`` or a scheduler address (``"tcp://host:8786"``):
      the shards run as Dask tasks on its workers.
    - ``out``: a folder to stream the steps (and ledgers) to as Parquet, one file per shard;
      with a cluster, a folder every worker can write.
    - ``concurrency``: threads per shard (1: in order, repeatable even with faults).
    - ``progress``: a progress bar; default on when a person watches (a terminal, JupyterLab)
      and off in a regression run (``KIT_REGRESS=1``).
    - ``client_options``: extra ``kit.connect`` options for the customers' clients (the
      default shortens retry backoff: the simulator needs no long waits; against another
      profile's server the client's own backoff stands).
    - ``profile``: ``"sim"`` (each shard its own simulator), or another profile (a name, class
      or object): the shards are clients of its server (settings from the environment),
      ``customers`` capped at ``server_cap``, the server's published personas, no faults, the
      ledger check skipped (:attr:`SimulationResult.skipped`). Its secrets stay on this
      machine: no ``cluster``.

    Example::

        >>> r = run(customers=50, seed=7, faults="flaky", progress=False)   # doctest: +SKIP
        >>> r.money_conserved                                               # doctest: +SKIP
        True
        >>> big = run(customers=100_000, shards=32, out="out/population")   # doctest: +SKIP

    Raises:
        ValueError: an unknown journey, fault profile or close reason; a rate, shard count,
            concurrency or ``server_cap`` out of range; faults on another profile.
        ConfigError: another profile's settings or fixtures missing, or a ``cluster`` for a
            profile whose secrets may not leave this machine.
        KitError: a worker process died, Dask is missing or its scheduler unreachable, a
            shard's simulator failed, or the partner token was refused (the customers' own
            errors are recorded in ``steps``).
    """
    target = Target.of(profile, server_cap)
    chosen = _chosen(journeys)
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    count = DEFAULT_SHARDS if shards is None else shards
    if count < 1:
        raise ValueError("shards must be >= 1")
    if customers < 0:
        raise ValueError("customers must be >= 0")
    fault_specs = _fault_specs(faults)
    target.refuse(fault_specs, cluster)
    requested, customers = customers, target.customers(customers)
    count = max(1, min(count, customers))
    # checked here, before anything
    draws = Draws(seed, kyc_failure_rate, reason_mix, event_rate, p2p_rate, target.personas)
    folder = _out_folder(out)
    options = DEFAULT_CLIENT_OPTIONS if target.own else SERVER_CLIENT_OPTIONS
    specs = [
        ShardSpec(
            index=k,
            first=first,
            end=end,
            journeys=chosen,
            faults=tuple(fault_specs),
            client_options={**options, **dict(client_options or {})},
            concurrency=concurrency,
            out=None if folder is None else str(folder),
            draws=draws,
            profile=target.profile,
        )
        for k, (first, end) in enumerate(shard_bounds(customers, count))
    ]
    environ = target.environment() if cluster is None else None  # a partner token, once for the run
    started = time.perf_counter()
    with _progress(customers, person_watching() if progress is None else progress) as bar:
        results = run_shards(specs, workers=workers, cluster=cluster, advance=bar.update, environ=environ)
    elapsed = time.perf_counter() - started
    settings = {
        "customers": customers,
        "seed": seed,
        "shards": count,
        "journeys": chosen,
        "kyc_failure_rate": kyc_failure_rate,
        "reason_mix": dict(reason_mix) if reason_mix else None,
        "event_rate": event_rate,
        "p2p_rate": p2p_rate,
        "faults": list(specs[0].faults) if specs else [],
        "concurrency": concurrency,
        "engine": "dask" if cluster is not None else f"{workers or default_workers()} local processes",
        "profile": target.name,
        "server": target.server,
        "requested": requested,
        "personas": target.personas,
        "skipped": dict(target.skipped),
    }
    in_memory = folder is None
    ledgers = [r.ledger for r in results if r.ledger is not None]
    if not target.own:  # not read: an empty ledger, with or without out=
        ledgers = [pd.DataFrame(columns=LEDGER_COLUMNS)]
    return SimulationResult(
        Partial.total(r.partial for r in results),
        settings,
        elapsed,
        _shards_table(specs, results),
        steps=steps_frame(pd.concat([r.steps for r in results], ignore_index=True))
        if in_memory and results
        else None,
        ledger=pd.concat(ledgers, ignore_index=True) if ledgers and (in_memory or not target.own) else None,
        out=folder,
        calls=calls_frame(r.calls for r in results),
    )
