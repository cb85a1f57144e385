"""Results of a population run: the tidy ``steps`` table and what is read from it — funnel,
error mix, retries, latency percentiles, the ledger check — and comparisons of several runs.

Example::

    >>> result = kit.simulate.run(customers=50, seed=7, progress=False)   # doctest: +SKIP
    >>> print(result.summary())                                          # doctest: +SKIP
    Funnel
    ...
    >>> compare({"calm": result, "again": result})                       # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from kit.lab.journeys import ONBOARDING_STEPS
from kit.lab.planning import CustomerPlan, plans_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "FUNNEL_STAGES",
    "JOURNEYS",
    "OUTCOMES",
    "STEPS",
    "STEP_COLUMNS",
    "SimulationResult",
    "Summary",
    "compare",
    "plot_compare",
    "steps_frame",
]

#: The journeys a customer can go through; ``onboarding`` always runs (the others need it).
JOURNEYS: tuple[str, ...] = ("onboarding", "cards", "events", "p2p")

#: Every step, in journey order (the ``step`` column's categories).
STEPS: tuple[str, ...] = (*ONBOARDING_STEPS, "create_card", "close_card", "send_event", "p2p_transfer")

#: Funnel stages: how many customers got that far (``kyc_established`` counts KYC passes).
FUNNEL_STAGES: tuple[str, ...] = (
    "started",
    "anonymous_session",
    "create_account",
    "account_session",
    "add_person",
    "kyc_questions",
    "kyc_established",
    "person_session",
    "card_closed",
)

#: The columns of ``steps``, and the outcomes a step can have.
STEP_COLUMNS = ["customer", "t", "step", "outcome", "status", "code", "latency_ms", "retries"]
OUTCOMES = ("ok", "failed", "error", "skipped")


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
    return table.round(2).reset_index()


@dataclasses.dataclass(frozen=True)
class Summary:
    """``result.summary()``: funnel, error mix, retries and latency percentiles per step.

    ``str(summary)`` is the deterministic part (no latencies); ``summary.text(latency=True)``
    adds the percentiles (wall-clock, they vary).
    """

    funnel: pd.DataFrame
    errors: pd.DataFrame
    retries: pd.DataFrame
    latency: pd.DataFrame
    p2p: Mapping[str, Any]

    def text(self, *, latency: bool = False) -> str:
        """A plain-text report; ``latency=False`` keeps it deterministic for a seed."""
        parts = [
            "Funnel",
            self.funnel.to_string(index=False),
            "",
            "Errors",
            self.errors.to_string(index=False) if len(self.errors) else "(none)",
            "",
            "Retries",
            self.retries.to_string(index=False) if len(self.retries) else "(none)",
            "",
            "P2P and ledger",
            ", ".join(f"{k}={v}" for k, v in self.p2p.items()),
        ]
        if latency:
            parts += ["", "Latency per step (ms, wall clock)", self.latency.to_string(index=False)]
        return "\n".join(parts)

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        errors = self.errors.to_html(index=False) if len(self.errors) else "<p>(no errors)</p>"
        p2p = ", ".join(f"{k}={v}" for k, v in self.p2p.items())
        return (
            f"<h4>Funnel</h4>{self.funnel.to_html(index=False)}<h4>Errors</h4>{errors}"
            f"<h4>P2P and ledger</h4><p>{p2p}</p>"
            f"<h4>Latency per step (ms)</h4>{self.latency.to_html(index=False)}"
        )


@dataclasses.dataclass
class SimulationResult:
    """What :func:`run` returns. ``steps`` is tidy: one row per step, sorted by customer, ``t``.

    Columns of ``steps``: ``customer`` (int), ``t`` (the step's position in its customer's
    journey: sequence time — the simulator's clock is frozen, so it orders nothing), ``step``
    and ``outcome`` (categories), ``status`` (HTTP, nullable), ``code`` (problem code, or
    ``kyc-failed`` for a KYC refusal), ``latency_ms`` (wall clock, the one column that
    varies between runs), ``retries``.
    """

    steps: pd.DataFrame
    plans: list[CustomerPlan]
    ledger: pd.DataFrame
    transfers_in_ledger: int
    settings: Mapping[str, Any]
    elapsed_s: float

    def __repr__(self) -> str:
        return (
            f"<SimulationResult customers={len(self.plans)} steps={len(self.steps)} "
            f"money_conserved={self.money_conserved}>"
        )

    def _repr_html_(self) -> str:
        return f"<p>{len(self.plans)} customers, {len(self.steps)} steps</p>{self.summary()._repr_html_()}"

    # -- tables -----------------------------------------------------------------------------

    @property
    def customers(self) -> pd.DataFrame:
        """The plans as a table (:func:`plans_table`)."""
        return plans_table(self.plans)

    def _reached(self, step: str, outcome: str = "ok") -> int:
        s = self.steps
        return int(s.loc[(s["step"] == step) & (s["outcome"] == outcome), "customer"].nunique())

    @property
    def funnel(self) -> pd.DataFrame:
        """Customers reaching each stage, their share of those who started, and the step's
        conversion from the previous stage (``kyc_established`` counts passed KYC; the
        ``card_closed`` stage is there when the cards journey ran)."""
        counts = {"started": len(self.plans)}
        for stage in FUNNEL_STAGES[1:]:
            if stage == "kyc_established":
                counts[stage] = self._reached("kyc_answers")
            elif stage == "card_closed":
                if "cards" in self.settings.get("journeys", JOURNEYS):
                    counts[stage] = self._reached("close_card")
            else:
                counts[stage] = self._reached(stage)
        frame = pd.DataFrame({"stage": list(counts), "customers": list(counts.values())})
        start = max(1, len(self.plans))
        frame["share"] = (frame["customers"] / start).round(4)
        previous = frame["customers"].shift(1).fillna(frame["customers"].iloc[0] if len(frame) else 0)
        frame["conversion"] = (frame["customers"] / previous.where(previous > 0, 1)).round(4)
        frame["stage"] = pd.Categorical(frame["stage"], categories=list(counts), ordered=True)
        return frame

    @property
    def errors(self) -> pd.DataFrame:
        """Error mix: count per step and problem code (errors, KYC refusals and skips)."""
        bad = self.steps[self.steps["outcome"] != "ok"]
        if bad.empty:
            return pd.DataFrame(columns=["step", "outcome", "status", "code", "count"])
        table = (
            bad.groupby(["step", "outcome", "status", "code"], observed=True, dropna=False)
            .size()
            .rename("count")
            .reset_index()
        )
        return table[table["count"] > 0].sort_values(["step", "code"]).reset_index(drop=True)

    @property
    def retries(self) -> pd.DataFrame:
        """Steps that needed retries: per step, how many steps and how many retries in all."""
        retried = self.steps[self.steps["retries"] > 0]
        if retried.empty:
            return pd.DataFrame(columns=["step", "steps_retried", "retries"])
        table = retried.groupby("step", observed=True)["retries"].agg(["size", "sum"])
        return table.rename(columns={"size": "steps_retried", "sum": "retries"}).reset_index()

    @property
    def latency(self) -> pd.DataFrame:
        """Latency percentiles per step (wall clock, ms: they vary from run to run)."""
        return _percentiles(self.steps)

    @property
    def money_conserved(self) -> bool:
        """Whether the sum of our accounts' balances equals the sum of their opening balances
        and every account's balance is its opening minus sent plus received in the ledger."""
        if self.ledger.empty:
            return True
        total_ok = self.ledger["balance"].sum() == self.ledger["opening"].sum()
        return bool(total_ok and (self.ledger["balance"] == self.ledger["expected"]).all())

    @property
    def journeys_per_second(self) -> float:
        """Customers run per wall-clock second (the benchmark's figure)."""
        return len(self.plans) / self.elapsed_s if self.elapsed_s > 0 else float("nan")

    def summary(self) -> Summary:
        """Funnel, error mix, retries, latency percentiles and the P2P/ledger figures.

        Example::

            >>> print(result.summary())              # doctest: +SKIP
            Funnel
            ...
        """
        confirmed = self._reached("p2p_transfer")
        p2p = {
            "p2p_planned": sum(p.p2p_amount is not None for p in self.plans),
            "p2p_confirmed": confirmed,
            "transfers_in_ledger": self.transfers_in_ledger,
            "money_conserved": self.money_conserved,
        }
        return Summary(self.funnel, self.errors, self.retries, self.latency, p2p)

    # -- plots ------------------------------------------------------------------------------

    def plot_funnel(self, *, title: str | None = None) -> Figure:
        """A horizontal bar chart of the funnel (share of customers per stage)."""
        from kit.lab.plots import funnel_figure

        return funnel_figure({title or "customers": self.funnel})

    def plot_latency(self) -> Figure:
        """Latency per step: box plots on a log scale (wall clock)."""
        from kit.lab.plots import latency_figure

        return latency_figure(self.steps)

    def plot_errors(self) -> Figure:
        """Errors per step and code (stacked bars), with the retries that absorbed faults."""
        from kit.lab.plots import errors_figure

        return errors_figure(self.steps)


def compare(results: Mapping[str, SimulationResult]) -> pd.DataFrame:
    """The funnels of several runs side by side (customers per stage, one column per run).

    Example::

        >>> compare({"no faults": calm, "degraded": stormy})   # doctest: +SKIP
    """
    columns = {name: r.funnel.set_index("stage")["customers"] for name, r in results.items()}
    frame = pd.DataFrame(columns)
    frame.index = frame.index.astype(str)
    return frame.reset_index().rename(columns={"index": "stage"})


def plot_compare(results: Mapping[str, SimulationResult]) -> Figure:
    """The funnels of several runs in one chart (one colour per run).

    Example::

        >>> plot_compare({"no faults": calm, "degraded": stormy})   # doctest: +SKIP
    """
    from kit.lab.plots import funnel_figure

    return funnel_figure({name: r.funnel for name, r in results.items()})


def steps_frame(rows: list[tuple[Any, ...]]) -> pd.DataFrame:
    """The rows recorded by the customers as the typed ``steps`` table, sorted by customer, ``t``."""
    frame = pd.DataFrame(rows, columns=STEP_COLUMNS)
    frame = frame.sort_values(["customer", "t"], kind="stable").reset_index(drop=True)
    return frame.astype(
        {
            "customer": "int64",
            "t": "int64",
            "step": pd.CategoricalDtype(list(STEPS), ordered=True),
            "outcome": pd.CategoricalDtype(list(OUTCOMES)),
            "status": "Int64",
            "code": "string",
            "latency_ms": "float64",
            "retries": "int64",
        }
    )
