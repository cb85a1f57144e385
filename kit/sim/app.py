"""The simulator's app factory: composes routers; no module-level state.

>>> app = create_app(Settings(seed=7))  # doctest: +SKIP
>>> uvicorn.run(app, port=8000)  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from kit import register
from kit.sim import openapi, problems
from kit.sim.fastpath import PlainRoutes
from kit.sim.headers import ASSUMPTIONS
from kit.sim.middleware import ServiceHeaders
from kit.sim.routes import (
    cards,
    control,
    documents,
    events,
    oauth,
    onboarding,
    p2p,
    removed,
    sessions,
    webhooks,
)
from kit.sim.runtime import Sim
from kit.sim.settings import Settings
from kit.sim.timeflow import follow_wall_clock

_SPEC = register.spec()
TITLE = "Partner Financial Services API (simulator)"
DESCRIPTION = (
    f"A stateful, deterministic simulator of the Partner Financial Services API {_SPEC['version']}. "
    "Where the specification says 'not shown', the simulator follows its assumptions register "
    f"(data/assumptions.toml); every answer names the entries of the path it took in {ASSUMPTIONS}. "
    "docs/contract.md tells, for every behaviour, whether the specification states it or the "
    "simulator chose it."
)
#: The partner API's routers, in the order requests are matched against them.
PARTNER_ROUTERS = (oauth, sessions, onboarding, cards, events, p2p, webhooks, documents, removed)


# Newer FastAPI versions instrument every request for OpenTelemetry and look the global
# providers up each time (three os.environ reads per request in a profile). The simulator
# reports through its own svc-request-id headers and must not mix spans into a notebook's.
_NO_TELEMETRY: dict[str, Any] = (
    {"telemetry": {"tracing": False, "metrics": False, "logs": False}}
    if "telemetry" in inspect.signature(FastAPI).parameters
    else {}
)


def create_app(settings: Settings | None = None) -> FastAPI:
    """A new simulator app with its own state, seeded by ``settings.seed``."""
    settings = settings or Settings()
    sim = Sim(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await sim.start()
        # On the wall clock time passes by itself: retries, expiry and bounds follow it (A46).
        ticking = asyncio.create_task(follow_wall_clock(sim)) if settings.follows_wall_clock else None
        try:
            yield
        finally:
            if ticking is not None:
                ticking.cancel()
                await asyncio.gather(ticking, return_exceptions=True)
            await sim.aclose()

    app = FastAPI(
        **_NO_TELEMETRY,
        title=TITLE,
        version=sim.version,
        description=DESCRIPTION,
        lifespan=lifespan,
        # Starlette would answer 307 to "/p2p/transfers/" (no problem+json); the route check
        # answers 404 not-found instead (step 1 of the order of checks, kit/sim/pipeline.py).
        redirect_slashes=False,
        openapi_tags=[{"name": "simulator control plane", "description": "Simulator only (/_sim)."}],
    )
    app.state.sim = sim
    problems.install(app)
    routers = [module.router for module in PARTNER_ROUTERS]
    if settings.control:
        routers.append(control.router)
    for router in routers:
        app.include_router(router)
    if settings.fast_path:  # inside ServiceHeaders: plain routes get the service headers too
        routes = [route for router in routers for route in router.routes]
        app.add_middleware(PlainRoutes, routes=routes, handlers=app.exception_handlers)
    documents = frozenset(
        url
        for url in (app.openapi_url, app.docs_url, app.redoc_url, app.swagger_ui_oauth2_redirect_url)
        if url
    )
    chosen = sim.personality
    app.add_middleware(
        ServiceHeaders,
        state=sim.state,
        version=sim.version,
        documents=documents,
        send_assumptions=chosen.send_assumptions,
        codes=chosen.codes,
    )
    openapi.install(app, chosen)
    return app
