"""Serving a simulator app in process, and the FastAPI-only reference it is compared with.

:func:`reference_app` is the parity reference: the same simulator and route table, every
request through FastAPI's routing and exception middleware (``ServiceHeaders`` and the 500
problem around it, as in any FastAPI app). The parity tests send the same requests to it and to
:func:`kit.sim.create_app`'s app.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from starlette.types import ASGIApp

from kit.sim.app import fastapi_app, lifespan_of, new_sim, service_headers
from kit.sim.settings import Settings
from kit.sim.table import build

__all__ = ["InProcess", "masked", "reference_app"]

_RANDOM = ("token", "nonce", "encrypted_")


def reference_app(settings: Settings) -> Any:
    """A FastAPI app of ``settings``' simulator serving every route through FastAPI's router:
    the partner routes registered with it (out of the document, which the table's declarations
    make already), its router's own 404/405 and its own 500 layer, outermost."""
    sim = new_sim(settings)
    table = build(sim.personality.paths())
    app = fastapi_app(sim, lifespan_of(sim), table)
    app.include_router(table.api_router(), include_in_schema=False)
    app.router.default = app.router.not_found
    app.add_middleware(service_headers, sim=sim)  # type: ignore[arg-type]  # a factory of the app it wraps
    return app


class InProcess(httpx.BaseTransport):
    """httpx's ASGI transport for a sync client: each request on this transport's own loop."""

    def __init__(self, app: ASGIApp, root_path: str = "") -> None:
        self.asgi = httpx.ASGITransport(app=app, raise_app_exceptions=False, root_path=root_path)
        self.loop = asyncio.new_event_loop()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        async def send() -> httpx.Response:
            response = await self.asgi.handle_async_request(request)
            return httpx.Response(
                response.status_code, headers=response.headers, content=await response.aread()
            )

        return self.loop.run_until_complete(send())

    def close(self) -> None:
        self.loop.close()


def masked(value: Any) -> Any:
    """``value`` with its random members (tokens, nonces, ciphertexts) masked."""
    if isinstance(value, dict):
        return {k: "<random>" if any(part in k for part in _RANDOM) else masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value
