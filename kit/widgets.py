"""An ipywidgets explorer for one client: the session state machine, one button per next step,
the last calls and the webhooks received (ipywidgets 8, JupyterLab).

:class:`Explorer` wraps a :class:`kit.Client`. Its buttons run the flows of the spec: create a
session, create an account, promote, onboard a persona (PII sent encrypted, KYC answered with
the simulator's test answers), create and close a card with a reason from the register (A15),
send one of the eight inbound events, and a P2P transfer to another customer (a client passed
in, or one onboarded on demand). Errors show as readable messages — the error's class, status,
problem code and hint — never a traceback.

Every button is also reachable by name (:meth:`Explorer.click`), and :meth:`Explorer.text`
gives a deterministic plain-text summary: what a headless run (nbval, ``KIT_REGRESS=1``) shows
instead of the widget.

Example::

    >>> import kit, kit.widgets
    >>> api = kit.connect("sim")                      # doctest: +SKIP
    >>> explorer = kit.widgets.explorer(api)          # doctest: +SKIP
    >>> explorer          # the widget in JupyterLab   # doctest: +SKIP
    >>> explorer.click("create_session")              # doctest: +SKIP
    'Anonymous session created (sliding, expires 2025-01-06T09:15:00Z)'
    >>> explorer.state                                # doctest: +SKIP
    'anonymous'
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ipywidgets as w
import pandas as pd

import kit
from kit import register
from kit.errors import ApiError, KitError, WebhookTimeout
from kit.models import Card
from kit.resources.cards import CARD_TYPES

__all__ = [
    "ACTIONS",
    "HISTORY_COLUMNS",
    "STATES",
    "WEBHOOK_COLUMNS",
    "Explorer",
    "error_message",
    "explorer",
    "history_table",
    "webhooks_table",
]

#: The session state machine of DESIGN §3.3, in promotion order.
STATES: tuple[str, ...] = ("anonymous", "account", "person")

#: Button names → labels, in the order shown.
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

#: History columns that do not vary between runs (no wall-clock time, no ms).
HISTORY_COLUMNS = ["method", "path", "status", "session_type", "code", "retries"]
#: Webhook columns shown (simulator times, seeded ids).
WEBHOOK_COLUMNS = ["type", "id", "resource_id", "created_at", "verified"]

_CURRENT_STYLE = "background:#1f6feb;color:white;font-weight:bold;border:2px solid #1f6feb"
_OTHER_STYLE = "background:#f6f8fa;color:#57606a;border:1px solid #d0d7de"
_OTHER_DEVICE = {
    "device_id": "dev-explorer-other",
    "platform": "android",
    "model": "Pixel 8",
    "os_version": "14",
}


def _headless() -> bool:
    """A regression run (``KIT_REGRESS=1``): show the text summary, not the widget."""
    return os.environ.get("KIT_REGRESS") == "1"


def history_table(api: kit.Client, last: int | None = None) -> pd.DataFrame:
    """``api.history`` reduced to :data:`HISTORY_COLUMNS`, typed for display.

    ``status`` and ``retries`` are nullable integers, ``method``, ``session_type`` and
    ``code`` categories; the rows are the last ``last`` calls (all when ``None``).

    Example::

        >>> history_table(api, last=5).dtypes["status"]          # doctest: +SKIP
        Int64Dtype()
    """
    frame = api.history
    frame = frame if last is None else frame.tail(last)
    table = frame.reindex(columns=HISTORY_COLUMNS).reset_index(drop=True)
    return table.astype(
        {
            "method": "category",
            "path": "string",
            "status": "Int64",
            "session_type": "category",
            "code": "category",
            "retries": "Int64",
        }
    )


def webhooks_table(api: kit.Client) -> pd.DataFrame:
    """Webhooks received by the sim profile's loopback receiver (:data:`WEBHOOK_COLUMNS`);
    empty outside the sim profile."""
    if api.config.profile != "sim":
        return pd.DataFrame(columns=WEBHOOK_COLUMNS)
    frame = api.webhooks.events.reindex(columns=WEBHOOK_COLUMNS).reset_index(drop=True)
    return frame.astype({"type": "category"})


def error_message(exc: BaseException) -> str:
    """One readable line for an error: class, status and code, what was wrong, what to do.

    Example::

        >>> from kit.errors import CardAlreadyClosed
        >>> error_message(CardAlreadyClosed(409, "card-already-closed", "Closed."))
        'CardAlreadyClosed (409 card-already-closed): Closed. — the card is closed already; nothing to do'
    """
    if isinstance(exc, ApiError):
        return f"{type(exc).__name__} ({exc.status} {exc.code}): {exc.message} — {exc.hint}"
    if isinstance(exc, KitError):
        return f"{type(exc).__name__}: {exc}"
    if isinstance(exc, (ValueError, TypeError)):
        return f"Invalid input ({type(exc).__name__}): {exc}"
    return f"Unexpected {type(exc).__name__}: {exc}"


def _table_html(frame: pd.DataFrame, empty: str) -> str:
    if frame.empty:
        return f"<p><i>{html.escape(empty)}</i></p>"
    return str(frame.to_html(index=False, na_rep="–", border=0))


@dataclass
class _Context:
    """What the explorer has created so far (seeded ids only; no PII, no tokens)."""

    account_id: str | None = None
    person_id: str | None = None
    kyc_status: str | None = None
    card: Card | None = None
    other_person_id: str | None = None
    last_transfer: str | None = None


class Explorer:
    """An interactive explorer for one client (see the module docstring).

    Attributes: ``widget`` (the ipywidgets ``VBox``), ``buttons`` (name → Button), the
    pickers ``persona``, ``card_type``, ``reason``, ``event_type``, ``amount``, and the
    displays ``state_view``, ``message``, ``context_view``, ``history_view``,
    ``webhooks_view`` (HTML widgets; ``.value`` holds what is shown).

    Example::

        >>> ex = Explorer(api)                            # doctest: +SKIP
        >>> ex.buttons["create_session"].click()          # doctest: +SKIP
        >>> ex.state, ex.next_steps()                     # doctest: +SKIP
        ('anonymous', ['create_account'])
    """

    def __init__(
        self,
        api: kit.Client,
        *,
        other: kit.Client | None = None,
        persona: int = 0,
        other_persona: int = 1,
        history_rows: int = 12,
        webhook_wait: float = 3.0,
    ) -> None:
        self.api = api
        self.other = other
        self._made_other = False
        self.other_persona = other_persona
        self.history_rows = history_rows
        self.webhook_wait = webhook_wait
        self.ctx = _Context()
        self.last_message = "Ready: create a session to start."
        self.last_ok = True
        self._sim = api.config.profile == "sim"

        people = [str(p["persona_id"]) for p in register.personas()]
        self.persona = w.Dropdown(options=people, value=people[persona % len(people)], description="persona")
        self.card_type = w.Dropdown(options=list(CARD_TYPES), value="temporary", description="card type")
        reasons = list(register.value("A15")["reasons"])
        self.reason = w.Dropdown(options=reasons, value=reasons[0], description="reason")
        events = list(register.spec()["inbound_event_types"])
        self.event_type = w.Dropdown(options=events, value=events[0], description="event")
        self.amount = w.Text(value="12.50", description="amount USD")

        self.buttons: dict[str, w.Button] = {}
        for name, label in ACTIONS.items():
            button = w.Button(description=label, layout=w.Layout(width="auto"))
            button.on_click(self._handler(name))
            self.buttons[name] = button
        self.state_view = w.HTML()
        self.message = w.HTML()
        self.context_view = w.HTML()
        self.history_view = w.HTML()
        self.webhooks_view = w.HTML()

        b = self.buttons
        self.widget = w.VBox(
            [
                w.HTML("<h3>Partner API explorer</h3>"),
                self.state_view,
                w.HBox([b["create_session"], b["create_account"], b["promote_account"]]),
                w.HBox([self.persona, b["onboard"], b["promote_person"]]),
                w.HBox([self.card_type, b["create_card"], self.reason, b["close_card"]]),
                w.HBox([self.event_type, b["send_event"]]),
                w.HBox([self.amount, b["p2p"], b["refresh"]]),
                self.message,
                self.context_view,
                w.HTML("<b>Last calls</b> (<code>api.history</code>)"),
                self.history_view,
                w.HTML("<b>Webhooks received</b>"),
                self.webhooks_view,
            ]
        )
        if self._sim:
            self._guard(lambda: self.api.webhooks.listen())
        self.refresh()

    def __repr__(self) -> str:
        return f"<Explorer state={self.state!r} device={self.api.device.device_id!r}>"

    # -- display ----------------------------------------------------------------------------

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The widget (when a frontend may render it) with the text summary as plain text:
        nbval compares ``text/plain`` and skips the widget view, whose ids are random."""
        bundle: dict[str, Any] = {}
        if not _headless():
            data = self.widget._repr_mimebundle_()
            bundle.update(data if isinstance(data, dict) else {})
        bundle["text/plain"] = self.text()
        return bundle

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self._repr_mimebundle_(), raw=True)

    # -- state ------------------------------------------------------------------------------

    @property
    def state(self) -> str:
        """``"none"``, ``"anonymous"``, ``"account"`` or ``"person"``: the current session."""
        session = self.api.session
        return session.session_type if session is not None else "none"

    def next_steps(self) -> list[str]:
        """The buttons that move the flow forward from here (highlighted in the widget)."""
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

    # -- actions ----------------------------------------------------------------------------

    def click(self, action: str) -> str:
        """Run a button by name (what clicking it does) and return the message shown.

        Raises:
            KeyError: an unknown action (see :data:`ACTIONS`).
        """
        self.buttons[action].click()
        return self.last_message

    def _handler(self, name: str) -> Callable[[w.Button], None]:
        action = getattr(self, f"_do_{name}")

        def on_click(_button: w.Button) -> None:
            self._guard(action)
            self.refresh()

        return on_click

    def _guard(self, action: Callable[[], Any]) -> None:
        """Run an action; any error becomes the message (no traceback reaches the output)."""
        try:
            result = action()
        except Exception as exc:  # an explorer shows every failure as a message
            self.last_ok, self.last_message = False, error_message(exc)
            return
        if isinstance(result, str):
            self.last_ok, self.last_message = True, result

    def _need(self, value: str | None, what: str) -> str:
        if value is None:
            raise KitError(f"no {what} yet — {what} first")
        return value

    def _do_create_session(self) -> str:
        info = self.api.sessions.create("anonymous", expiration="sliding")
        self.ctx = _Context(other_person_id=self.ctx.other_person_id)
        return (
            f"Anonymous session created ({info.expiration_strategy}, expires {_show_time(info.expires_at)})"
        )

    def _do_create_account(self) -> str:
        account = self.api.accounts.create()
        self.ctx.account_id = account.account_id
        return f"Account {account.account_id} {account.status}, balance {account.balance}"

    def _do_promote_account(self) -> str:
        account_id = self._need(self.ctx.account_id, "create an account")
        self.api.sessions.promote("account", account_id=account_id)
        return f"Session promoted to account ({account_id})"

    def _do_onboard(self) -> str:
        account_id = self._need(self.ctx.account_id, "create an account")
        if not self._sim:
            raise KitError("onboarding a persona needs the simulator's control plane (sim profile)")
        persona = self.api.sim.persona(str(self.persona.value))
        person = self.api.persons.create(account_id, **persona.pii)
        self.ctx.person_id, self.ctx.kyc_status = person.person_id, person.status
        questions = self.api.kyc.questions(person.person_id)
        count = len(questions.reveal())
        result = self.api.kyc.answer(person.person_id, self.api.sim.kyc_answers(person.person_id))
        self.ctx.kyc_status = result.status
        return (
            f"Person {person.person_id} from {persona.persona_id} (PII sent encrypted); "
            f"{count} KYC questions answered: {result.status}"
        )

    def _do_promote_person(self) -> str:
        person_id = self._need(self.ctx.person_id, "onboard a persona")
        self.api.sessions.promote("person", person_id=person_id)
        return f"Session promoted to person ({person_id})"

    def _do_create_card(self) -> str:
        account_id = self._need(self.ctx.account_id, "create an account")
        card = self.api.cards.create(account_id, type=str(self.card_type.value))
        self.ctx.card = card
        return f"Card {card.card_id} {card.type} {card.status}, expires on {card.expires_on}"

    def _do_close_card(self) -> str:
        if self.ctx.card is None:
            raise KitError("no card yet — create a card first")
        card = self.api.cards.close(self.ctx.card.card_id, reason=str(self.reason.value))
        self.ctx.card = card
        message = f"Card {card.card_id} {card.status}, reason {card.close_reason}"
        if self._sim:
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

    def _do_send_event(self) -> str:
        account_id = self._need(self.ctx.account_id, "create an account")
        event = self.api.events.send(account_id, str(self.event_type.value))
        return f"Inbound event {event.event_type} accepted as {event.event_id}"

    def _do_p2p(self) -> str:
        account_id = self._need(self.ctx.account_id, "create an account")
        to = self._other_person()
        amount = str(self.amount.value).strip()  # sent as typed: the server judges it
        transfer = self.api.p2p.transfer(from_account_id=account_id, to_person_id=to, amount=amount)
        self.ctx.last_transfer = transfer.transfer_id
        return (
            f"P2P {transfer.transfer_id} {transfer.amount} to {to}: {transfer.status} "
            f"(this device is the {transfer.viewer_role})"
        )

    def _do_refresh(self) -> str:
        return "Refreshed."

    def _other_person(self) -> str:
        """The other customer's person id: the given client's person session, or a customer
        onboarded on demand (a second device, persona ``other_persona``)."""
        if self.ctx.other_person_id is not None:
            return self.ctx.other_person_id
        other = self.other
        if other is not None and other.session is not None and other.session.person_id:
            self.ctx.other_person_id = other.session.person_id
            return other.session.person_id
        if not self._sim:
            raise KitError("pass other=<a client with a person session> to send P2P outside the sim profile")
        if other is None:
            other = kit.connect("sim", base_url=self.api.config.base_url, device=_OTHER_DEVICE)
            self.other, self._made_other = other, True
        other.sessions.create("anonymous")
        account = other.accounts.create()
        other.sessions.promote("account", account_id=account.account_id)
        person = other.persons.create(account.account_id, **other.sim.persona(self.other_persona).pii)
        other.kyc.answer(person.person_id, other.sim.kyc_answers(person.person_id))
        other.sessions.promote("person", person_id=person.person_id)
        self.ctx.other_person_id = person.person_id
        return person.person_id

    def close(self) -> None:
        """Close the other customer's client if the explorer created it."""
        if self._made_other and self.other is not None:
            self.other.close()

    # -- views ------------------------------------------------------------------------------

    def _state_html(self) -> str:
        current, cells = self.state, []
        for state in STATES:
            style = _CURRENT_STYLE if state == current else _OTHER_STYLE
            mark = ' data-current="true"' if state == current else ""
            cells.append(
                f'<span{mark} style="{style};padding:4px 12px;border-radius:12px">{state.title()}</span>'
            )
        none = "" if current != "none" else " <i>(no session)</i>"
        return '<div style="margin:4px 0">' + " → ".join(cells) + none + "</div>"

    def _context_lines(self) -> list[str]:
        ctx, session = self.ctx, self.api.session
        lines = []
        if session is not None:
            lines.append(
                f"session: {session.session_type} ({session.expiration_strategy}, "
                f"expires {_show_time(session.expires_at)})"
            )
        if ctx.account_id:
            lines.append(f"account: {ctx.account_id}")
        if ctx.person_id:
            lines.append(f"person: {ctx.person_id} (KYC {ctx.kyc_status})")
        if ctx.card is not None:
            reason = f", reason {ctx.card.close_reason}" if ctx.card.close_reason else ""
            lines.append(f"card: {ctx.card.card_id} {ctx.card.type} {ctx.card.status}{reason}")
        if ctx.other_person_id:
            lines.append(f"other customer: {ctx.other_person_id}")
        if ctx.last_transfer:
            lines.append(f"last transfer: {ctx.last_transfer}")
        return lines

    def refresh(self) -> None:
        """Redraw the state, the highlighted next steps, the message and both tables."""
        steps = set(self.next_steps())
        for name, button in self.buttons.items():
            button.button_style = "primary" if name in steps else ""
        self.state_view.value = self._state_html()
        colour = "#1a7f37" if self.last_ok else "#cf222e"
        icon = "✔" if self.last_ok else "✖"
        self.message.value = (
            f'<div style="color:{colour};margin:6px 0">{icon} {html.escape(self.last_message)}</div>'
        )
        self.context_view.value = "<br>".join(html.escape(line) for line in self._context_lines())
        self.history_view.value = _table_html(history_table(self.api, self.history_rows), "no calls yet")
        try:
            hooks = webhooks_table(self.api)
        except KitError as exc:
            hooks = pd.DataFrame(columns=WEBHOOK_COLUMNS)
            self.last_ok, self.last_message = False, error_message(exc)
        self.webhooks_view.value = _table_html(hooks, "none received")

    def text(self) -> str:
        """A plain-text summary of what the widget shows (deterministic for a seed: seeded
        ids and simulator times only; no wall-clock times, durations, tokens or PII)."""
        marks = [f"[{s.title()}]" if s == self.state else s.title() for s in STATES]
        status = "ok" if self.last_ok else "error"
        lines = [
            f"Partner API explorer — profile {self.api.config.profile}, device {self.api.device.device_id}",
            "state: " + " → ".join(marks) + (" (no session)" if self.state == "none" else ""),
            "next steps: " + ", ".join(ACTIONS[s] for s in self.next_steps()),
            f"last ({status}): {self.last_message}",
            *self._context_lines(),
            f"last calls (of {len(self.api.history)}):",
            _frame_text(history_table(self.api, self.history_rows), "no calls yet"),
            "webhooks received:",
            _frame_text(webhooks_table(self.api) if self._sim else pd.DataFrame(), "none received"),
        ]
        return "\n".join(lines)


def _frame_text(frame: pd.DataFrame, empty: str) -> str:
    return f"  ({empty})" if frame.empty else frame.to_string(index=False, na_rep="-")


def _show_time(value: Any) -> str:
    if value is None:
        return "-"
    return str(value.isoformat()).replace("+00:00", "Z")


def explorer(api: kit.Client, **options: Any) -> Explorer:
    """An :class:`Explorer` for ``api`` (options as for the class: ``other``, ``persona``,
    ``other_persona``, ``history_rows``, ``webhook_wait``).

    Example::

        >>> kit.widgets.explorer(kit.connect("sim"))       # doctest: +SKIP
    """
    return Explorer(api, **options)
