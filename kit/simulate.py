"""Population simulation: N synthetic customers through the API's journeys, concurrently.

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

import dataclasses
import functools
import math
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pandas as pd

import kit
from kit import register
from kit.errors import ApiError, KitError, TransportError
from kit.models import Persona
from kit.resources.cards import CARD_TYPES
from kit.resources.events import EVENT_TYPES

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "CLOSE_REASONS",
    "FAULT_PROFILES",
    "FUNNEL_STAGES",
    "JOURNEYS",
    "STEPS",
    "CustomerPlan",
    "SimulationResult",
    "Summary",
    "compare",
    "plan",
    "plans_table",
    "plot_compare",
    "run",
]

#: The journeys a customer can go through; ``onboarding`` always runs (the others need it).
JOURNEYS: tuple[str, ...] = ("onboarding", "cards", "events", "p2p")

#: Every step, in journey order (the ``step`` column's categories).
STEPS: tuple[str, ...] = (
    "anonymous_session",
    "create_account",
    "account_session",
    "add_person",
    "kyc_questions",
    "kyc_answers",
    "person_session",
    "create_card",
    "close_card",
    "send_event",
    "p2p_transfer",
)

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

#: The close reasons the simulator accepts (register entry A15).
CLOSE_REASONS: tuple[str, ...] = tuple(register.value("A15")["reasons"])

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

STEP_COLUMNS = ["customer", "t", "step", "outcome", "status", "code", "latency_ms", "retries"]
OUTCOMES = ("ok", "failed", "error", "skipped")


# --- planning ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CustomerPlan:
    """What one synthetic customer will do, drawn from the seed before anything runs."""

    customer: int
    persona_id: str
    device: Mapping[str, str]
    fails_kyc: bool
    card_type: str
    close_reason: str | None
    events: tuple[str, ...]
    p2p_amount: Decimal | None
    p2p_to: int | None


def _poisson(rng: random.Random, mean: float) -> int:
    """Knuth's method (means here are small); 0 for a mean of 0."""
    if mean <= 0:
        return 0
    limit, k, p = math.exp(-mean), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


def _weights(reason_mix: Mapping[str | None, float] | None) -> tuple[list[str | None], list[float]]:
    mix: Mapping[str | None, float] = reason_mix or dict.fromkeys(CLOSE_REASONS, 1.0)
    unknown = [r for r in mix if r is not None and r not in CLOSE_REASONS]
    if unknown:
        raise ValueError(f"unknown close reason(s) {unknown}; allowed: {', '.join(CLOSE_REASONS)} or None")
    if any(w < 0 for w in mix.values()) or sum(mix.values()) <= 0:
        raise ValueError("reason_mix weights must be non-negative and not all zero")
    return list(mix), [float(w) for w in mix.values()]


def plan(
    customers: int,
    *,
    seed: int = 7,
    kyc_failure_rate: float = 0.05,
    reason_mix: Mapping[str | None, float] | None = None,
    event_rate: float = 1.0,
    p2p_rate: float = 0.5,
    personas: Sequence[Mapping[str, Any]] | None = None,
) -> list[CustomerPlan]:
    """Draw every customer's plan from the seed (no network).

    Each aspect has its own ``random.Random`` stream derived from the seed (``f"{seed}:kyc"``,
    ``:cards``, ``:events``, ``:p2p``), drawn in customer order whatever the journeys: changing
    the event rate does not change who fails KYC. A P2P recipient is an earlier customer
    planned to pass KYC (``None`` when there is none yet).

    Example::

        >>> plans = plan(100, seed=7, kyc_failure_rate=0.2)
        >>> sum(p.fails_kyc for p in plans), plans[0].device["device_id"]
        (29, 'sim-7-00000')

    Raises:
        ValueError: a rate outside its range or an unknown close reason.
    """
    if customers < 0:
        raise ValueError("customers must be >= 0")
    for name, rate in (("kyc_failure_rate", kyc_failure_rate), ("p2p_rate", p2p_rate)):
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"{name} must be between 0 and 1")
    if event_rate < 0:
        raise ValueError("event_rate must be >= 0")
    reasons, weights = _weights(reason_mix)
    people = list(personas if personas is not None else register.personas())
    if not people:
        raise ValueError("no personas to draw customers from")
    # One stream per aspect, each derived from the seed: a draw of one aspect (a Poisson count
    # of events, say) never shifts another (who fails KYC).
    kyc, cards, events, p2p = (
        random.Random(f"{seed}:{aspect}") for aspect in ("kyc", "cards", "events", "p2p")
    )
    plans: list[CustomerPlan] = []
    eligible: list[int] = []
    for i in range(customers):
        persona = people[i % len(people)]
        base = dict(persona.get("device") or {})
        device = {
            "device_id": f"sim-{seed}-{i:05d}",
            "platform": str(base.get("platform", "web")),
            "model": str(base.get("model", "simulated")),
            "os_version": str(base.get("os_version", "1")),
        }
        fails = kyc.random() < kyc_failure_rate
        card_type = cards.choice(CARD_TYPES)
        reason = cards.choices(reasons, weights)[0]
        kinds = tuple(events.choice(EVENT_TYPES) for _ in range(_poisson(events, event_rate)))
        sends = p2p.random() < p2p_rate
        amount = Decimal(p2p.randint(100, 5000)) / 100
        to = eligible[int(p2p.random() * len(eligible))] if eligible else None
        plans.append(
            CustomerPlan(
                customer=i,
                persona_id=str(persona.get("persona_id")),
                device=device,
                fails_kyc=fails,
                card_type=card_type,
                close_reason=reason,
                events=kinds,
                p2p_amount=amount if sends else None,
                p2p_to=to if sends else None,
            )
        )
        if not fails:
            eligible.append(i)
    return plans


