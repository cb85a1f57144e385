"""Cards: create (physical, virtual, temporary), read, close with a reason (A13-A16).

The partner token suffices; a session, when sent, must be bound to the card's account (A31,
spec rule 5).
"""

from __future__ import annotations

import calendar
from datetime import UTC, datetime, time, timedelta

from fastapi import APIRouter, Request, Response

from kit import register
from kit.sim.fastpath import PlainRoute
from kit.sim.models import CardClose, CardCreate, CardOut
from kit.sim.openapi import body, problems
from kit.sim.pipeline import Call, Reply, run
from kit.sim.problems import Problem
from kit.sim.routes.common import card_out
from kit.sim.runtime import Sim
from kit.sim.state import Card

router = APIRouter(tags=["cards"], route_class=PlainRoute)
CARD_TYPES: list[str] = register.value("A13")["types"]
_LIFETIME = register.value("A14")
CLOSE_REASONS: list[str] = register.value("A15")["reasons"]
_ASSUMED = ("A13", "A14", "A16", "A31")


def expires_on(issued: datetime, card_type: str) -> str:
    """Temporary: issue + 30 days; others: the last day of the month 36 months later (A14)."""
    if card_type == "temporary":
        return (issued.date() + timedelta(days=int(_LIFETIME["temporary_days"]))).isoformat()
    months = issued.year * 12 + issued.month - 1 + int(_LIFETIME["months"])
    year, month = divmod(months, 12)
    return f"{year:04d}-{month + 1:02d}-{calendar.monthrange(year, month + 1)[1]:02d}"


def expiry_instant(expires_on_date: str) -> datetime:
    """A card expires at 00:00Z the day after ``expires_on``."""
    day = datetime.fromisoformat(expires_on_date).date() + timedelta(days=1)
    return datetime.combine(day, time(0), tzinfo=UTC)


@router.post(
    "/accounts/{account_id}/cards",
    status_code=201,
    response_model=CardOut,
    responses=problems(400, 401, 403, 404, 413, 415, 422),
    openapi_extra=body(CardCreate),
    summary="Issue a card on an account",
)
async def create_card(request: Request, account_id: str) -> Response:
    def handle(call: Call) -> Reply:
        account = call.find_account(account_id)
        call.require_bound_to_account(account)
        call.reject_clear_pii()
        req = call.parse(CardCreate, {"type": ("unknown-card-type", CARD_TYPES)})
        card_id = call.state.ids.next("card")
        last4 = f"{call.state.ids.rng('last4', card_id).randrange(10_000):04d}"
        on = expires_on(call.now, req.type)
        card = Card(
            card_id, call.partner, account.account_id, req.type, last4, on, expiry_instant(on), call.now
        )
        call.state.cards[card_id] = card
        return Reply(201, card_out(card))

    return await run(request, handle, assumptions=_ASSUMED)


@router.get(
    "/cards/{card_id}",
    response_model=CardOut,
    responses=problems(401, 403, 404),
    summary="Read a card",
)
async def get_card(request: Request, card_id: str) -> Response:
    def handle(call: Call) -> Reply:
        card = call.find_card(card_id)
        call.require_bound_to_account(call.find_account(card.account_id))
        return Reply(200, card_out(card))

    return await run(request, handle, assumptions=_ASSUMED)


@router.post(
    "/cards/{card_id}/close",
    response_model=CardOut,
    responses=problems(400, 401, 403, 404, 409, 413, 415, 422),
    openapi_extra=body(CardClose, required=False),
    summary="Close a card, optionally with a reason (1.2.0); emits card.closed",
)
async def close_card(request: Request, card_id: str) -> Response:
    def handle(call: Call) -> Reply:
        card = call.find_card(card_id)
        call.require_bound_to_account(call.find_account(card.account_id))
        call.reject_clear_pii()
        req = call.parse(CardClose, {"reason": ("unknown-close-reason", CLOSE_REASONS)})
        if card.status == "closed":
            raise Problem(409, "card-already-closed", "The card is already closed.")
        if card.status != "active":
            raise Problem(
                409, "card-not-active", f"The card is {card.status}; only an active card can be closed."
            )
        card.status, card.close_reason, card.closed_at = "closed", req.reason, call.now
        call.emit("card.closed", card_out(card))
        return Reply(200, card_out(card))

    return await run(request, handle, assumptions=(*_ASSUMED, "A15"))


def expire_cards(sim: Sim) -> None:
    """Cards whose expiry has passed become ``expired`` and emit the deprecated card.expired."""
    state = sim.state
    for card in state.cards.values():
        if card.status == "active" and state.now >= card.expires_at:
            card.status = "expired"
            sim.emit(card.partner, "card.expired", card_out(card))
