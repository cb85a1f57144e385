"""Endpoints removed in 1.2.0 answer 404 ``endpoint-removed``, no token needed (A29).

The removed endpoints are the seed's own list (``removed_endpoints`` of ``kit.register.spec()``:
endpoint.8, endpoint.10); those whose path the seed never showed (Refer a Friend) have no route: a
plain 404. The seed says the endpoint "no longer exists", whatever the method: every method of
its path answers the same, and the answer names none.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from kit import register
from kit.sim.fastpath import PlainRoute
from kit.sim.problems import Problem, uses

router = APIRouter(route_class=PlainRoute)
#: Every method a request can name: the endpoint no longer exists for any of them.
ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"]
# The one removed endpoint whose path the seed shows: savings close.
(SAVINGS_CLOSE,) = [e for e in register.spec()["removed_endpoints"] if e["path"]]


@router.api_route(SAVINGS_CLOSE["path"], methods=ALL_METHODS, include_in_schema=False)
async def savings_close(request: Request, account_id: str) -> Response:
    uses(request, "A29")
    removed_in = SAVINGS_CLOSE["removed_in"]
    return Problem(
        404,
        "endpoint-removed",
        f"This endpoint was removed in {removed_in}; it no longer exists.",
        removed_in=removed_in,
    ).response()
