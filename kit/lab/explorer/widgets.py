"""An ipywidgets explorer for one client (public name ``kit.widgets``): the session state
machine, one button per next step, the last calls and the webhooks received (ipywidgets 8,
JupyterLab).

:class:`Explorer` wraps a :class:`kit.Client`. Its buttons run the flows of the spec: create a
session, create an account, promote, onboard a persona (PII sent encrypted, KYC answered with
the simulator's test answers), create and close a card with a reason from the register (A15),
send one of the eight inbound events, and a P2P transfer to another customer (a client passed
in, or one onboarded on demand). Errors show as readable messages — the error's class, status,
problem code and hint — never a traceback.

The state machine — what step may come next, performing a step — is :class:`kit.lab.explorer.flow.Flow`;
this module is its view.

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
from collections.abc import Callable
from typing import Any

import ipywidgets as w
import pandas as pd

import kit
from kit import register
from kit.errors import KitError
from kit.lab.display import regression_run
from kit.lab.explorer.flow import ACTIONS, STATES, Context, Flow
from kit.lab.explorer.views import (
    HISTORY_COLUMNS,
    WEBHOOK_COLUMNS,
    error_message,
    frame_text,
    history_table,
    table_html,
    webhooks_table,
)

__all__ = [
    "ACTIONS",
    "CLOSED_MESSAGE",
    "HISTORY_COLUMNS",
    "STATES",
    "WEBHOOK_COLUMNS",
    "Explorer",
    "error_message",
    "explorer",
    "history_table",
    "webhooks_table",
]

_CURRENT_STYLE = "background:#1f6feb;color:white;font-weight:bold;border:2px solid #1f6feb"
_OTHER_STYLE = "background:#f6f8fa;color:#57606a;border:1px solid #d0d7de"
_CLOSED_STYLE = "background:#57606a;color:white;padding:4px 12px;border-radius:12px"

#: What a closed explorer says (its buttons are disabled).
CLOSED_MESSAGE = (
    "This explorer's client is closed: nothing more can be sent from it. "
    "Connect again (api = kit.connect(...)) and open a new explorer (kit.widgets.explorer(api))."
)


class Explorer:
    """An interactive explorer for one client (see the module docstring).

    Attributes: ``flow`` (the state machine, :class:`kit.lab.explorer.flow.Flow`), ``widget`` (the
    ipywidgets ``VBox``), ``buttons`` (name → Button), the pickers ``persona``, ``card_type``,
    ``reason``, ``event_type``, ``amount``, and the displays ``state_view``, ``message``,
    ``context_view``, ``history_view``, ``webhooks_view`` (HTML widgets; ``.value`` holds what
    is shown).

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
        webhook_rows: int | None = None,
        webhook_wait: float = 3.0,
    ) -> None:
        self.api = api
        self.flow = Flow(api, other=other, other_persona=other_persona, webhook_wait=webhook_wait)
        self.history_rows = history_rows
        self.webhook_rows = webhook_rows
        self.last_message = "Ready: create a session to start."
        self.last_ok = True
        self._closed = False

        people = _persona_ids(api)
        self.persona = w.Dropdown(options=people, value=people[persona % len(people)], description="persona")
        types = list(register.value("A13")["types"])
        self.card_type = w.Dropdown(options=types, value="temporary", description="card type")
        reasons = list(register.value("A15")["reasons"])
        self.reason = w.Dropdown(options=reasons, value=reasons[0], description="reason")
        events = list(register.fact("inbound_event_types"))
        self.event_type = w.Dropdown(options=events, value=events[0], description="event")
        self.amount = w.Text(value="12.50", description="amount USD", style={"description_width": "initial"})

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
        self.widget = self._layout()
        self._guard(self.flow.listen)
        self.refresh()

    def _layout(self) -> w.VBox:
        b = self.buttons
        return w.VBox(
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

    def __repr__(self) -> str:
        head = f"<Explorer state={self.state!r} device={self.api.device.device_id!r}"
        if self.closed:
            return f"{head} closed> — its client is closed: kit.connect(...) and open a new explorer"
        nxt = self.next_steps()
        return (
            f"{head}> — the widget shows in JupyterLab; here: explorer.text() prints what it shows, "
            f"explorer.click({nxt[0]!r}) runs a button (next: {', '.join(nxt)})"
        )

    # -- display ----------------------------------------------------------------------------

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The widget (when a frontend may render it) with the text summary as plain text:
        nbval compares ``text/plain`` and skips the widget view, whose ids are random."""
        bundle: dict[str, Any] = {}
        if not regression_run():
            data = self.widget._repr_mimebundle_()
            bundle.update(data if isinstance(data, dict) else {})
        bundle["text/plain"] = self.text()
        return bundle

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self._repr_mimebundle_(), raw=True)

    # -- the state machine's state ----------------------------------------------------------

    @property
    def state(self) -> str:
        """``"none"``, ``"anonymous"``, ``"account"`` or ``"person"``: the current session."""
        return self.flow.state

    @property
    def ctx(self) -> Context:
        """What the explorer has created so far (:class:`kit.lab.explorer.flow.Context`)."""
        return self.flow.ctx

    @property
    def other(self) -> kit.Client | None:
        """The other customer's client for P2P (given, or created on demand)."""
        return self.flow.other

    def next_steps(self) -> list[str]:
        """The buttons that move the flow forward from here (highlighted in the widget)."""
        return self.flow.next_steps()

    @property
    def closed(self) -> bool:
        """Whether the explorer's client is closed (the widget then shows itself closed)."""
        return self._closed or bool(getattr(self.api, "closed", False))

    def close(self, *, client: bool = False) -> None:
        """Close the other customer's client if the explorer created it; with ``client=True``
        close the explorer's own client too, and show the widget closed (greyed out, buttons
        disabled, a message saying so)."""
        self.flow.close()
        if client:
            self.api.close()
            self._closed = True
            self.refresh()

    # -- actions: each button runs a step of the flow with the pickers' values ----------------

    def click(self, action: str, **picks: str) -> str:
        """Run a button by name (what clicking it does) and return the message shown.

        ``picks`` set pickers first, by name (``persona``, ``card_type``, ``reason``,
        ``event_type``, ``amount``). A value a dropdown does not offer is added to its options,
        so that one the server may refuse can be tried (a close reason the register does not
        list, an event type off the spec's list), and the widget shows it picked.

        Example::

            >>> ex.click("close_card", reason="misplaced")       # doctest: +SKIP
            "UnknownCloseReason (422 unknown-close-reason): ..."

        Raises:
            KeyError: an unknown action (see :data:`ACTIONS`) or picker.
        """
        pickers = {
            "persona": self.persona,
            "card_type": self.card_type,
            "reason": self.reason,
            "event_type": self.event_type,
            "amount": self.amount,
        }
        for name, value in picks.items():
            picker = pickers[name]
            if isinstance(picker, w.Dropdown) and value not in picker.options:
                picker.options = [*picker.options, value]
            picker.value = value
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
        if self.closed:
            self.last_ok, self.last_message = False, CLOSED_MESSAGE
            return
        try:
            result = action()
        except RuntimeError as exc:  # httpx refuses to send on a closed client
            self._closed = "closed" in str(exc)
            self.last_ok, self.last_message = False, CLOSED_MESSAGE if self._closed else error_message(exc)
            return
        except Exception as exc:  # an explorer shows every failure as a message
            self.last_ok, self.last_message = False, error_message(exc)
            return
        if isinstance(result, str):
            self.last_ok, self.last_message = True, result

    def _do_create_session(self) -> str:
        return self.flow.create_session()

    def _do_create_account(self) -> str:
        return self.flow.create_account()

    def _do_promote_account(self) -> str:
        return self.flow.promote_account()

    def _do_onboard(self) -> str:
        return self.flow.onboard(str(self.persona.value))

    def _do_promote_person(self) -> str:
        return self.flow.promote_person()

    def _do_create_card(self) -> str:
        return self.flow.create_card(str(self.card_type.value))

    def _do_close_card(self) -> str:
        return self.flow.close_card(str(self.reason.value))

    def _do_send_event(self) -> str:
        return self.flow.send_event(str(self.event_type.value))

    def _do_p2p(self) -> str:
        return self.flow.p2p(str(self.amount.value).strip())

    def _do_refresh(self) -> str:
        return self.flow.refresh()

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
        if self.closed:
            none += f' <span data-closed="true" style="{_CLOSED_STYLE}">closed</span>'
        style = "margin:4px 0" + (";opacity:0.5" if self.closed else "")
        return f'<div style="{style}">' + " → ".join(cells) + none + "</div>"

    def refresh(self) -> None:
        """Redraw the state, the highlighted next steps, the message and both tables; a closed
        explorer greys out (every button and picker disabled)."""
        closed = self.closed
        steps = set() if closed else set(self.next_steps())
        for name, button in self.buttons.items():
            button.button_style = "primary" if name in steps else ""
            button.disabled = closed
        for picker in (self.persona, self.card_type, self.reason, self.event_type, self.amount):
            picker.disabled = closed
        if closed:
            self.last_ok, self.last_message = False, CLOSED_MESSAGE
        self.state_view.value = self._state_html()
        colour = "#1a7f37" if self.last_ok else "#cf222e"
        icon = "✔" if self.last_ok else "✖"
        self.message.value = (
            f'<div style="color:{colour};margin:6px 0">{icon} {html.escape(self.last_message)}</div>'
        )
        self.context_view.value = "<br>".join(html.escape(line) for line in self.flow.describe())
        self.history_view.value = table_html(history_table(self.api, self.history_rows), "no calls yet")
        try:
            hooks = self._last_webhooks()[0]
        except KitError as exc:
            hooks = pd.DataFrame(columns=WEBHOOK_COLUMNS)
            self.last_ok, self.last_message = False, error_message(exc)
        self.webhooks_view.value = table_html(hooks, "none received")

    def _last_webhooks(self) -> tuple[pd.DataFrame, int]:
        """The webhooks shown (the last ``webhook_rows``; all when ``None``) and how many arrived."""
        hooks = webhooks_table(self.api)
        shown = hooks if self.webhook_rows is None else hooks.tail(self.webhook_rows)
        return shown, len(hooks)

    def text(self) -> str:
        """A plain-text summary of what the widget shows (deterministic for a seed: seeded
        ids and simulator times only; no wall-clock times, durations, tokens or PII)."""
        marks = [f"[{s.title()}]" if s == self.state else s.title() for s in STATES]
        hooks, total = self._last_webhooks()
        shown = len(hooks)
        status = "ok" if self.last_ok else "error"
        profile = self.api.config.profile.name
        lines = [
            f"Partner API explorer — profile {profile}, device {self.api.device.device_id}",
            "state: "
            + " → ".join(marks)
            + (" (no session)" if self.state == "none" else "")
            + (" — closed" if self.closed else ""),
            "next steps: "
            + ("(none: closed)" if self.closed else ", ".join(ACTIONS[s] for s in self.next_steps())),
            f"last ({status}): {self.last_message}",
            *self.flow.describe(),
            f"last calls (of {len(history_table(self.api))} to the partner API):",
            frame_text(history_table(self.api, self.history_rows), "no calls yet"),
            f"webhooks received{'' if shown == total else f' (the last {shown} of {total})'}:",
            frame_text(hooks, "none received"),
        ]
        return "\n".join(lines)


def explorer(api: kit.Client, **options: Any) -> Explorer:
    """An :class:`Explorer` for ``api`` (options as for the class: ``other``, ``persona``,
    ``other_persona``, ``history_rows``, ``webhook_rows``, ``webhook_wait``).

    Example::

        >>> kit.widgets.explorer(kit.connect("sim"))       # doctest: +SKIP
    """
    return Explorer(api, **options)


def _persona_ids(api: kit.Client) -> list[str]:
    """The test personas to pick from, as the client's profile says (no PII)."""
    return api.personas.ids()
