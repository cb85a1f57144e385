"""Endpoints removed in 1.2.0: savings close (change 5) and Refer a Friend (change 8).

Under 1.2.0 they answer 404 ``endpoint-removed``, no token needed (A29): the removed endpoints
are the spec's own list (``removed_endpoints`` of ``kit.register.spec()``: endpoint.8,
endpoint.10), and Refer a Friend's paths are the ones the kit chose for 1.1.0 (A66). The spec
says the endpoint "no longer exists", whatever the method: every method of its path answers the
same, and the answer names none. Under 1.1.0 (A27) they are served: savings close (A65) and the
two Refer-a-Friend operations (A66); another method there is 405. Which version removed them is
``kit.sim.versions``'s.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from kit import register
from kit.sim import versions
from kit.sim.call import Call, RouteReply
from kit.sim.openapi import declare
from kit.sim.pipeline import run
from kit.sim.previous import EmptyBody, ReferralCodeOut, ReferralCreate, ReferralOut, SavingsCloseOut
from kit.sim.problems import Problem, uses
from kit.sim.table import Routes

router = Routes(tags=["removed in 1.2.0"])
# The one removed endpoint whose path the spec shows: savings close.
(SAVINGS_CLOSE,) = [e for e in register.fact("removed_endpoints") if e["path"]]
REMOVED_IN = SAVINGS_CLOSE["removed_in"]
CODE_PREFIX: str = register.value("A66")["code_prefix"]


def _removed(request: Request) -> Response:
    uses(request, "A29")
    return Problem(
        404,
        "endpoint-removed",
        f"This endpoint was removed in {REMOVED_IN}; it no longer exists.",
        removed_in=REMOVED_IN,
    ).response()


def _other_method(request: Request, allow: str) -> Response:
    uses(request, "A44")
    return Problem(
        405,
        "method-not-allowed",
        "This path does not accept this method. See /openapi.json.",
        headers={"Allow": allow},
    ).response()


async def _gate(
    request: Request, removed: Callable[[str], bool], method: str, serve: Callable[[], Awaitable[Response]]
) -> Response:
    """Step 1 for a path removed in 1.2.0: removed under the versions that removed it, else
    served for ``method`` and 405 for any other."""
    if removed(versions.of(request.state)):
        return _removed(request)
    if request.method not in (method, "HEAD" if method == "GET" else method):
        return _other_method(request, method)
    return await serve()


# --- change 5: savings close (A65 under 1.1.0) --------------------------------------------------


@declare(
    router,
    "savings_close",
    SavingsCloseOut,
    errors=(403, 404),
    summary="1.1.0 only: close the account's savings (removed in 1.2.0)",
)
async def savings_close(request: Request, account_id: str) -> Response:
    def handle(call: Call) -> RouteReply:
        account = call.bound_account(account_id)
        call.body_as(EmptyBody)
        call.uses("A65")
        return RouteReply(200, {"account_id": account.account_id, "savings_status": "closed"})

    return await _gate(request, versions.savings_close_removed, "POST", lambda: run(request, handle))


@router.operation("savings_close_other", include_in_schema=False)
async def savings_close_other(request: Request, account_id: str) -> Response:
    """Another method: removed under 1.2.0, else 405."""
    return _other(request, versions.savings_close_removed, "POST")


def _other(request: Request, removed: Callable[[str], bool], method: str) -> Response:
    return _removed(request) if removed(versions.of(request.state)) else _other_method(request, method)


# --- change 8: Refer a Friend (A66 under 1.1.0) ---------------------------------------------------


def referral_code(account_id: str) -> str:
    """The account's referral code: derived from its id, the same every time (A66)."""
    return CODE_PREFIX + account_id.split("_", 1)[-1]


@declare(
    router,
    "referral_code",
    ReferralCodeOut,
    errors=(403, 404),
    summary="1.1.0 only: the account's Refer-a-Friend code (removed in 1.2.0)",
)
async def get_referral_code(request: Request, account_id: str) -> Response:
    def handle(call: Call) -> RouteReply:
        account = call.bound_account(account_id)
        call.uses("A66")
        return RouteReply(200, {"account_id": account.account_id, "referral_code": referral_code(account_id)})

    return await _gate(request, versions.refer_a_friend_removed, "GET", lambda: run(request, handle))


@declare(
    router,
    "create_referral",
    ReferralOut,
    status=202,
    takes=ReferralCreate,
    errors=(403, 404),
    summary="1.1.0 only: redeem another account's Refer-a-Friend code (removed in 1.2.0)",
)
async def create_referral(request: Request, account_id: str) -> Response:
    def handle(call: Call) -> RouteReply:
        account = call.bound_account(account_id)
        req = call.body_as(ReferralCreate, uses=("A66",))
        referrer = req.referral_code.removeprefix(CODE_PREFIX)
        known = req.referral_code.startswith(CODE_PREFIX)
        other = call.state.account(call.partner, f"acc_{referrer}") if known else None
        if other is None or other.account_id == account.account_id:
            raise Problem(
                422,
                "invalid-referral-code",
                "The referral code is not another account's.",
                assumptions=("A66",),
            )
        return RouteReply(
            202, {"account_id": account.account_id, "referral_code": req.referral_code, "status": "accepted"}
        )

    return await _gate(request, versions.refer_a_friend_removed, "POST", lambda: run(request, handle))


@router.operation("referral_code_other", include_in_schema=False)
async def referral_code_other(request: Request, account_id: str) -> Response:
    return _other(request, versions.refer_a_friend_removed, "GET")


@router.operation("referrals_other", include_in_schema=False)
async def referrals_other(request: Request, account_id: str) -> Response:
    return _other(request, versions.refer_a_friend_removed, "POST")
