"""One synthetic customer of a population run, on its own client (one device): its plan
played step by step, a row recorded per step.

:class:`Crowd` holds the customers of one shard; :meth:`Crowd.run_one` plays one plan (the
shard calls it, in customer order). Onboarding goes through :func:`kit.lab.journeys.onboard`, with
:meth:`Customer.step` as its step recorder; cards, events and P2P follow.

A row is ``(customer, t, step, outcome, status, code, latency_ms, retries)``, read from the
client's own redacted call log (``api.calls``: no bodies, no secrets). Resource ids stay in the
:class:`Outcome`, out of the rows. The crowd also counts its customers' calls by server (each
client's base URL), method, operation (the contract's path template: no ids) and status
(:attr:`Crowd.calls`): where the population's work was done, as its clients saw the answers.

The customers connect with the shard's profile: the simulator's (a shard's own, its base URL
given) with the register's personas, or another profile's server (its settings from the
environment) with that server's published personas, fetched by id (``api.personas``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

import kit
from kit import register
from kit._contract import DOCUMENT
from kit._profiles import Profile, SimProfile
from kit.errors import ApiError, KitError, TransportError
from kit.lab import journeys
from kit.lab.populations.planning import CustomerPlan
from kit.models import Persona

__all__ = ["CallKey", "Crowd", "Customer", "Outcome", "operation"]

#: ``(server, method, operation, status)``: what :attr:`Crowd.calls` counts.
CallKey = tuple[str, str, str, int | None]


@functools.cache
def _templates() -> tuple[tuple[re.Pattern[str], str], ...]:
    with open(register.data_dir() / DOCUMENT, encoding="utf-8") as f:
        paths = json.load(f)["paths"]
    return tuple((re.compile("^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(t)) + "$"), t) for t in paths)


def operation(path: str) -> str:
    """The contract's path template of a request path (the path itself when it has none).

    Example::

        >>> operation("/accounts/acc_1/persons"), operation("/sessions?x=1")
        ('/accounts/{account_id}/persons', '/sessions')
    """
    bare = path.split("?", 1)[0]
    return next((t for pattern, t in _templates() if pattern.match(bare)), bare)


@dataclasses.dataclass
class Outcome:
    """What one customer's run produced (ids stay here, out of ``steps``)."""

    rows: list[tuple[Any, ...]] = dataclasses.field(default_factory=list)
    account_id: str | None = None
    person_id: str | None = None
    opening: Decimal | None = None
    established: bool = False


class Customer:
    """Runs one plan on its own client (one device); records a row per step."""

    def __init__(self, plan: CustomerPlan, api: kit.Client, outcome: Outcome) -> None:
        self.plan = plan
        self.api = api
        self.out = outcome
        self.t = 0
        self.answered: dict[str, Any] = {}  # step name → the value of its last 2xx answer

    def step(self, name: str, fn: Callable[[], Any], judge: Callable[[Any], str | None] | None = None) -> Any:
        """Run ``fn`` as step ``name``; returns its value, or ``None`` when it raised.

        ``judge`` turns a 2xx answer into a business failure: it returns a code, or ``None``.
        """
        calls = self.api.calls  # the kit's own redacted call log (no bodies, no secrets)
        before = len(calls)
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
        made = calls.entries()[before:]
        if status is None and made and outcome != "error":
            status = made[-1].status
        retries = sum(c.retries for c in made)
        self.out.rows.append(
            (self.plan.customer, self.t, name, outcome, status, code, round(latency, 3), retries)
        )
        self.t += 1
        if outcome == "error":
            return None
        self.answered[name] = value
        return value

    def skip(self, name: str, code: str) -> None:
        self.out.rows.append((self.plan.customer, self.t, name, "skipped", None, code, 0.0, 0))
        self.t += 1

    def onboard(self, persona: Persona | None) -> bool:
        """The onboarding journey, as ``persona`` (``None``: the plan's persona, by id, from the
        client's profile); ``True`` when the person session is open."""
        pii, by_id = (None, self.plan.persona_id) if persona is None else (persona.pii, None)
        done = journeys.onboard(
            self.api,
            pii,
            persona=by_id,
            wrong_answers=self.plan.fails_kyc,
            expiration="sliding",
            step=self.step,
        )
        account = self.answered.get("create_account")
        if account is not None:
            self.out.account_id = account.account_id
            self.out.opening = account.balance.amount if account.balance is not None else None
        self.out.person_id = done.person_id
        kyc = self.answered.get("kyc_answers")
        self.out.established = kyc is not None and kyc.status == "established"
        return done.status == "established"

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

    def p2p(self, recipient: Outcome | None) -> None:
        if recipient is None or not recipient.established or recipient.person_id is None:
            self.skip("p2p_transfer", "no-eligible-recipient")
            return
        account_id, amount, to = self.out.account_id, self.plan.p2p_amount, recipient.person_id
        assert account_id is not None and amount is not None
        self.step(
            "p2p_transfer",
            lambda: self.api.p2p.transfer(from_account_id=account_id, to_person_id=to, amount=amount),
        )


