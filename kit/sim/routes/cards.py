"""Cards: create (physical, virtual, temporary), read, close with a reason (A13-A16, A35).

The partner token suffices; a session, when sent, must be bound to the card's account (A31,
spec rule 5), unless a choice overlay requires one (A63). Types, lifetimes, close reasons and
the fields sent are the simulator's personality's (``kit.sim.personality``). A card whose
expiry passes becomes ``expired`` and is sent as the deprecated ``card.expired`` (A38).
"""

from __future__ import annotations

import calendar
from datetime import UTC, datetime, time, timedelta

from starlette.requests import Request
from starlette.responses import Response

from kit import register
from kit.sim import versions
from kit.sim.bodies import CardClose, CardCreate
from kit.sim.call import Call, RouteReply
from kit.sim.openapi import declare
from kit.sim.pipeline import run
from kit.sim.problems import Problem
from kit.sim.records import Card
from kit.sim.representations import CardOut
from kit.sim.runtime import Sim
from kit.sim.table import Routes

router = Routes(tags=["cards"])
#: The register's own card types and close reasons (a simulator's own: ``sim.personality``).
CARD_TYPES: list[str] = register.value("A13")["types"]
CLOSE_REASONS: list[str] = register.value("A15")["reasons"]
_LIFETIME = register.value("A14")


def expires_on(
    issued: datetime,
    card_type: str,
    months: int = _LIFETIME["months"],
    temporary_days: int = _LIFETIME["temporary_days"],
) -> str:
    """Temporary: issue + 30 days; others: the last day of the month 36 months later (A14;
    the lifetimes are a simulator's personality's)."""
    if card_type == "temporary":
        return (issued.date() + timedelta(days=int(temporary_days))).isoformat()
    months = issued.year * 12 + issued.month - 1 + int(months)
    year, month = divmod(months, 12)
    return f"{year:04d}-{month + 1:02d}-{calendar.monthrange(year, month + 1)[1]:02d}"


def expiry_instant(expires_on_date: str) -> datetime:
    """A card expires at 00:00Z the day after ``expires_on``."""
    day = datetime.fromisoformat(expires_on_date).date() + timedelta(days=1)
    return datetime.combine(day, time(0), tzinfo=UTC)


def _card(call: Call, card: Card, status: int = 200) -> RouteReply:
    """A card answer: its representation (A35) with its expiry (A14), as the version serving
    the call shows it (A27: 1.1.0 has no close reason and no temporary type)."""
    call.uses("A14", "A35")
    return RouteReply(status, versions.shown_card(call.sim.show(CardOut, card), call.version))


@declare(
    router,
    "create_card",
    CardOut,
    status=201,
    takes=CardCreate,
    errors=(403, 404),
    summary="Issue a card on an account",
)
async def create_card(request: Request, account_id: str) -> Response:
    def handle(call: Call) -> RouteReply:
        call.require_rule5_session()
        account = call.bound_account(account_id)
        chosen = call.sim.personality
        served = versions.card_types(call.version)  # change 3
        types = [t for t in chosen.card_types if t in served]
        req = call.body_as(CardCreate, {"type": ("unknown-card-type", types)}, uses=("A13", "A35"))
        card_id = call.state.ids.next("card")
        last4 = f"{call.state.ids.rng('last4', card_id).randrange(10_000):04d}"
        on = expires_on(call.now, req.type, chosen.card_months, chosen.temporary_card_days)
        card = Card(
            card_id, call.partner, account.account_id, req.type, last4, on, expiry_instant(on), call.now
        )
        call.state.cards[card_id] = card
        return _card(call, card, 201)

    return await run(request, handle)


@declare(router, "get_card", CardOut, errors=(403, 404), summary="Read a card")
async def get_card(request: Request, card_id: str) -> Response:
    def handle(call: Call) -> RouteReply:
        call.require_rule5_session()
        card = call.find_card(card_id)
        call.bound_account(card.account_id)
        return _card(call, card)

    return await run(request, handle)


@declare(
    router,
    "close_card",
    CardOut,
    takes=CardClose,
    body_required=False,
    errors=(403, 404),
    summary=versions.close_summary(versions.CURRENT),
)
async def close_card(request: Request, card_id: str) -> Response:
    def handle(call: Call) -> RouteReply:
        call.require_rule5_session()
        card = call.find_card(card_id)
        call.bound_account(card.account_id)
        if versions.close_takes_reason(call.version):  # change 2
            reasons = call.sim.personality.close_reasons
            req = call.body_as(CardClose, {"reason": ("unknown-close-reason", reasons)}, uses=("A15",))
        else:
            call.body_as(versions.CardClosePrevious)  # 1.1.0: no reason (unknown-field)
            req = CardClose()
        if card.status == "closed":
            raise Problem(409, "card-already-closed", "The card is already closed.", assumptions=("A16",))
        if card.status != "active":
            raise Problem(
                409,
                "card-not-active",
                f"The card is {card.status}; only an active card can be closed.",
                assumptions=("A14", "A16"),
            )
        card.status, card.close_reason, card.closed_at = "closed", req.reason, call.now
        call.emit("card.closed", call.sim.show(CardOut, card))
        call.uses("A16")
        return _card(call, card)

    return await run(request, handle)


def expire_cards(sim: Sim) -> None:
    """Cards whose expiry has passed become ``expired`` and emit the deprecated card.expired
    (A14, A38): when the control plane moves the clock past it."""
    state = sim.state
    for card in state.cards.values():
        if card.status == "active" and state.now >= card.expires_at:
            card.status = "expired"
            state.cards[card.card_id] = card  # changed in place: a durable simulator writes it
            sim.emit(card.partner, "card.expired", sim.show(CardOut, card))
