"""The simulator's app factory: composes routers; no module-level state."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from kit.sim import openapi, problems
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


def create_app(settings: Settings | None = None) -> FastAPI:
    """A new simulator app with its own state, seeded by ``settings.seed``."""
    settings = settings or Settings()
    sim = Sim(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await sim.delivery.aclose()

    app = FastAPI(
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
    for module in (oauth, sessions, onboarding, cards, events, p2p, webhooks, documents, removed):
        app.include_router(module.router)
    if settings.control:
        app.include_router(control.router)
    app.add_middleware(ServiceHeaders, sim=sim)
    openapi.install(app)
    return app