def plans_table(plans: Sequence[CustomerPlan]) -> pd.DataFrame:
    """Plans as a table, one row per customer (persona ids only, never PII).

    Example::

        >>> plans_table(plan(3, seed=7))[["customer", "persona_id", "fails_kyc"]]
           customer  persona_id  fails_kyc
        0         0  persona-01      False
        1         1  persona-02      False
        2         2  persona-03       True
    """
    rows = [
        {
            "customer": p.customer,
            "persona_id": p.persona_id,
            "device_id": p.device["device_id"],
            "fails_kyc": p.fails_kyc,
            "card_type": p.card_type,
            "close_reason": p.close_reason,
            "events": len(p.events),
            "p2p_amount": p.p2p_amount,
            "p2p_to": p.p2p_to,
        }
        for p in plans
    ]
    columns = [
        "customer",
        "persona_id",
        "device_id",
        "fails_kyc",
        "card_type",
        "close_reason",
        "events",
        "p2p_amount",
        "p2p_to",
    ]
    return pd.DataFrame(rows, columns=columns).astype({"p2p_to": "Int64"})


# --- running one customer ---------------------------------------------------------------------


@dataclasses.dataclass
class _Outcome:
    """What one customer's run produced (ids stay here, out of ``steps``)."""

    rows: list[tuple[Any, ...]] = dataclasses.field(default_factory=list)
    account_id: str | None = None
    person_id: str | None = None
    opening: Decimal | None = None
    established: bool = False


class _Customer:
    """Runs one plan on its own client (one device); records a row per step."""

    def __init__(self, plan: CustomerPlan, api: kit.Client, outcome: _Outcome) -> None:
        self.plan = plan
        self.api = api
        self.out = outcome
        self.t = 0

    def step(self, name: str, fn: Callable[[], Any], judge: Callable[[Any], str | None] | None = None) -> Any:
        """Run ``fn`` as step ``name``; returns its value, or ``None`` when it raised.

        ``judge`` turns a 2xx answer into a business failure: it returns a code, or ``None``.
        """
        history = self.api._history  # the kit's own redacted call log (no bodies, no secrets)
        before = len(history)
        started = time.perf_counter()
        value: Any = None
        try:
            value = fn()
            status, code = None, judge(value) if judge is not None else None
            outcome = "failed" if code is not None else "ok"
        except ApiError as exc:
            outcome, status, code = "error", exc.status, exc.code
        except TransportError:
            outcome, status, code = "error", None, "connection-error"
        except KitError as exc:
            outcome, status, code = "error", None, type(exc).__name__
        latency = (time.perf_counter() - started) * 1000
        calls = history.entries()[before:]
        if status is None and calls and outcome != "error":
            status = calls[-1].status
        retries = sum(c.retries for c in calls)
        self.out.rows.append(
            (self.plan.customer, self.t, name, outcome, status, code, round(latency, 3), retries)
        )
        self.t += 1
        return value if outcome != "error" else None

    def skip(self, name: str, code: str) -> None:
        self.out.rows.append((self.plan.customer, self.t, name, "skipped", None, code, 0.0, 0))
        self.t += 1

    def onboard(self, persona: Persona) -> bool:
        api, p = self.api, self.plan
        if self.step("anonymous_session", lambda: api.sessions.create("anonymous")) is None:
            return False
        account = self.step("create_account", api.accounts.create)
        if account is None:
            return False
        self.out.account_id = account.account_id
        self.out.opening = account.balance.amount if account.balance is not None else None
        promote = api.sessions.promote
        if self.step("account_session", lambda: promote("account", account_id=account.account_id)) is None:
            return False
        person = self.step("add_person", lambda: api.persons.create(account.account_id, **persona.pii))
        if person is None:
            return False
        self.out.person_id = person.person_id
        questions = self.step("kyc_questions", lambda: api.kyc.questions(person.person_id))
        if questions is None:
            return False
        answers = _answers(api.sim.kyc_answers(person.person_id).reveal(), questions.reveal(), p.fails_kyc)
        result = self.step(
            "kyc_answers",
            lambda: api.kyc.answer(person.person_id, answers),
            judge=lambda r: None if r.status == "established" else "kyc-failed",
        )
        if result is None or result.status != "established":
            return False
        self.out.established = True
        return self.step("person_session", lambda: promote("person", person_id=person.person_id)) is not None

    def cards(self) -> None:
        api, p, account_id = self.api, self.plan, self.out.account_id
        assert account_id is not None
        card = self.step("create_card", lambda: api.cards.create(account_id, type=p.card_type))
        if card is not None:
            self.step("close_card", lambda: api.cards.close(card.card_id, reason=p.close_reason))

    def events(self) -> None:
        account_id = self.out.account_id
        assert account_id is not None
        send = self.api.events.send
        for event_type in self.plan.events:
            self.step("send_event", functools.partial(send, account_id, event_type))

    def p2p(self, recipient: _Outcome | None) -> None:
        if recipient is None or not recipient.established or recipient.person_id is None:
            self.skip("p2p_transfer", "no-eligible-recipient")
            return
        account_id, amount, to = self.out.account_id, self.plan.p2p_amount, recipient.person_id
        assert account_id is not None and amount is not None
        self.step(
            "p2p_transfer",
            lambda: self.api.p2p.transfer(from_account_id=account_id, to_person_id=to, amount=amount),
        )


