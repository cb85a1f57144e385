"""The simulator's control plane, ``/_sim/…``. Not part of the partner API.

No partner token; a control token (``svc-control-token``) when one was set at start.
"""

from __future__ import annotations

import hmac
from decimal import Decimal
from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse

from kit import _env as env
from kit import register
from kit._headers import CONTROL_TOKEN
from kit.sim.bodies import AdvanceIn, FaultIn, FundIn, ResetIn
from kit.sim.clock import format_time
from kit.sim.headers import STATE_VERSION
from kit.sim.models import money
from kit.sim.pipeline import read_body, read_json
from kit.sim.problems import Problem, not_found, validation_problem
from kit.sim.records import DocumentRequest
from kit.sim.representations import DocumentRequestOut, TransferOut
from kit.sim.routes import served
from kit.sim.routes.p2p import parse_amount
from kit.sim.runtime import Sim
from kit.sim.schema import M, parse_model
from kit.sim.state import Fault
from kit.sim.timeflow import clock_moved

CONTROL_TOKEN_HEADER = CONTROL_TOKEN
#: The bounds of a state (A71): the clock stops short of this year, a balance of this amount.
CLOCK_LIMIT_YEAR = int(register.value("A71")["clock_before_year"])
MAX_BALANCE = Decimal(register.value("A71")["money_limit"])


async def _control_token(request: Request) -> None:
    expected = request.app.state.sim.settings.control_token
    if expected is None:
        return
    given = request.headers.get(CONTROL_TOKEN_HEADER, "")
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise Problem(
            401, "invalid-control-token", f"The control plane needs a valid {CONTROL_TOKEN_HEADER}."
        )


router = APIRouter(prefix="/_sim", tags=["simulator control plane"], dependencies=[Depends(_control_token)])


def _sim(request: Request) -> Sim:
    return request.app.state.sim


async def _body(request: Request, model: type[M]) -> M:
    return parse_model(await read_json(request), model)


@router.get("/health")
async def health(request: Request) -> dict[str, Any]:
    """Up, the API version, and each store's size, bound and records forgotten (A59)."""
    sim = _sim(request)
    return {"status": "ok", "api_version": sim.version, "stores": sim.state.stores()}


@router.post("/reset")
async def reset(request: Request) -> dict[str, Any]:
    sim = _sim(request)
    req = await _body(request, ResetIn)
    sim.reset(sim.state.seed if req.seed is None else req.seed)
    return {"seed": sim.state.seed, "now": format_time(sim.state.now)}


@router.get("/clock")
async def clock(request: Request) -> dict[str, str]:
    return {"now": format_time(_sim(request).state.now)}


@router.post("/clock/advance")
async def advance(request: Request) -> dict[str, str]:
    sim = _sim(request)
    req = await _body(request, AdvanceIn)
    # Times derived from "now" (card expiry 36 months on, token and session lifetimes) must
    # stay representable: the clock stops short of the year 9000.
    if sim.state.clock.after(req.seconds).year >= CLOCK_LIMIT_YEAR:
        raise validation_problem(
            [{"field": "/seconds", "message": f"would move the clock past the year {CLOCK_LIMIT_YEAR}"}]
        )
    await sim.delivery.settle()
    sim.state.clock.advance(req.seconds)
    await clock_moved(sim)
    return {"now": format_time(sim.state.now)}


@router.get("/personas")
async def personas() -> dict[str, Any]:
    return {"personas": register.personas()}


@router.get("/persons/{person_id}/kyc_answers")
async def kyc_answers(request: Request, person_id: str) -> dict[str, Any]:
    person = _sim(request).state.persons.get(person_id)
    if person is None:
        raise not_found("person")
    return {"answers": [{"question_id": q, "choice": c} for q, c in person.answers.items()]}


@router.post("/persons/{person_id}/document_requests", status_code=201)
async def create_document_request(request: Request, person_id: str) -> dict[str, Any]:
    sim = _sim(request)
    state = sim.state
    person = state.persons.get(person_id)
    if person is None:
        raise not_found("person")
    doc = DocumentRequest(
        state.ids.next("doc"),
        person.partner,
        person.person_id,
        person.account_id,
        "proof_of_address",
        state.now,
    )
    state.document_requests[doc.document_request_id] = doc
    sim.emit(person.partner, "document_request.created", sim.show(DocumentRequestOut, doc))
    return sim.show(DocumentRequestOut, doc)


@router.post("/accounts/{account_id}/fund")
async def fund(request: Request, account_id: str) -> dict[str, Any]:
    state = _sim(request).state
    account = state.accounts.get(account_id)
    if account is None:
        raise not_found("account")
    amount, _ = parse_amount((await _body(request, FundIn)).amount)
    if account.balance + amount >= MAX_BALANCE:
        # Balances beyond Decimal's 28 digits would be rounded and could not be shown (a 5xx).
        raise Problem(
            422,
            "invalid-amount",
            f"A balance may not reach {MAX_BALANCE:,} USD; fund a smaller amount.",
            errors=[{"field": "/amount/value", "message": "the resulting balance is too large"}],
        )
    account.balance += amount
    return {"account_id": account.account_id, "balance": money(account.balance)}


#: The route modules whose operations do not take the order of checks, where a fault is drawn
#: (step 4, ``kit.sim.pipeline``): the token endpoints and the removed paths.
_UNCHECKED = frozenset({"oauth", "removed"})