class Crowd:
    """The customers of one shard and what they share: each one's :class:`Outcome` (by global
    customer number), an event per customer set once its onboarding ended (a P2P sender waits
    for its recipient's, an earlier customer of the same shard), and the count of their calls.

    ``profile``: what the customers connect with (default the simulator; ``options`` then
    names its base URL).
    """

    def __init__(
        self,
        plans: Sequence[CustomerPlan],
        chosen: Iterable[str],
        seed: int,
        options: Mapping[str, Any],
        profile: type[Profile] = SimProfile,
    ) -> None:
        self.chosen = tuple(chosen)
        self.seed = seed
        self.options = dict(options)
        self.profile = profile
        self.outcomes = {p.customer: Outcome() for p in plans}
        self.onboarded = {p.customer: threading.Event() for p in plans}
        own = profile.own_servers  # the register's personas; else the server's, by id
        self.personas = {p["persona_id"]: Persona.from_wire(p) for p in register.personas()} if own else {}
        self.calls: Counter[CallKey] = Counter()
        self._lock = threading.Lock()

    def run_one(self, p: CustomerPlan) -> None:
        """Play one plan on a new client (one device), closed at the end."""
        try:
            device = dict(p.device)
            api = kit.connect(
                self.profile, device=device, seed=self.seed * 100_003 + p.customer, **self.options
            )
            customer = Customer(p, api, self.outcomes[p.customer])
            ok = customer.onboard(self.personas.get(p.persona_id))
        finally:
            self.onboarded[p.customer].set()  # never leave a P2P sender waiting
        try:
            if ok:
                self._after_onboarding(customer)
        finally:
            api.close()
            self._count(api)

    def _count(self, api: kit.Client) -> None:
        server = str(api.config.base_url)
        made = Counter((server, c.method, operation(c.path), c.status) for c in api.calls.entries())
        with self._lock:
            self.calls.update(made)

    def _after_onboarding(self, customer: Customer) -> None:
        p = customer.plan
        if "cards" in self.chosen:
            customer.cards()
        if "events" in self.chosen:
            customer.events()
        if "p2p" in self.chosen and p.p2p_amount is not None:
            customer.p2p(self._recipient(p))

    def _recipient(self, p: CustomerPlan) -> Outcome | None:
        if p.p2p_to is None or p.p2p_to not in self.outcomes:
            return None
        # An earlier customer of this shard: its task started before this one (FIFO pool).
        self.onboarded[p.p2p_to].wait()
        return self.outcomes[p.p2p_to]

    def take_rows(self, customers: Iterable[int]) -> list[tuple[Any, ...]]:
        """The rows of these (finished) customers, customer by customer; their outcomes keep
        only what a later P2P sender and the ledger need."""
        rows: list[tuple[Any, ...]] = []
        for c in customers:
            rows.extend(self.outcomes[c].rows)
            self.outcomes[c].rows = []
        return rows
