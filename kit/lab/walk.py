"""A scripted walk through the whole journey, printed line by line (``kit walk``, ``make walk``).

Two customers (two devices) on the embedded simulator: partner token, init data, anonymous →
account → person sessions with onboarding and KYC (:func:`kit.lab.journeys.onboard`, narrated
step by step), a temporary card created and closed, an inbound event, a P2P transfer seen by
sender and receiver, the ``card.closed`` webhook received and verified, and a summary of the
call history.

The output is deterministic for a seed (ids are seeded, the clock is frozen) and holds no
secret: no token, no PII, no ciphertext, no port, no wall-clock time.

Example::

    $ kit walk
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import kit
from kit import register
from kit.errors import KitError
from kit.lab.journeys import onboard

__all__ = ["main", "walk"]

SEED = 7
DEVICES = (
    {"device_id": "dev-walk-a", "platform": "ios", "model": "iPhone 15", "os_version": "17.2"},
    {"device_id": "dev-walk-b", "platform": "android", "model": "Pixel 8", "os_version": "14"},
)


class _Narrator:
    """Numbers the lines of the walk and writes them to ``out``."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.count = 0

    def __call__(self, text: str) -> None:
        self.count += 1
        print(f"{self.count:>2}. {text}", file=self.out)

    def print(self, text: str) -> None:
        """An unnumbered line (the title, the history table)."""
        print(text, file=self.out)


#: What each onboarding step says, from its answer (``persona`` is the persona's id).
_SAYS: dict[str, Callable[[Any, str], str]] = {
    "anonymous_session": lambda info, _: (
        f"anonymous session ({info.expiration_strategy}, expires {info.expires_at:%H:%M}Z)"
    ),
    "create_account": lambda account, _: (
        f"account {account.account_id} {account.status}, balance {account.balance}"
    ),
    "account_session": lambda _, __: "session promoted to account",
    "add_person": lambda person, persona: (
        f"person {person.person_id} from {persona} (PII sent encrypted), status {person.status}"
    ),
    "kyc_questions": lambda questions, _: (
        f"{len(questions.reveal())} KYC questions received encrypted, decrypted in memory"
    ),
    "kyc_answers": lambda result, _: (
        f"KYC answers sent encrypted: {result.status}, attempts left {result.attempts_left}"
    ),
    "person_session": lambda info, _: f"session promoted to {info.session_type}",
}


def _onboard(api: kit.Client, who: str, persona_index: int, say: _Narrator) -> tuple[str, str]:
    """Onboard one customer, a line per step; returns its account and person ids."""
    persona = str(register.personas()[persona_index]["persona_id"])

    def step(name: str, fn: Callable[[], Any], judge: Any = None) -> Any:
        value = fn()
        say(f"{who}: {_SAYS[name](value, persona)}")
        return value

    done = onboard(api, persona=persona_index, expiration="sliding", step=step)
    if done.status != "established" or done.person_id is None:
        raise KitError(f"{who}'s onboarding ended {done.status}")
    return done.account_id, done.person_id


def _introduce(a: kit.Client, say: _Narrator) -> None:
    a.sim.reset(seed=SEED)
    health = a.sim.health()
    say.print(f"Partner API walk — sim profile, seed {SEED}, API {health.get('api_version')}")
    clock = a.sim.clock()
    say(f"connected two devices (customer A, customer B); simulator clock {clock:%Y-%m-%d %H:%M}Z")
    token = a.token()
    say(
        f"partner token: {token.token_type}, expires in {token.expires_in} s, "
        f"scope {token.scope} (value hidden)"
    )
    init = a.sessions.init_data()
    keys = ", ".join(f"{kid} ({alg})" for kid, alg in zip(init.kids, init.algorithms, strict=True))
    say(f"init data: keys {keys}; enc {', '.join(init.enc)}; nonce single-use (hidden)")


def _card_and_event(a: kit.Client, a_account: str, say: _Narrator) -> None:
    subscription = a.webhooks.listen()
    say(f"A: webhook receiver on loopback subscribed to {', '.join(subscription.events)}")
    card = a.cards.create(a_account, type="temporary")
    say(f"A: card {card.card_id} {card.type} {card.status}, expires on {card.expires_on}")
    closed = a.cards.close(card.card_id, reason="lost")
    say(f"A: card {closed.card_id} {closed.status}, reason {closed.close_reason}")
    event = a.events.send(a_account, "password.changed")
    say(f"A: inbound event {event.event_type} accepted as {event.event_id}")


def _transfer(
    a: kit.Client, b: kit.Client, a_account: str, b_account: str, b_person: str, say: _Narrator
) -> None:
    transfer = a.p2p.transfer(from_account_id=a_account, to_person_id=b_person, amount="12.50", memo="lunch")
    say(f"A→B: P2P {transfer.transfer_id} {transfer.amount} {transfer.status} (A is {transfer.viewer_role})")
    seen = b.p2p.get(transfer.transfer_id)
    say(f"B: sees {seen.transfer_id} {seen.amount}, memo {seen.memo!r} (B is {seen.viewer_role})")
    ledger = a.sim.ledger().set_index("account_id")["balance"]
    say(f"balances: A {ledger[a_account]} USD, B {ledger[b_account]} USD")


def _wrap_up(a: kit.Client, say: _Narrator) -> None:
    hook = a.webhooks.wait_for("card.closed", timeout=10)
    say(
        f"webhook {hook.type} {hook.id} for {hook.data.get('card_id')} received, "
        f"signature verified (ES256, kid {hook.kid})"
    )
    history = a.history
    say(f"history of A: {len(history)} calls, {int((history['status'] >= 400).sum())} errors")
    table = history[["method", "path", "status", "session_type", "retries"]].fillna("-")
    say.print(table.to_string(index=False))


def walk(out: TextIO) -> None:
    """Run the journey, writing one line per step to ``out``.

    Raises:
        KitError: a step failed (``main`` reports it).
    """
    say = _Narrator(out)
    a = kit.connect("sim", device=DEVICES[0], seed=SEED)
    b = kit.connect("sim", device=DEVICES[1], seed=SEED)
    try:
        _introduce(a, say)
        a_account, _ = _onboard(a, "A", 0, say)
        b_account, b_person = _onboard(b, "B", 1, say)
        _card_and_event(a, a_account, say)
        _transfer(a, b, a_account, b_account, b_person, say)
        _wrap_up(a, say)
    finally:
        a.close()
        b.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the walk on stdout; 0 on success, 1 when a step failed (the error is printed).

    ``argv`` is accepted for symmetry with the other commands; the walk takes no arguments.
    """
    try:
        walk(sys.stdout)
    except KitError as exc:
        print(f"walk failed: {type(exc).__name__}: {exc}", file=sys.stdout)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