@router.post("/faults", status_code=201)
async def add_fault(request: Request) -> dict[str, str]:
    """A fault on a method and path template a partner operation of this simulator is served at
    (its personality's paths: a dialect's moved ones), past the partner token; on any other it
    would never fire, so it is refused (422 ``operation-not-served``) and nothing is added."""
    sim = _sim(request)
    state = sim.state
    req = await _body(request, FaultIn)
    method = req.method.upper()
    if (method, req.path) not in served(sim.personality.paths(), without=_UNCHECKED):
        raise Problem(
            422,
            "operation-not-served",
            "No partner operation of this simulator is served at this method and path, so the "
            "fault would never fire. Name a path template as this simulator serves it (see "
            "/openapi.json).",
            errors=[{"field": "/path", "message": "no operation of this simulator is served here"}],
            assumptions=("A45",),
        )
    fault = Fault(
        state.ids.next("flt"),
        method,
        req.path,
        req.status,
        req.rate,
        req.times,
        req.when,
        req.retry_after,
        req.latency_ms,
    )
    state.faults[fault.fault_id] = fault
    return {"fault_id": fault.fault_id}


@router.get("/faults")
async def list_faults(request: Request) -> dict[str, Any]:
    return {"faults": [vars(f) for f in _sim(request).state.faults.values()]}


@router.delete("/faults", status_code=204)
async def clear_faults(request: Request) -> Response:
    _sim(request).state.faults.clear()
    return Response(status_code=204)


@router.get("/webhooks/deliveries")
async def deliveries(request: Request) -> dict[str, Any]:
    sim = _sim(request)
    # Attempts in flight finish first (each bounded by the delivery time-out), so a receiver
    # that has just seen an event also sees its attempt recorded here.
    await sim.delivery.settle()
    state = sim.state
    return {
        "deliveries": [
            {
                "event_id": d.event_id,
                "type": d.event_type,
                "subscription_id": d.subscription_id,
                "status": d.status,
                "next_attempt_at": format_time(d.next_at) if d.next_at and d.status == "pending" else None,
                "attempts": [
                    {"at": format_time(a.at), "status_code": a.status_code, "error": a.error}
                    for a in d.attempts
                ],
            }
            for d in state.deliveries.values()
        ]
    }


_SNAPSHOT = env.SNAPSHOT_MEDIA_TYPE
#: What a restore body may be sent as (A71): a snapshot's own type, or bytes of no stated kind.
RESTORE_MEDIA_TYPES = frozenset({_SNAPSHOT, "application/octet-stream"})


@router.get(
    "/snapshot",
    response_class=Response,
    responses={200: {"description": "A kit state snapshot (SQLite)", "content": {_SNAPSHOT: {}}}},
)
async def snapshot(request: Request) -> Response:
    """The whole state as a snapshot: a SQLite database (``kit.sim.statefile``). It holds no
    client secret and no usable token (digests only, ``kit.sim.atrest``), but it does hold what
    the simulator knows of its customers: share it as you would the server itself."""
    from kit.sim.statefile import MEDIA_TYPE, VERSION

    return Response(
        _sim(request).snapshot(),
        media_type=MEDIA_TYPE,
        headers={STATE_VERSION: str(VERSION), "Cache-Control": "no-store"},
    )


@router.post(
    "/restore",
    openapi_extra={
        "requestBody": {"required": True, "content": {media: {} for media in sorted(RESTORE_MEDIA_TYPES)}}
    },
    responses={
        400: {"description": "snapshot-invalid: not a kit state snapshot this kit reads"},
        413: {"description": "payload-too-large: past the snapshot cap (A71)"},
        415: {"description": "unsupported-media-type: not application/vnd.sqlite3 or octet-stream"},
    },
)
async def restore(request: Request) -> dict[str, Any]:
    """Replace the whole state with a snapshot's. The snapshot is untrusted input (A71): sent
    as ``application/vnd.sqlite3`` or ``application/octet-stream`` (else 415), at most the cap
    (else 413, before the body is read past it), read and validated off the event loop; 400
    ``snapshot-invalid`` names what is wrong. Nothing changes when it is refused."""
    from kit.sim.statefile import StateFileError

    sim = _sim(request)
    media = (request.headers.get("content-type") or "").split(";")[0].strip().lower()
    if media not in RESTORE_MEDIA_TYPES:
        raise Problem(
            415,
            "unsupported-media-type",
            f"Send the snapshot as {_SNAPSHOT} (or application/octet-stream).",
            assumptions=("A71",),
        )
    data = await read_body(request, sim.settings.snapshot_max_bytes, "A71")
    try:
        await sim.restore(data)
    except StateFileError as exc:
        raise Problem(400, "snapshot-invalid", f"{exc}.", assumptions=("A45", "A71")) from None
    return {"seed": sim.state.seed, "now": format_time(sim.state.now)}


@router.get("/ledger")
async def ledger(request: Request) -> JSONResponse:
    state = _sim(request).state
    return JSONResponse(
        {
            "accounts": [
                {"account_id": a.account_id, "balance": money(a.balance)} for a in state.accounts.values()
            ],
            "transfers": [TransferOut.wire(t) for t in state.transfers.values()],
        }
    )
