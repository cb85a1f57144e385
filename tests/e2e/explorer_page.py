"""The explorer widget of ``11_explorer`` in the browser: click its buttons as a person does and
read the state chips and the message line after each click.

The journey (:data:`JOURNEY`) is the whole flow of the notebook's diagram: session, account,
promotion, onboarding, promotion, a card, closing it with a reason, closing it again (the 409
message), an inbound event, P2P. Each step names what must be seen afterwards.

Example::

    >>> explorer = ExplorerWidget(page)                      # doctest: +SKIP
    >>> explorer.click("Create session")                     # doctest: +SKIP
    >>> explorer.state(), explorer.message()                 # doctest: +SKIP
    ('Anonymous', '✔ Anonymous session created (sliding, expires 2025-01-06T09:15:00Z)')
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from playwright.sync_api import Error, Locator, Page

CLICK_TIMEOUT_MS = 45_000  # onboarding a persona and the other customer of P2P take a few seconds


@dataclass(frozen=True)
class Step:
    """A button to click (after choosing ``picks``: dropdown label → option) and what follows."""

    button: str
    state: str  # the highlighted chip afterwards
    message: str  # a regular expression the message line must match
    picks: dict[str, str] = field(default_factory=dict)


JOURNEY: tuple[Step, ...] = (
    Step("Create session", "Anonymous", r"^✔ Anonymous session created \(sliding"),
    Step("Create account", "Anonymous", r"^✔ Account acc_\w+ open, balance \d+\.\d\d USD"),
    Step("Promote → account", "Account", r"^✔ Session promoted to account \(acc_\w+\)"),
    Step("Onboard persona", "Account", r"^✔ Person per_\w+ from persona-\d+ .*answered: established"),
    Step("Promote → person", "Person", r"^✔ Session promoted to person \(per_\w+\)"),
    Step("Create card", "Person", r"^✔ Card card_\w+ created: type temporary, status active"),
    Step("Close card", "Person", r"^✔ Card card_\w+ closed, reason stolen; card\.closed webhook received",
         picks={"reason": "stolen"}),
    Step("Close card", "Person", r"^✖ CardAlreadyClosed \(409 card-already-closed\)"),
    Step("Send event", "Person", r"^✔ Inbound event password\.forgot accepted as evt_\w+",
         picks={"event": "password.forgot"}),
    Step("P2P to other customer", "Person", r"^✔ P2P p2p_\w+ 12\.50 USD to per_\w+: completed"),
)  # fmt: skip
#: After this step the browser suite keeps a picture of the explorer mid-journey.
MID_JOURNEY = 8  # the card closed twice: the 409 message on screen


_ASKEW_HEADERS_JS = """root => {
    const table = root.querySelector('table');
    const row = table && table.querySelector('tbody tr');
    if (!row) return [];
    const heads = Array.from(table.querySelectorAll('thead th'));
    return heads.filter((th, i) => row.children[i]
        && getComputedStyle(th).textAlign !== getComputedStyle(row.children[i]).textAlign)
        .map(th => th.textContent);
}"""


class ExplorerWidget:
    """The live explorer (the ipywidgets ``VBox`` under "Partner API explorer")."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.root: Locator = page.locator(".jp-OutputArea-output .widget-vbox").filter(
            has=page.locator("h3", has_text="Partner API explorer")
        )

    def present(self, timeout_ms: float = 15_000) -> bool:
        try:
            self.root.first.wait_for(state="visible", timeout=timeout_ms)
        except Error:
            return False
        return True

    def state(self) -> str:
        current = self.root.locator('span[data-current="true"]')
        return current.inner_text().strip() if current.count() else "(none highlighted)"

    def layout_findings(self) -> list[str]:
        """What a reader cannot read: a cut label, table headers not over their columns."""
        cut = self.root.first.evaluate(
            "root => Array.from(root.querySelectorAll('.widget-label'))"
            ".filter(l => l.scrollWidth > l.clientWidth + 1).map(l => l.textContent)"
        )
        askew = self.root.first.evaluate(_ASKEW_HEADERS_JS)
        findings = [f"the explorer's label {label!r} is cut" for label in cut]
        if askew:
            findings.append(f"the explorer's call table: headers not aligned with their columns: {askew}")
        return findings

    def pick(self, label: str, option: str) -> None:
        dropdown = self.root.locator(".widget-dropdown").filter(
            has=self.page.locator(".widget-label", has_text=re.compile(f"^{re.escape(label)}$"))
        )
        dropdown.locator("select").select_option(option)

    def _message_line(self) -> Locator:
        return self.root.locator(".widget-html-content > div").filter(has_text=re.compile(r"^\s*[✔✖]"))

    def message(self) -> str:
        line = self._message_line()
        return " ".join(line.first.inner_text().split()) if line.count() else "(no message)"

    def click(self, button: str) -> None:
        """Click a button and wait for the kernel's answer: the widget redraws the message line
        (the old line leaves the DOM), within :data:`CLICK_TIMEOUT_MS`."""
        line = self._message_line()
        old = line.first.element_handle() if line.count() else None
        self.root.locator("button", has_text=re.compile(f"^{re.escape(button)}$")).click()
        if old is None:
            return
        with contextlib.suppress(Error):  # an unchanged message is what the step's finding reports
            self.page.wait_for_function("el => !el.isConnected", arg=old, timeout=CLICK_TIMEOUT_MS)


def walk(explorer: ExplorerWidget, after_step: Callable[[int], None] | None = None) -> list[str]:
    """Click through :data:`JOURNEY`, calling ``after_step(number)`` after each step; stop at the
    first step whose state or message is wrong.

    Returns the findings (empty when every step showed what it should).
    """
    for number, step in enumerate(JOURNEY, 1):
        for label, option in step.picks.items():
            explorer.pick(label, option)
        explorer.click(step.button)
        state, message = explorer.state(), explorer.message()
        if after_step is not None:
            after_step(number)
        if state != step.state or not re.search(step.message, message):
            return [
                f"explorer step {number} ({step.button!r}): expected state {step.state} and a message "
                f"matching {step.message!r}; the widget shows state {state} and {message!r}"
            ]
    return []
