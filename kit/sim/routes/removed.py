"""Endpoints removed in 1.2.0 answer 404 ``endpoint-removed``, no token needed (A29).

The removed endpoints are the spec's own list (``removed_endpoints`` of ``data/spec.toml``);
those whose path the spec never showed (Refer a Friend) have no route: a plain 404.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from kit import register
from kit.sim.fastpath import PlainRoute
from kit.sim.problems import Problem, uses

router = APIRouter(route_class=PlainRoute)
_ALL = ["GET", "POST", "PUT", "PATCH", "DELETE"]
# The one removed endpoint whose path the spec shows: savings close.
(SAVINGS_CLOSE,) = [e for e in register.spec()["removed_endpoints"] if e["path"]]


@router.api_route(SAVINGS_CLOSE["path"], methods=_ALL, include_in_schema=False)
async def savings_close(request: Request, account_id: str) -> Response:
    uses(request, "A29")
    method, path, removed_in = SAVINGS_CLOSE["method"], SAVINGS_CLOSE["path"], SAVINGS_CLOSE["removed_in"]
    return Problem(
        404,
        "endpoint-removed",
        f"{method} {path} was removed in {removed_in}; the endpoint no longer exists.",
        removed_in=removed_in,
    ).response()
