"""Population simulation (public name ``kit.simulate``): N synthetic customers through the
API's journeys, concurrently.

:func:`run` plans every customer up front from seeded ``random.Random`` streams — who answers the
KYC questions wrong on purpose, which card type and close reason, which inbound events, whether
and how much they send by P2P and to whom — then runs the customers on a thread pool, each as
its own device (one :func:`kit.connect` per customer), against the simulator (sim profile).
Fault profiles are injected through the control plane (``api.sim.add_fault``).

The result holds one row per step (:attr:`SimulationResult.steps`), the funnel, the error mix,
latency percentiles, and a ledger check that money was conserved across all P2P transfers.

Determinism: for a seed, ``steps`` is the same from run to run apart from ``latency_ms`` —
without faults. Injected faults are drawn from the simulator's seeded random source in the
order requests arrive, which a thread pool does not fix: with faults, retries and errors vary
a little between runs (``concurrency=1`` makes them repeatable too). Resource ids are handed
out in arrival order for the same reason; they are kept out of ``steps``.

This module is the entry (:func:`run`) and the public face: the plans come from
:mod:`kit.lab.planning`, each customer runs in :mod:`kit.lab.customer` (onboarding through
:mod:`kit.lab.journeys`), the tables and figures are :mod:`kit.lab.results`' — all re-exported
here.

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
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from decimal import Decimal
from typing import Any

import pandas as pd

import kit
from kit.lab.customer import Crowd, Outcome
from kit.lab.planning import CLOSE_REASONS, CustomerPlan, plan, plans_table
from kit.lab.results import (
    FUNNEL_STAGES,
    JOURNEYS,
    OUTCOMES,
    STEP_COLUMNS,
    STEPS,
    SimulationResult,
    Summary,
    compare,
    plot_compare,
    steps_frame,
)

__all__ = [
    "CLOSE_REASONS",
    "DEFAULT_CLIENT_OPTIONS",
    "FAULT_PROFILES",
    "FUNNEL_STAGES",
    "JOURNEYS",
    "OUTCOMES",
    "STEPS",
    "STEP_COLUMNS",
    "CustomerPlan",
    "SimulationResult",
    "Summary",
    "compare",
    "plan",
    "plans_table",
    "plot_compare",
    "run",
]

#: Named fault profiles for ``run(faults=…)``: lists of ``api.sim.add_fault`` arguments.
#: ``flaky`` hurts but retries absorb most of it; ``degraded`` is bad enough to lose customers.
FAULT_PROFILES: dict[str, tuple[dict[str, Any], ...]] = {
    "none": (),
    "flaky": (
        {"method": "POST", "path": "/sessions", "status": 503, "rate": 0.10},
        {"method": "POST", "path": "/accounts/{account_id}/cards", "status": 503, "rate": 0.10},
        {"method": "POST", "path": "/p2p/transfers", "status": 503, "rate": 0.20, "when": "after_commit"},
    ),
    "degraded": (
        {"method": "POST", "path": "/sessions", "status": 503, "rate": 0.45},
        {
            "method": "POST",
            "path": "/persons/{person_id}/kyc/answers",
            "status": 503,
            "rate": 0.30,
            "when": "after_commit",
        },
        {"method": "POST", "path": "/accounts/{account_id}/events", "status": 429, "rate": 0.40},
        {"method": "POST", "path": "/p2p/transfers", "status": 503, "rate": 0.40, "when": "after_commit"},
    ),
}

# Retries against the simulator need not wait long: short backoff keeps a run quick while the
# retry logic (same Idempotency-Key, bounded attempts) is exercised exactly as in production.
DEFAULT_CLIENT_OPTIONS: dict[str, Any] = {"backoff_base": 0.005, "backoff_cap": 0.05, "max_retries": 4}


def _fault_specs(faults: str | Iterable[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    if faults is None:
        return []
    if isinstance(faults, str):
        if faults not in FAULT_PROFILES:
            raise ValueError(f"unknown fault profile {faults!r}; known: {', '.join(FAULT_PROFILES)}")
        return [dict(f) for f in FAULT_PROFILES[faults]]
    return [dict(f) for f in faults]


def _ledger(control: kit.Client, outcomes: Sequence[Outcome]) -> tuple[pd.DataFrame, int]:
    ours = {o.account_id: i for i, o in enumerate(outcomes) if o.account_id is not None}
    account_of = {o.person_id: o.account_id for o in outcomes if o.person_id is not None}
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
            {
                "customer": customer,
                "account_id": account_id,
                "opening": opening,
                "sent": out,
                "received": into,
                "expected": opening - out + into,
                "balance": balances.get(account_id),
            }
        )
    columns = ["customer", "account_id", "opening", "sent", "received", "expected", "balance"]
    return pd.DataFrame(rows, columns=columns), len(transfers)


def _chosen(journeys: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(journeys)
    unknown = [j for j in chosen if j not in JOURNEYS]
    if unknown:
        raise ValueError(f"unknown journey(s) {unknown}; known: {', '.join(JOURNEYS)}")
    return chosen


def _prepare(control: kit.Client, reset_to: int | None, specs: Sequence[Mapping[str, Any]]) -> None:
    """Reset the simulator (unless ``reset_to`` is ``None``) and inject the faults."""
    if reset_to is not None:
        control.sim.reset(reset_to)
    control.sim.clear_faults()
    for spec in specs:
        control.sim.add_fault(**spec)


def _play(
    crowd: Crowd, plans: Sequence[CustomerPlan], control: kit.Client, *, concurrency: int, progress: bool
) -> float:
    """Every customer on a thread pool (FIFO: a P2P recipient starts before its sender); the
    faults are cleared at the end whatever happened. Returns the wall-clock seconds taken."""
    from tqdm.auto import tqdm

    started = time.perf_counter()
    try:
        with (
            ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="kit-sim") as pool,
            tqdm(total=len(plans), disable=not progress, desc="customers", unit="customer") as bar,
        ):
            futures = [pool.submit(crowd.run_one, p) for p in plans]
            for future in as_completed(futures):
                future.result()
                bar.update(1)
        return time.perf_counter() - started
    finally:
        control.sim.clear_faults()


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
    concurrency: int = 8,
    progress: bool = True,
    reset: bool = True,
    client_options: Mapping[str, Any] | None = None,
) -> SimulationResult:
    """Run ``customers`` synthetic customers through ``journeys`` on the embedded simulator.

    - ``kyc_failure_rate``: share of customers who answer the KYC questions wrong on purpose
      (one attempt; they stop there).
    - ``reason_mix``: close reason → weight (``None`` closes without a reason); uniform over
      the register's reasons (A15) by default.
    - ``event_rate``: mean number of inbound events per customer (Poisson), types uniform over
      the spec's eight.
    - ``p2p_rate``: share of customers who send one P2P transfer (1.00–50.00 USD) to an
      earlier customer planned to pass KYC (no funding: money only moves between customers).
    - ``faults``: a :data:`FAULT_PROFILES` name or a list of ``api.sim.add_fault`` keyword
      dicts; cleared at the end of the run.
    - ``concurrency``: worker threads, each customer one ``kit.connect()`` device.
    - ``reset``: reset the simulator to ``seed`` first (ids and ledger start clean).
    - ``client_options``: extra ``kit.connect`` options for the customers' clients (the
      default shortens retry backoff: the simulator needs no long waits).

    Example::

        >>> r = run(customers=50, seed=7, faults="flaky", progress=False)   # doctest: +SKIP
        >>> r.money_conserved                                               # doctest: +SKIP
        True

    Raises:
        ValueError: an unknown journey, fault profile or close reason; a rate out of range.
        KitError: the control plane could not be reached (the customers' own errors are
        recorded in ``steps``, not raised).
    """
    chosen = _chosen(journeys)
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    specs = _fault_specs(faults)
    plans = plan(
        customers,
        seed=seed,
        kyc_failure_rate=kyc_failure_rate,
        reason_mix=reason_mix,
        event_rate=event_rate,
        p2p_rate=p2p_rate,
    )
    crowd = Crowd(plans, chosen, seed, {**DEFAULT_CLIENT_OPTIONS, **dict(client_options or {})})
    control = kit.connect("sim")
    try:
        _prepare(control, seed if reset else None, specs)
        elapsed = _play(crowd, plans, control, concurrency=concurrency, progress=progress)
        ledger, transfers = _ledger(control, crowd.outcomes)
    finally:
        control.close()
    settings = {
        "customers": customers,
        "seed": seed,
        "journeys": chosen,
        "kyc_failure_rate": kyc_failure_rate,
        "reason_mix": dict(reason_mix) if reason_mix else None,
        "event_rate": event_rate,
        "p2p_rate": p2p_rate,
        "faults": specs,
        "concurrency": concurrency,
    }
    return SimulationResult(steps_frame(crowd.rows()), plans, ledger, transfers, settings, elapsed)
