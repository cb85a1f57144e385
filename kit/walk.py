"""A scripted walk through the whole journey, printed line by line (``make run``).

Two customers (two devices) on the embedded simulator: partner token, init data, anonymous →
account → person sessions with onboarding and KYC, a temporary card created and closed, an
inbound event, a P2P transfer seen by sender and receiver, the ``card.closed`` webhook
received and verified, and a summary of the call history.

The output is deterministic for a seed (ids are seeded, the clock is frozen) and holds no
secret: no token, no PII, no ciphertext, no port, no wall-clock time.

Example::

    $ python -m kit.walk
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

import kit
from kit.errors import KitError

__all__ = ["main"]

SEED = 7
DEVICES = (
    {"device_id": "dev-walk-a", "platform": "ios", "model": "iPhone 15", "os_version": "17.2"},
    {"device_id": "dev-walk-b", "platform": "android", "model": "Pixel 8", "os_version": "14"},
)


def _onboard(api: kit.Client, who: str, persona_index: int, say: Callable[[str], None]) -> tuple[str, str]:
    info = api.sessions.create("anonymous", expiration="sliding")
    say(f"{who}: anonymous session ({info.expiration_strategy}, expires {info.expires_at:%H:%M}Z)")
    account = api.accounts.create()
    say(f"{who}: account {account.account_id} {account.status}, balance {account.balance}")
    api.sessions.promote("account", account_id=account.account_id)
    say(f"{who}: session promoted to account")
    persona = api.sim.persona(persona_index)
    person = api.persons.create(account.account_id, **persona.pii)
    say(
        f"{who}: person {person.person_id} from {persona.persona_id} "
        f"(PII sent encrypted), status {person.status}"
    )
    questions = api.kyc.questions(person.person_id)
    say(f"{who}: {len(questions.reveal())} KYC questions received encrypted, decrypted in memory")
    result = api.kyc.answer(person.person_id, api.sim.kyc_answers(person.person_id))
    say(f"{who}: KYC answers sent encrypted: {result.status}, attempts left {result.attempts_left}")
    info = api.sessions.promote("person", person_id=person.person_id)
    say(f"{who}: session promoted to {info.session_type}")
    return account.account_id, person.person_id


def walk(out: TextIO) -> None:
    """Run the journey, writing one line per step to ``out``.

    Raises:
        KitError: a step failed (``main`` reports it).
    """
    step = 0

    def say(text: str) -> None:
        nonlocal step
        step += 1
        print(f"{step:>2}. {text}", file=out)

    a = kit.connect("sim", device=DEVICES[0], seed=SEED)
    b = kit.connect("sim", device=DEVICES[1], seed=SEED)
    try:
        a.sim.reset(seed=SEED)
        health = a.sim.health()
        print(f"Partner API walk — sim profile, seed {SEED}, API {health.get('api_version')}", file=out)
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

        a_account, _ = _onboard(a, "A", 0, say)
        b_account, b_person = _onboard(b, "B", 1, say)

        subscription = a.webhooks.listen()
        say(f"A: webhook receiver on loopback subscribed to {', '.join(subscription.events)}")
        card = a.cards.create(a_account, type="temporary")
        say(f"A: card {card.card_id} {card.type} {card.status}, expires on {card.expires_on}")
        closed = a.cards.close(card.card_id, reason="lost")
        say(f"A: card {closed.card_id} {closed.status}, reason {closed.close_reason}")

        event = a.events.send(a_account, "password.changed")
        say(f"A: inbound event {event.event_type} accepted as {event.event_id}")

        transfer = a.p2p.transfer(
            from_account_id=a_account, to_person_id=b_person, amount="12.50", memo="lunch"
        )
        say(
            f"A→B: P2P {transfer.transfer_id} {transfer.amount} {transfer.status} "
            f"(A is {transfer.viewer_role})"
        )
        seen = b.p2p.get(transfer.transfer_id)
        say(f"B: sees {seen.transfer_id} {seen.amount}, memo {seen.memo!r} (B is {seen.viewer_role})")
        ledger = a.sim.ledger().set_index("account_id")["balance"]
        say(f"balances: A {ledger[a_account]} USD, B {ledger[b_account]} USD")

        hook = a.webhooks.wait_for("card.closed", timeout=10)
        say(
            f"webhook {hook.type} {hook.id} for {hook.data.get('card_id')} received, "
            f"signature verified (ES256, kid {hook.kid})"
        )

        history = a.history
        say(f"history of A: {len(history)} calls, {int((history['status'] >= 400).sum())} errors")
        table = history[["method", "path", "status", "session_type", "retries"]].fillna("-")
        print(table.to_string(index=False), file=out)
    finally:
        a.close()
        b.close()


def main() -> int:
    """Run the walk on stdout; 0 on success, 1 when a step failed (the error is printed)."""
    try:
        walk(sys.stdout)
    except KitError as exc:
        print(f"walk failed: {type(exc).__name__}: {exc}", file=sys.stdout)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
