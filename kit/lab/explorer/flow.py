"""The explorer's state machine: where one client's session stands, which step may come next,
and performing a step. No widgets here: :mod:`kit.lab.explorer.widgets` is the view.

Each step returns the message to show; errors raise (the view turns them into messages).
Onboarding goes through :mod:`kit.lab.journeys`: the person half for the "Onboard persona"
step, the whole journey for the other customer of a P2P transfer.

Example::

    >>> flow = Flow(kit.connect("sim"))              # doctest: +SKIP
    >>> flow.create_session()                        # doctest: +SKIP
    'Anonymous session created (sliding, expires 2025-01-06T09:15:00Z)'
    >>> flow.state, flow.next_steps()                # doctest: +SKIP
    ('anonymous', ['create_account'])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import kit
from kit import notebook
from kit.errors import KitError, WebhookTimeout
from kit.lab import journeys
from kit.models import Card

__all__ = ["ACTIONS", "STATES", "Context", "Flow", "show_time"]

#: The session state machine of the wire contract, in promotion order.
STATES: tuple[str, ...] = ("anonymous", "account", "person")

#: The steps (button names) → their labels, in the order shown.
ACTIONS: dict[str, str] = {
    "create_session": "Create session",
    "create_account": "Create account",
    "promote_account": "Promote → account",
    "onboard": "Onboard persona",
    "promote_person": "Promote → person",
    "create_card": "Create card",
    "close_card": "Close card",
    "send_event": "Send event",
    "p2p": "P2P to other customer",
    "refresh": "Refresh",
}

_OTHER_DEVICE = {
    "device_id": "dev-explorer-other",
    "platform": "android",
    "model": "Pixel 8",
    "os_version": "14",
}


def show_time(value: Any) -> str:
    """A datetime as ISO 8601 with ``Z``; ``-`` for none."""
    if value is None:
        return "-"
    return str(value.isoformat()).replace("+00:00", "Z")


@dataclass
class Context:
    """What the explorer has created so far (seeded ids only; no PII, no tokens)."""

    account_id: str | None = None
    person_id: str | None = None
    kyc_status: str | None = None
    card: Card | None = None
    other_person_id: str | None = None
    last_transfer: str | None = None


@dataclass
class _Onboarding:
    """Follows the steps of :func:`kit.lab.journeys.add_person` into the context as they answer."""

    ctx: Context
    questions: int = 0
    answer: Any = field(default=None)

    def step(self, name: str, fn: Callable[[], Any], judge: Any = None) -> Any:
        value = fn()
        if name == "add_person":
            self.ctx.person_id, self.ctx.kyc_status = value.person_id, value.status
        elif name == "kyc_questions":
            self.questions = len(value.reveal())
        elif name == "kyc_answers":
            self.ctx.kyc_status, self.answer = value.status, value
        return value


class Flow:
    """One client's place in the journeys, and the steps that move it (see the module docstring).

    ``other`` is the other customer of a P2P transfer (a client with a person session); without
    it, one is onboarded on demand on a second device of the same profile (persona
    ``other_persona``: the simulator's, or the sandbox fixtures') and closed by
    :meth:`close`.
    """

    def __init__(
        self,
        api: kit.Client,
        *,
        other: kit.Client | None = None,
        other_persona: int = 1,
        webhook_wait: float = 3.0,
    ) -> None:
        self.api = api
        self.other = other
        self._made_other = False
        self.other_persona = other_persona
        self.webhook_wait = webhook_wait
        self.ctx = Context()
        #: Whether the API can reach the client's loopback webhook receiver (sim, or a local sandbox).
        self.receiver = api.webhooks.reachable

    # -- where it stands --------------------------------------------------------------------

    @property
    def state(self) -> str:
        """``"none"``, ``"anonymous"``, ``"account"`` or ``"person"``: the current session."""
        session = self.api.session
        return session.session_type if session is not None else "none"

    def next_steps(self) -> list[str]:
        """The steps that move the flow forward from here."""
        state, ctx = self.state, self.ctx
        if state == "none":
            return ["create_session"]
        if state == "anonymous":
            return ["promote_account"] if ctx.account_id else ["create_account"]
        if state == "account":
            return ["promote_person"] if ctx.kyc_status == "established" else ["onboard"]
        steps = ["create_card"]
        if ctx.card is not None and ctx.card.status == "active":
            steps.append("close_card")
        return [*steps, "send_event", "p2p"]

    def describe(self) -> list[str]:
        """The session and what was created, one line each."""
        ctx, session = self.ctx, self.api.session
        lines = []
        if session is not None:
            lines.append(
                f"session: {session.session_type} ({session.expiration_strategy}, "
                f"expires {show_time(session.expires_at)})"
            )
        if ctx.account_id:
            lines.append(f"account: {ctx.account_id}")
        if ctx.person_id:
            lines.append(f"person: {ctx.person_id} (KYC {ctx.kyc_status})")
        if ctx.card is not None:
            reason = f", reason {ctx.card.close_reason}" if ctx.card.close_reason else ""
            lines.append(f"card: {ctx.card.card_id}, type {ctx.card.type}, status {ctx.card.status}{reason}")
        if ctx.other_person_id:
            lines.append(f"other customer: {ctx.other_person_id}")
        if ctx.last_transfer:
            lines.append(f"last transfer: {ctx.last_transfer}")
        return lines

    # -- the steps --------------------------------------------------------------------------

    def _need(self, value: str | None, what: str) -> str:
        """``value``, or a :class:`KitError` naming the steps still missing on the way to
        ``what`` (a step of the road below), in order: the next one first."""
        if value is None:
            road = [  # each step, and whether it is done
                ("create a session", self.api.session is not None or self.ctx.account_id is not None),
                ("create an account", self.ctx.account_id is not None),
                ("onboard a persona", self.ctx.person_id is not None),
            ]
            steps = [step for step, _ in road]
            missing = [step for step, done in road[: steps.index(what) + 1] if not done]
            raise KitError(f"not yet: {', then '.join(missing or [what])} first")
        return value

    def listen(self) -> None:
        """Start the webhook receiver, when the API can reach it (:attr:`receiver`)."""
        if self.receiver:
            self.api.webhooks.listen()

    def create_session(self) -> str:
        info = self.api.sessions.create("anonymous", expiration="sliding")
        self.ctx = Context(other_person_id=self.ctx.other_person_id)
        return f"Anonymous session created ({info.expiration_strategy}, expires {show_time(info.expires_at)})"

    def create_account(self) -> str:
        account = self.api.accounts.create()
        self.ctx.account_id = account.account_id
        return f"Account {account.account_id} {account.status}, balance {account.balance}"

    def _promote(self, to: str, target: str | None, what: str) -> str:
        target_id = self._need(target, what)
        self.api.sessions.promote(to, **{f"{to}_id": target_id})
        return f"Session promoted to {to} ({target_id})"

    def promote_account(self) -> str:
        return self._promote("account", self.ctx.account_id, "create an account")

    def onboard(self, persona: str) -> str:
        """Add the test persona ``persona`` (a ``persona_id``: the simulator's, or the sandbox
        fixtures') and answer KYC rightly."""
        account_id = self._need(self.ctx.account_id, "create an account")
        seen = _Onboarding(self.ctx)
        done = journeys.add_person(self.api, account_id, persona=persona, step=seen.step)
        return (
            f"Person {done.person_id} from {persona} (PII sent encrypted); "
            f"{seen.questions} KYC questions answered: {seen.answer.status}"
        )

    def promote_person(self) -> str:
        return self._promote("person", self.ctx.person_id, "onboard a persona")

    def create_card(self, card_type: str) -> str:
        account_id = self._need(self.ctx.account_id, "create an account")
        card = self.api.cards.create(account_id, type=card_type)
        self.ctx.card = card
        made = f"type {card.type}, status {card.status}, expires on {card.expires_on}"
        return f"Card {card.card_id} created: {made}"

    def close_card(self, reason: str) -> str:
        """Close the card; wait (bounded) for its ``card.closed`` webhook when the receiver runs."""
        if self.ctx.card is None:
            raise KitError("no card yet — create a card first")
        card = self.api.cards.close(self.ctx.card.card_id, reason=reason)
        self.ctx.card = card
        message = f"Card {card.card_id} {card.status}, reason {card.close_reason}"
        if self.receiver:
            try:
                self.api.webhooks.wait_for(
                    "card.closed",
                    timeout=self.webhook_wait,
                    where=lambda e: e.data.get("card_id") == card.card_id,
                )
                message += "; card.closed webhook received"
            except WebhookTimeout:
                message += "; card.closed webhook not received yet (Refresh later)"
        return message

    def send_event(self, event_type: str) -> str:
        account_id = self._need(self.ctx.account_id, "create an account")
        event = self.api.events.send(account_id, event_type)
        return f"Inbound event {event.event_type} accepted as {event.event_id}"

    def p2p(self, amount: str) -> str:
        """Send ``amount`` (as typed: the server judges it) to the other customer."""
        account_id = self._need(self.ctx.account_id, "create an account")
        to = self.other_person()
        transfer = self.api.p2p.transfer(from_account_id=account_id, to_person_id=to, amount=amount)
        self.ctx.last_transfer = transfer.transfer_id
        return (
            f"P2P {transfer.transfer_id} {transfer.amount} to {to}: {transfer.status} "
            f"(this device is the {transfer.viewer_role})"
        )

    def refresh(self) -> str:
        return "Refreshed."

    def other_person(self) -> str:
        """The other customer's person id: the given client's person session, or a customer
        onboarded on demand (a second device, persona ``other_persona``)."""
        if self.ctx.other_person_id is not None:
            return self.ctx.other_person_id
        other = self.other
        if other is not None and other.session is not None and other.session.person_id:
            self.ctx.other_person_id = other.session.person_id
            return other.session.person_id
        if other is None:  # a second device of the same profile and server (sandbox: its credentials)
            config = self.api.config
            other = notebook.connect(config.profile, base_url=config.base_url, device=_OTHER_DEVICE)
            self.other, self._made_other = other, True
        done = journeys.onboard(other, persona=self.other_persona, expiration="sliding")
        if done.status != "established" or done.person_id is None:
            raise KitError(f"the other customer's onboarding ended {done.status}")
        self.ctx.other_person_id = done.person_id
        return done.person_id

    def close(self) -> None:
        """Close the other customer's client if this flow created it."""
        if self._made_other and self.other is not None:
            self.other.close()
