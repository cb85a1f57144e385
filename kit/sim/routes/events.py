"""Inbound account events from the spec's allowed list (A17, A31)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from kit import register
from kit.sim import versions
from kit.sim.bodies import EventCreate
from kit.sim.call import Call, RouteReply
from kit.sim.clock import format_time, parse_time
from kit.sim.openapi import declare
from kit.sim.pipeline import run
from kit.sim.problems import validation_problem
from kit.sim.records import InboundEvent
from kit.sim.representations import EventOut
from kit.sim.schema import Enums
from kit.sim.table import Routes

router = Routes(tags=["inbound events"])
EVENT_TYPES: list[str] = register.fact("inbound_event_types")


@declare(
    router,
    "send_event",
    EventOut,
    status=202,
    takes=EventCreate,
    errors=(403, 404),
    summary="Send an inbound account event (one of the eight allowed types)",
)
async def send_event(request: Request, account_id: str) -> Response:
    def handle(call: Call) -> RouteReply:
        call.require_rule5_session()
        account = call.bound_account(account_id)
        allowed = versions.inbound_event_types(call.version)  # change 4
        enums: Enums = {"event_type": ("unknown-event-type", allowed)} if allowed is not None else {}
        req = call.body_as(EventCreate, enums, uses=("A17",))
        if not req.event_type:  # 1.1.0 takes any type, but one
            raise validation_problem([{"field": "/event_type", "message": "must not be empty"}])
        occurred_at = None
        if req.occurred_at is not None:
            try:
                occurred_at = format_time(parse_time(req.occurred_at))
            except (ValueError, OverflowError):
                raise validation_problem(
                    [{"field": "/occurred_at", "message": "must be an RFC 3339 time with a zone"}]
                ) from None
        event = InboundEvent(
            call.state.ids.next("evt"),
            call.partner,
            account.account_id,
            req.event_type,
            occurred_at,
            call.now,
        )
        call.state.inbound_events[event.event_id] = event
        return RouteReply(202, call.sim.show(EventOut, event))

    return await run(request, handle)
