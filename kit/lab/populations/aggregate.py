"""What a population's summary is made of, per shard and combined: :class:`Partial`.

Each shard (or each batch of a shard's customers, for a run streamed to Parquet) reduces its
``steps`` rows to a :class:`Partial`: counts per funnel step, the error mix, the retries, a
latency histogram per step, and the shard's ledger check. Partials add up (:meth:`Partial.merge`),
so the caller computes the funnel, the error mix, the retries and the ledger verdict from the
shards without ever holding every row. Counts are exact; latency percentiles from the
histograms are within one bin (:data:`BINS_PER_DECADE` bins per decade: about 2.3 %).

Example::

    >>> import pandas as pd
    >>> rows = [(0, 0, "anonymous_session", "ok", 201, None, 1.5, 0)]
    >>> part = Partial.of(steps_frame(rows), customers=1)
    >>> part.reached["anonymous_session"], part.merge(part).reached["anonymous_session"]
    (1, 2)
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from kit.lab.journeys import ONBOARDING_STEPS

__all__ = [
    "BINS_PER_DECADE",
    "FUNNEL_STAGES",
    "JOURNEYS",
    "OUTCOMES",
    "STEPS",
    "STEP_COLUMNS",
    "Partial",
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

#: Latency histogram: log-spaced bins from 10 µs to 1,000 s, this many per decade.
BINS_PER_DECADE = 100
_LOW, _HIGH = -2.0, 6.0  # log10 of ms
_EDGES = np.logspace(_LOW, _HIGH, int((_HIGH - _LOW) * BINS_PER_DECADE) + 1)
_MIDDLES = np.sqrt(_EDGES[:-1] * _EDGES[1:])

_ErrorKey = tuple[str, str, int | None, str | None]


def steps_frame(rows: Iterable[tuple[Any, ...]] | pd.DataFrame) -> pd.DataFrame:
    """Rows ``(customer, t, step, outcome, status, code, latency_ms, retries)`` — or a frame of
    those columns read back from Parquet — as the typed ``steps`` table, sorted by customer, ``t``.
    """
    frame = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows), columns=STEP_COLUMNS)
    frame = frame[STEP_COLUMNS].astype({"step": "string", "outcome": "string"})
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


def _histogram(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    logs = np.log10(np.clip(values, 10**_LOW, 10**_HIGH * 0.999))
    index = ((logs - _LOW) * BINS_PER_DECADE).astype(np.int64)
    return np.bincount(np.clip(index, 0, len(_MIDDLES) - 1), minlength=len(_MIDDLES))


def _key(step: Any, outcome: Any, status: Any, code: Any) -> _ErrorKey:
    return (
        str(step),
        str(outcome),
        None if pd.isna(status) else int(status),
        None if pd.isna(code) else str(code),
    )


@dataclasses.dataclass
class Partial:
    """The summable figures of some customers' steps (one shard, a batch, or a whole run).

    ``reached[step]``: customers whose ``step`` ended ``ok``; ``errors[(step, outcome, status,
    code)]``: steps that did not end ``ok``; ``retried`` / ``retries``: steps retried and
    retries in all, per step; ``latency``: a histogram of ``latency_ms`` per step (skips left
    out) and ``latency_max``; ``transfers``: P2P transfers in the ledger; ``opening`` /
    ``balance``: the accounts' totals; ``mismatched``: accounts whose balance is not opening −
    sent + received; ``unchecked``: shards whose ledger could not be read (no control plane).
    """

    customers: int = 0
    p2p_planned: int = 0
    reached: Counter[str] = dataclasses.field(default_factory=Counter)
    errors: Counter[_ErrorKey] = dataclasses.field(default_factory=Counter)
    retried: Counter[str] = dataclasses.field(default_factory=Counter)
    retries: Counter[str] = dataclasses.field(default_factory=Counter)
    latency: dict[str, np.ndarray[Any, Any]] = dataclasses.field(default_factory=dict)
    latency_max: dict[str, float] = dataclasses.field(default_factory=dict)
    transfers: int = 0
    accounts: int = 0
    opening: Decimal = Decimal("0")
    balance: Decimal = Decimal("0")
    mismatched: int = 0
    unchecked: int = 0

    @classmethod
    def of(cls, steps: pd.DataFrame, *, customers: int, p2p_planned: int = 0) -> Partial:
        """The figures of ``steps`` (typed as :func:`steps_frame`) for ``customers`` customers."""
        part = cls(customers=customers, p2p_planned=p2p_planned)
        ok = steps[steps["outcome"] == "ok"]
        part.reached.update(
            {str(k): int(v) for k, v in ok.groupby("step", observed=True)["customer"].nunique().items()}
        )
        bad = steps[steps["outcome"] != "ok"]
        if len(bad):
            sizes = bad.groupby(["step", "outcome", "status", "code"], observed=True, dropna=False).size()
            part.errors.update({_key(*k): int(v) for k, v in sizes.items() if v > 0})
        retried = steps[steps["retries"] > 0].groupby("step", observed=True)["retries"]
        part.retried.update({str(k): int(v) for k, v in retried.size().items()})
        part.retries.update({str(k): int(v) for k, v in retried.sum().items()})
        done = steps[steps["outcome"] != "skipped"]
        for step, group in done.groupby("step", observed=True)["latency_ms"]:
            values = group.to_numpy(dtype=float)
            part.latency[str(step)] = _histogram(values)
            part.latency_max[str(step)] = float(values.max())
        return part

    def merge(self, other: Partial) -> Partial:
        """The figures of both (neither is changed)."""
        latency = dict(self.latency)
        for step, counts in other.latency.items():
            latency[step] = latency[step] + counts if step in latency else counts.copy()
        top = dict(self.latency_max)
        for step, value in other.latency_max.items():
            top[step] = max(top.get(step, value), value)
        return Partial(
            customers=self.customers + other.customers,
            p2p_planned=self.p2p_planned + other.p2p_planned,
            reached=self.reached + other.reached,
            errors=self.errors + other.errors,
            retried=self.retried + other.retried,
            retries=self.retries + other.retries,
            latency=latency,
            latency_max=top,
            transfers=self.transfers + other.transfers,
            accounts=self.accounts + other.accounts,
            opening=self.opening + other.opening,
            balance=self.balance + other.balance,
            mismatched=self.mismatched + other.mismatched,
            unchecked=self.unchecked + other.unchecked,
        )

    @classmethod
    def total(cls, parts: Iterable[Partial]) -> Partial:
        """All ``parts`` merged (an empty :class:`Partial` for none)."""
        result = cls()
        for part in parts:
            result = result.merge(part)
        return result

    def with_ledger(self, ledger: pd.DataFrame, transfers: int) -> Partial:
        """These figures plus a shard's ledger check (columns ``opening``, ``balance``, ``expected``)."""
        return dataclasses.replace(
            self,
            transfers=self.transfers + transfers,
            accounts=self.accounts + len(ledger),
            opening=self.opening + sum(ledger["opening"], Decimal("0")),
            balance=self.balance + sum((b for b in ledger["balance"] if b is not None), Decimal("0")),
            mismatched=self.mismatched + int((ledger["balance"] != ledger["expected"]).sum()),
        )

    def without_ledger(self) -> Partial:
        """These figures, from a shard whose ledger could not be read (no control plane)."""
        return dataclasses.replace(self, unchecked=self.unchecked + 1)

    # -- the tables -------------------------------------------------------------------------

    @property
    def money_conserved(self) -> bool | None:
        """The balances add up to the openings and every account is opening − sent + received;
        ``None`` when a shard's ledger was not checked (never a pass on figures not read)."""
        if self.unchecked:
            return None
        return self.balance == self.opening and self.mismatched == 0

    def funnel(self, journeys: Iterable[str] = JOURNEYS) -> pd.DataFrame:
        """Customers reaching each stage, their share of those who started, the conversion."""
        counts = {"started": self.customers}
        for stage in FUNNEL_STAGES[1:]:
            if stage == "kyc_established":
                counts[stage] = self.reached["kyc_answers"]
            elif stage == "card_closed":
                if "cards" in tuple(journeys):
                    counts[stage] = self.reached["close_card"]
            else:
                counts[stage] = self.reached[stage]
        frame = pd.DataFrame({"stage": list(counts), "customers": list(counts.values())})
        start = max(1, self.customers)
        frame["share"] = (frame["customers"] / start).round(4)
        previous = frame["customers"].shift(1).fillna(frame["customers"].iloc[0])
        frame["conversion"] = (frame["customers"] / previous.where(previous > 0, 1)).round(4)
        frame["stage"] = pd.Categorical(frame["stage"], categories=list(counts), ordered=True)
        return frame

    def error_table(self) -> pd.DataFrame:
        """Count per step, outcome, status and problem code of the steps that did not end ``ok``."""
        columns = ["step", "outcome", "status", "code", "count"]
        if not self.errors:
            return pd.DataFrame(columns=columns)
        frame = pd.DataFrame([(*key, n) for key, n in self.errors.items()], columns=columns)
        frame = frame.astype(
            {
                "step": pd.CategoricalDtype(list(STEPS), ordered=True),
                "outcome": pd.CategoricalDtype(list(OUTCOMES)),
                "status": "Int64",
                "code": "string",
                "count": "int64",
            }
        )
        return frame.sort_values(["step", "code", "outcome", "status"], kind="stable").reset_index(drop=True)

    def retry_table(self) -> pd.DataFrame:
        """Per step that needed retries: how many steps, and how many retries in all."""
        rows = [(s, self.retried[s], self.retries[s]) for s in STEPS if self.retried[s] > 0]
        frame = pd.DataFrame(rows, columns=["step", "steps_retried", "retries"])
        if rows:
            frame["step"] = pd.Categorical(frame["step"], categories=list(STEPS), ordered=True)
        return frame

    def latency_table(self) -> pd.DataFrame:
        """Latency percentiles per step from the histograms (within one bin, about 2.3 %)."""
        rows = []
        for step in STEPS:
            counts = self.latency.get(step)
            if counts is None or counts.sum() == 0:
                continue
            cumulative = np.cumsum(counts)
            n = int(cumulative[-1])
            points = [float(_MIDDLES[np.searchsorted(cumulative, q * n)]) for q in (0.5, 0.9, 0.99)]
            rows.append((step, n, *points, self.latency_max[step]))
        frame = pd.DataFrame(rows, columns=["step", "calls", "p50_ms", "p90_ms", "p99_ms", "max_ms"])
        return frame.round(2)

    def p2p_figures(self) -> Mapping[str, Any]:
        """What became of the planned P2P transfers, adding up to ``p2p_planned``: confirmed,
        failed (an error answer), skipped for want of an established recipient, or not
        attempted (the sender's journey ended before P2P: a KYC failure or a step lost to
        faults); then the transfers in the ledger and its verdict (or that it was not checked)."""
        at_p2p: Counter[str] = Counter()
        for (step, outcome, _status, _code), n in self.errors.items():
            if step == "p2p_transfer":
                at_p2p[outcome] += n
        confirmed, failed, skipped = (
            self.reached["p2p_transfer"],
            at_p2p["error"] + at_p2p["failed"],
            at_p2p["skipped"],
        )
        figures: dict[str, Any] = {
            "p2p_planned": self.p2p_planned,
            "p2p_confirmed": confirmed,
            "p2p_failed": failed,
            "p2p_no_recipient": skipped,
            "p2p_not_attempted": self.p2p_planned - confirmed - failed - skipped,
        }
        if self.unchecked:
            return {**figures, "ledger": "not checked (needs the simulator's control plane)"}
        return {**figures, "transfers_in_ledger": self.transfers, "money_conserved": self.money_conserved}
