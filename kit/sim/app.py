"""The simulator's app factory: composes routers; no module-level state."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from kit.sim import openapi, problems
from kit.sim.fastpath import PlainRoutes
from kit.sim.pipeline import ServiceHeaders
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

DESCRIPTION = (
    "A stateful, deterministic simulator of the Partner Financial Services API "
    "1.2.0-20221215. Where the specification says 'not shown', the simulator follows its "
    "assumptions register (data/assumptions.toml); every answer names the entries it relied "
    "on in svc-assumptions."
)


# Newer FastAPI versions instrument every request for OpenTelemetry and look the global
# providers up each time (issue #7 profile: three os.environ reads per request). The simulator
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
        yield
        await sim.aclose()

    app = FastAPI(
        **_NO_TELEMETRY,
        title="Partner Financial Services API (simulator)",
        version=sim.version,
        description=DESCRIPTION,
        lifespan=lifespan,
        # Starlette would answer 307 to "/p2p/transfers/" (no problem+json); the route check
        # answers 404 not-found instead (DESIGN §3, order of checks 1).
        redirect_slashes=False,
        openapi_tags=[{"name": "simulator control plane", "description": "Simulator only (/_sim)."}],
    )
    app.state.sim = sim
    problems.install(app)
    partner = (oauth, sessions, onboarding, cards, events, p2p, webhooks, documents, removed)
    routers = [module.router for module in partner]
    if settings.control:
        routers.append(control.router)
    for router in routers:
        app.include_router(router)
    if settings.fast_path:  # inside ServiceHeaders: plain routes get the service headers too
        app.add_middleware(PlainRoutes, routes=[r for router in routers for r in router.routes])
    app.add_middleware(ServiceHeaders, sim=sim)
    openapi.install(app)
    return app
