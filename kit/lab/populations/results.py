"""Results of a population run: the tidy ``steps`` table and what is read from it — funnel,
error mix, retries, latency percentiles, the ledger check — and comparisons of several runs.

The funnel, the error mix, the retries and the ledger verdict come from the shards' combined
:class:`~kit.lab.populations.aggregate.Partial` figures, never from every row: a run streamed to Parquet
(``out=``) summarises without loading its steps. ``steps`` and ``ledger`` are in memory, or read
from the Parquet files when first asked for.

Example::

    >>> result = kit.simulate.run(customers=50, seed=7, progress=False)   # doctest: +SKIP
    >>> result.summary()                                                 # doctest: +SKIP
    Funnel
    ...
    >>> compare({"calm": result, "again": result})                       # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from kit.lab.populations.aggregate import (
    FUNNEL_STAGES,
    JOURNEYS,
    OUTCOMES,
    STEP_COLUMNS,
    STEPS,
    Partial,
    steps_frame,
)
from kit.lab.populations.planning import CustomerPlan, plan, plans_table
from kit.lab.populations.summary import Summary

if TYPE_CHECKING:
    from kit.lab.populations.plots import Plot

__all__ = [
    "FUNNEL_STAGES",
    "JOURNEYS",
    "OUTCOMES",
    "STEPS",
    "STEP_COLUMNS",
    "SimulationResult",
    "Summary",
    "calls_frame",
    "compare",
    "load",
    "plot_compare",
    "steps_frame",
]

_MONEY = ("opening", "sent", "received", "expected", "balance")
_CALLS = ["server", "method", "operation", "status", "calls"]
#: A sender's ``p2p_transfer`` outcome → what became of the transfer (:meth:`SimulationResult.transfers`).
_TRANSFER = {"ok": "confirmed", "error": "failed", "failed": "failed", "skipped": "no recipient"}


def calls_frame(counts: Iterable[Mapping[tuple[str, str, str, int | None], int]]) -> pd.DataFrame:
    """The shards' call counts added up, one row per server, method, operation and status.

    Example::

        >>> key = ("http://a", "POST", "/sessions", 201)
        >>> calls_frame([{key: 2}, {key: 1}])
             server method  operation  status  calls
        0  http://a   POST  /sessions     201      3
    """
    total: Counter[tuple[str, str, str, int | None]] = Counter()
    for part in counts:
        total.update(part)
    rows = sorted(total.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][1], kv[0][3] or 0))
    frame = pd.DataFrame([(*key, n) for key, n in rows], columns=_CALLS)
    return frame.astype({"status": "Int64", "calls": "int64"})


def _percentiles(steps: pd.DataFrame) -> pd.DataFrame:
    done = steps[steps["outcome"] != "skipped"]
    grouped = done.groupby("step", observed=True)["latency_ms"]
    table = pd.DataFrame(
        {
            "calls": grouped.size(),
            "p50_ms": grouped.quantile(0.50),
            "p90_ms": grouped.quantile(0.90),
            "p99_ms": grouped.quantile(0.99),
            "max_ms": grouped.max(),
        }
    )
    table = table.round(2).reset_index()
    table["step"] = table["step"].astype(str)
    return table


class SimulationResult:
    """What :func:`kit.simulate.run` returns.

    ``steps`` is tidy: one row per step, sorted by customer, ``t``. Its columns: ``customer``
    (int, the customer's number in the run), ``t`` (the step's position in its customer's
    journey: sequence time — the simulator's clock is frozen, so it orders nothing), ``step``
    and ``outcome`` (categories), ``status`` (HTTP, nullable), ``code`` (problem code, or
    ``kyc-failed`` for a KYC refusal), ``latency_ms`` (wall clock, the one column that varies
    between runs), ``retries``. ``shards`` has one row per shard (customers, seconds, the
    worker's peak memory); ``out`` the Parquet folder of a streamed run (``None`` otherwise);
    ``calls`` the customers' calls counted by server, method, operation and status.
    """

    def __init__(
        self,
        partial: Partial,
        settings: Mapping[str, Any],
        elapsed_s: float,
        shards: pd.DataFrame,
        *,
        steps: pd.DataFrame | None = None,
        ledger: pd.DataFrame | None = None,
        out: Path | None = None,
        calls: pd.DataFrame | None = None,
    ) -> None:
        self.partial = partial
        self.calls = calls if calls is not None else calls_frame([])
        self.settings = settings
        self.elapsed_s = elapsed_s
        self.shards = shards
        self.out = out
        self._steps = steps
        self._ledger = ledger
        self._plans: list[CustomerPlan] | None = None

    def __repr__(self) -> str:
        where = f" out={str(self.out)!r}" if self.out is not None else ""
        return (
            f"<SimulationResult customers={self.partial.customers} shards={len(self.shards)} "
            f"money_conserved={self.money_conserved}{where}> — .summary(), .funnel, .steps, .plot_funnel()"
        )

    def _repr_html_(self) -> str:
        head = f"<p>{self.partial.customers} customers, {len(self.shards)} shards</p>"
        return head + self.summary()._repr_html_()

    # -- tables -----------------------------------------------------------------------------

    @property
    def steps(self) -> pd.DataFrame:
        """One row per step (see the class docstring); read from ``out/steps`` for a streamed run."""
        if self._steps is None:
            assert self.out is not None
            self._steps = steps_frame(pd.read_parquet(self.out / "steps"))
        return self._steps

    @property
    def ledger(self) -> pd.DataFrame:
        """Per account: ``customer``, ``account_id``, ``opening``, ``sent``, ``received``,
        ``expected`` and the simulator's ``balance`` (Decimals); read from ``out/ledger``."""
        if self._ledger is None:
            assert self.out is not None
            frame = pd.read_parquet(self.out / "ledger")
            for column in _MONEY:
                frame[column] = [None if pd.isna(v) else Decimal(v) for v in frame[column]]
            self._ledger = frame.sort_values("customer", kind="stable").reset_index(drop=True)
        return self._ledger

    @property
    def plans(self) -> list[CustomerPlan]:
        """Every customer's plan, drawn again from the settings (pure, seeded; no network).

        Raises:
            ValueError: a loaded result of a run that played a sandbox's published personas
                (never saved: they are PII).
        """
        if self._plans is None:
            s = self.settings
            if s.get("personas_omitted"):
                raise ValueError(
                    f"this result was saved without the {s['personas_omitted']} published personas its "
                    "run played (PII is never written): its plans cannot be drawn again"
                )
            self._plans = plan(
                s["customers"],
                seed=s["seed"],
                kyc_failure_rate=s["kyc_failure_rate"],
                reason_mix=s["reason_mix"],
                event_rate=s["event_rate"],
                p2p_rate=s["p2p_rate"],
                personas=s.get("personas"),
                shards=s["shards"],
            )
        return self._plans

    @property
    def customers(self) -> pd.DataFrame:
        """The plans as a table (:func:`plans_table`)."""
        return plans_table(self.plans)

    def transfers(self) -> pd.DataFrame:
        """What became of each planned P2P transfer, read sender by sender from :attr:`steps`
        (the summary's P2P figures come from the shards' counters instead).

        One row per planned sender: ``customer``, ``p2p_to`` (the planned recipient; ``<NA>``
        when its shard had no earlier customer planned to pass KYC), ``transfer`` and
        ``stopped``. ``transfer`` is ``confirmed`` (the sender's ``p2p_transfer`` step ended
        ``ok``), ``failed`` (an error answer), ``no recipient`` (skipped: the recipient was not
        established) or ``not attempted`` (the sender's journey ended before that step).
        ``stopped`` says where the journey that kept the transfer from being made ended: the
        sender's last step (``sender: kyc_answers failed (kyc-failed)``), the recipient's, or
        ``none planned``; ``-`` for a confirmed transfer.

        Example::

            >>> result.transfers()["transfer"].value_counts()   # doctest: +SKIP
            transfer
            confirmed        57
            no recipient      3
            not attempted     3
        """
        steps = self.steps
        last = steps.groupby("customer", sort=False).tail(1).set_index("customer")
        at_p2p = steps[steps["step"] == "p2p_transfer"].set_index("customer")["outcome"].astype(str)

        def where(who: str, customer: int) -> str:
            if customer not in last.index:
                return f"{who}: no step"
            step = last.loc[customer]
            code = "" if pd.isna(step["code"]) else f" ({step['code']})"
            return f"{who}: {step['step']} {step['outcome']}{code}"

        rows = []
        for p in self.plans:
            if p.p2p_amount is None:
                continue
            transfer = _TRANSFER.get(at_p2p.get(p.customer, ""), "not attempted")
            if transfer == "confirmed":
                stopped = "-"
            elif transfer != "no recipient":
                stopped = where("sender", p.customer)
            else:
                stopped = "none planned" if p.p2p_to is None else where("recipient", p.p2p_to)
            rows.append((p.customer, p.p2p_to, transfer, stopped))
        frame = pd.DataFrame(rows, columns=["customer", "p2p_to", "transfer", "stopped"])
        return frame.astype({"customer": "int64", "p2p_to": "Int64"})

    @property
    def funnel(self) -> pd.DataFrame:
        """Customers reaching each stage, their share of those who started, and the step's
        conversion from the previous stage (``kyc_established`` counts passed KYC; the
        ``card_closed`` stage is there when the cards journey ran)."""
        return self.partial.funnel(self.settings.get("journeys", JOURNEYS))

    @property
    def errors(self) -> pd.DataFrame:
        """Error mix: count per step and problem code (errors, KYC refusals and skips)."""
        return self.partial.error_table()

    @property
    def retries(self) -> pd.DataFrame:
        """Steps that needed retries: per step, how many steps and how many retries in all."""
        return self.partial.retry_table()

    @property
    def latency(self) -> pd.DataFrame:
        """Latency percentiles per step (wall clock, ms: they vary from run to run). Exact for a
        run in memory; from the shards' histograms (within about 2.3 %) for a streamed run."""
        if self._steps is not None:
            return _percentiles(self._steps)
        return self.partial.latency_table()

    @property
    def transfers_in_ledger(self) -> int:
        """P2P transfers between the run's customers in the simulators' ledgers."""
        return self.partial.transfers

    @property
    def money_conserved(self) -> bool | None:
        """Whether, in every shard, the accounts' balances add up to their opening balances and
        every account's balance is its opening minus sent plus received in the ledger;
        ``None`` when the ledger was not checked (see :attr:`skipped`)."""
        return self.partial.money_conserved

    @property
    def server(self) -> str | None:
        """The base URL of the server the shards were clients of (another profile's), or
        ``None``: each shard ran its own simulator."""
        return self.settings.get("server")

    @property
    def skipped(self) -> Mapping[str, str]:
        """What this run did not do, with the reason (the ledger check without a control plane)."""
        return self.settings.get("skipped") or {}

    @property
    def journeys_per_second(self) -> float:
        """Customers run per wall-clock second (the benchmark's figure)."""
        return self.partial.customers / self.elapsed_s if self.elapsed_s > 0 else float("nan")

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Keep this result in ``folder``: settings, steps, ledger and aggregates (Parquet and a
        small JSON, :mod:`kit.lab.populations.keep`); ``kit.simulate.load(folder)`` reads it back.

        Example::

            >>> result.save("runs/calm")                  # doctest: +SKIP
            PosixPath('runs/calm')

        Raises:
            OSError: the folder cannot be written.
        """
        from kit.lab.populations.keep import save

        return save(self, folder)

    def summary(self) -> Summary:
        """Funnel, error mix, retries, latency percentiles and the P2P/ledger figures.

        Example::

            >>> result.summary()                    # doctest: +SKIP
            Funnel
            ...
        """
        return Summary(self.funnel, self.errors, self.retries, self.latency, self.partial.p2p_figures())

    # -- plots ------------------------------------------------------------------------------

    def plot_funnel(self, *, title: str | None = None) -> Plot:
        """A horizontal bar chart of the funnel (share of customers per stage)."""
        from kit.lab.populations.plots import funnel_figure

        return funnel_figure({title or "customers": self.funnel})

    def plot_latency(self) -> Plot:
        """Latency per step: box plots on a log scale (wall clock; reads the steps)."""
        from kit.lab.populations.plots import latency_figure

        return latency_figure(self.steps)

    def plot_errors(self) -> Plot:
        """Errors per step and code (stacked bars), with the retries that absorbed faults."""
        from kit.lab.populations.plots import errors_figure

        return errors_figure(self.errors, self.retries)


def load(folder: str | os.PathLike[str]) -> SimulationResult:
    """A result kept by ``result.save(folder)``, with its summary, tables and plots
    (:mod:`kit.lab.populations.keep`).

    Example::

        >>> kit.simulate.load("runs/calm").summary()   # doctest: +SKIP

    Raises:
        SavedResultError: no saved result there, or one of another format version.
    """
    from kit.lab.populations.keep import read

    args, kwargs = read(folder)
    return SimulationResult(*args, **kwargs)


def compare(results: Mapping[str, SimulationResult]) -> pd.DataFrame:
    """The funnels of several runs side by side (customers per stage, one column per run).

    Example::

        >>> compare({"no faults": calm, "degraded": stormy})   # doctest: +SKIP
    """
    columns = {name: r.funnel.set_index("stage")["customers"] for name, r in results.items()}
    frame = pd.DataFrame(columns)
    frame.index = frame.index.astype(str)
    return frame.reset_index().rename(columns={"index": "stage"})


def plot_compare(results: Mapping[str, SimulationResult]) -> Plot:
    """The funnels of several runs in one chart (one colour per run).

    Example::

        >>> plot_compare({"no faults": calm, "degraded": stormy})   # doctest: +SKIP
    """
    from kit.lab.populations.plots import funnel_figure

    return funnel_figure({name: r.funnel for name, r in results.items()})
