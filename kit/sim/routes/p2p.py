"""P2P transfers between persons (paths assumed, A18; bodies, A36; money, A19).

A person session tells the sender from the receiver; the ``svc-p2p-role`` header carries
that on every answer. ``Idempotency-Key`` is required: money moves exactly once. The business
rules answer 422 in a fixed order (A37).
"""

from __future__ import annotations

import re
from decimal import Decimal

from starlette.requests import Request
from starlette.responses import Response

from kit import register
from kit._codes import ProblemCode
from kit.sim import versions
from kit.sim.bodies import TransferCreate
from kit.sim.call import Call, RouteReply
from kit.sim.headers import ROLE
from kit.sim.models import Money
from kit.sim.openapi import declare
from kit.sim.pipeline import run
from kit.sim.problems import Problem, not_found
from kit.sim.records import Transfer
from kit.sim.representations import TransferOut
from kit.sim.schema import parse_model
from kit.sim.table import Routes

router = Routes(tags=["P2P"])
_MONEY = register.value("A19")
MONEY_RE = re.compile(_MONEY["pattern"], re.ASCII)
CURRENCIES: list[str] = _MONEY["currencies"]


def parse_amount(raw: object, field: str = "amount", *, rules: tuple[str, ...] = ()) -> tuple[Decimal, str]:
    """A positive amount in an allowed currency, or the 422 that says why not (A19; ``rules``
    name the entries that order it among other refusals)."""
    money = parse_model(raw, Money)  # shape and types: validation-error
    if not MONEY_RE.fullmatch(money.value) or Decimal(money.value) <= 0:
        raise Problem(
            422,
            "invalid-amount",
            'The amount must be a positive decimal string with at most two decimals, e.g. "12.50".',
            errors=[{"field": f"/{field}/value", "message": "not a positive amount"}],
            assumptions=("A19", *rules),
        )
    if money.currency not in CURRENCIES:
        raise Problem(
            422,
            "unsupported-currency",
            f"Only {', '.join(CURRENCIES)} is supported.",
            allowed=list(CURRENCIES),
            assumptions=("A19", *rules),
        )
    return Decimal(money.value), money.currency


def _unprocessable(code: ProblemCode, detail: str) -> Problem:
    """A refusal by the business rules of a transfer, in their order (A37)."""
    return Problem(422, code, detail, assumptions=("A37",))


@declare(
    router,
    "create_transfer",
    TransferOut,
    status=201,
    takes=TransferCreate,
    errors=(403, 404),
    summary="Send money to another person (person session of the sender; Idempotency-Key)",
)
async def create_transfer(request: Request) -> Response:
    def handle(call: Call) -> RouteReply:
        session = call.require_session("person")
        source_id = call.body.get("from_account_id") if isinstance(call.body, dict) else None
        if isinstance(source_id, str):
            call.bound_account(source_id)
        req = call.body_as(TransferCreate, uses=("A36",))
        source = call.find_account(req.from_account_id)
        amount, currency = parse_amount(req.amount, rules=("A37",))
        recipient = call.state.person(call.partner, req.to_person_id)
        if recipient is not None and recipient.account_id == source.account_id:
            raise _unprocessable("self-transfer", "The recipient's account is the source account.")
        target = call.state.accounts.get(recipient.account_id) if recipient else None
        if recipient is None or recipient.status != "established" or target is None:
            raise _unprocessable(
                "recipient-not-eligible",
                "The recipient cannot receive transfers (unknown, not verified or locked).",
            )
        if source.balance < amount:
            raise _unprocessable("insufficient-funds", "The source account's balance is too low.")
        source.balance -= amount
        target.balance += amount
        transfer = Transfer(
            transfer_id=call.state.ids.next("p2p"),
            partner=call.partner,
            from_account_id=source.account_id,
            to_account_id=target.account_id,
            from_person_id=session.person_id or "",
            to_person_id=recipient.person_id,
            amount=amount,
            currency=currency,
            memo=req.memo,
            created_at=call.now,
        )
        call.state.transfers[transfer.transfer_id] = transfer
        return _transfer(call, 201, call.sim.show(TransferOut, transfer), "sender")

    return await run(request, handle, idempotency="required")


def _transfer(call: Call, status: int, body: dict[str, object], role: str) -> RouteReply:
    """A transfer answer (A36), its money (A19) and the role header (A18)."""
    call.uses("A18", "A19", "A36")
    headers = {ROLE: role} if versions.p2p_role_header(call.version) else {}  # change 7
    return RouteReply(status, body, headers)


@declare(
    router,
    "get_transfer",
    TransferOut,
    errors=(403, 404),
    summary="Read a transfer as its sender or its receiver",
)
async def get_transfer(request: Request, transfer_id: str) -> Response:
    def handle(call: Call) -> RouteReply:
        session = call.require_session("person")
        transfer = call.state.transfers.get(transfer_id)
        role = None
        if transfer is not None and transfer.partner == call.partner:
            if session.person_id == transfer.from_person_id:
                role = "sender"
            elif session.person_id == transfer.to_person_id:
                role = "receiver"
        if transfer is None or role is None:
            raise not_found("transfer", "A18", "A30")
        return _transfer(call, 200, {**call.sim.show(TransferOut, transfer), "viewer_role": role}, role)

    return await run(request, handle)