def _answers(
    right: Iterable[Mapping[str, str]], questions: list[dict[str, Any]], wrong: bool
) -> list[dict[str, str]]:
    """The right answers, or (``wrong``) another of the offered choices for every question."""
    answers = [{"question_id": str(a["question_id"]), "choice": str(a["choice"])} for a in right]
    if not wrong:
        return answers
    choices = {str(q.get("question_id")): [str(c) for c in q.get("choices") or []] for q in questions}
    for a in answers:
        others = [c for c in choices.get(a["question_id"], []) if c != a["choice"]]
        a["choice"] = others[0] if others else a["choice"] + "-wrong"
    return answers


# --- results ----------------------------------------------------------------------------------


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
        from kit.plots import funnel_figure

        return funnel_figure({title or "customers": self.funnel})

    def plot_latency(self) -> Figure:
        """Latency per step: box plots on a log scale (wall clock)."""
        from kit.plots import latency_figure

        return latency_figure(self.steps)

    def plot_errors(self) -> Figure:
        """Errors per step and code (stacked bars), with the retries that absorbed faults."""
        from kit.plots import errors_figure

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
    from kit.plots import funnel_figure

    return funnel_figure({name: r.funnel for name, r in results.items()})


# --- the run ----------------------------------------------------------------------------------


def _steps_frame(rows: list[tuple[Any, ...]]) -> pd.DataFrame:
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


def _fault_specs(faults: str | Iterable[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    if faults is None:
        return []
    if isinstance(faults, str):
        if faults not in FAULT_PROFILES:
            raise ValueError(f"unknown fault profile {faults!r}; known: {', '.join(FAULT_PROFILES)}")
        return [dict(f) for f in FAULT_PROFILES[faults]]
    return [dict(f) for f in faults]


def _ledger(control: kit.Client, outcomes: list[_Outcome]) -> tuple[pd.DataFrame, int]:
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
    chosen = tuple(journeys)
    unknown = [j for j in chosen if j not in JOURNEYS]
    if unknown:
        raise ValueError(f"unknown journey(s) {unknown}; known: {', '.join(JOURNEYS)}")
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
    personas = {p["persona_id"]: Persona.from_wire(p) for p in register.personas()}
    options = {**DEFAULT_CLIENT_OPTIONS, **dict(client_options or {})}
    outcomes = [_Outcome() for _ in plans]
    onboarded = [threading.Event() for _ in plans]

    def one(p: CustomerPlan) -> None:
        try:
            api = kit.connect("sim", device=dict(p.device), seed=seed * 100_003 + p.customer, **options)
            customer = _Customer(p, api, outcomes[p.customer])
            ok = customer.onboard(personas[p.persona_id])
        finally:
            onboarded[p.customer].set()  # never leave a P2P sender waiting
        try:
            if not ok:
                return
            if "cards" in chosen:
                customer.cards()
            if "events" in chosen:
                customer.events()
            if "p2p" in chosen and p.p2p_amount is not None:
                recipient = None
                if p.p2p_to is not None:
                    # An earlier customer: its task started before this one (FIFO pool).
                    onboarded[p.p2p_to].wait()
                    recipient = outcomes[p.p2p_to]
                customer.p2p(recipient)
        finally:
            api.close()

    from tqdm.auto import tqdm

    control = kit.connect("sim")
    try:
        if reset:
            control.sim.reset(seed)
        control.sim.clear_faults()
        for spec in specs:
            control.sim.add_fault(**spec)
        started = time.perf_counter()
        try:
            with (
                ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="kit-sim") as pool,
                tqdm(total=len(plans), disable=not progress, desc="customers", unit="customer") as bar,
            ):
                futures = [pool.submit(one, p) for p in plans]
                for future in as_completed(futures):
                    future.result()
                    bar.update(1)
        finally:
            elapsed = time.perf_counter() - started
            control.sim.clear_faults()
        ledger, transfers = _ledger(control, outcomes)
    finally:
        control.close()
    rows = [row for o in outcomes for row in o.rows]
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
    return SimulationResult(_steps_frame(rows), plans, ledger, transfers, settings, elapsed)
