"""Endpoints removed in 1.2.0 answer 404 ``endpoint-removed``, no token needed (A29)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from kit.sim.problems import Problem

router = APIRouter()
_ALL = ["GET", "POST", "PUT", "PATCH", "DELETE"]


@router.api_route("/accounts/{account_id}/savings/close", methods=_ALL, include_in_schema=False)
async def savings_close(request: Request, account_id: str) -> Response:
    request.state.assumptions.add("A29")
    return Problem(
        404,
        "endpoint-removed",
        "POST /accounts/{account_id}/savings/close was removed in 1.2.0; the endpoint no longer exists.",
        removed_in="1.2.0",
    ).response()
