"""The simulator's app factory: composes routers; no module-level state.

>>> app = create_app(Settings(seed=7))  # doctest: +SKIP
>>> uvicorn.run(app, port=8000)  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from kit import register
from kit.sim import openapi, problems, versions
from kit.sim.fastpath import PlainRoutes
from kit.sim.guard import Guard, StartRefused, start_refusal
from kit.sim.headers import ASSUMPTIONS
from kit.sim.middleware import ServiceHeaders
from kit.sim.routes import INDEX, declared_index, partner_routers
from kit.sim.runtime import Sim
from kit.sim.settings import Settings
from kit.sim.timeflow import follow_wall_clock

if TYPE_CHECKING:
    from fastapi import FastAPI

_SPEC = {"version": register.fact("version")}
TITLE = "Partner Financial Services API (simulator)"
DESCRIPTION = (
    f"A stateful, deterministic simulator of the Partner Financial Services API {_SPEC['version']}. "
    "Where the specification says 'not shown', the simulator follows its assumptions register "
    f"(data/assumptions.toml); every answer names the entries of the path it took in {ASSUMPTIONS}. "
    "docs/contract.md tells, for every behaviour, whether the specification states it or the "
    "simulator chose it."
)


#: FastAPI's document and pages (its defaults, which the app keeps): A48's paths.
DOCUMENTS = frozenset({"/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"})
Lifespan = Callable[[Any], AbstractAsyncContextManager[None]]


def _no_telemetry() -> dict[str, Any]:
    # Newer FastAPI versions instrument every request for OpenTelemetry and look the global
    # providers up each time (three os.environ reads per request in a profile). The simulator
    # reports through its own svc-request-id headers and must not mix spans into a notebook's.
    from fastapi import FastAPI

    if "telemetry" in inspect.signature(FastAPI).parameters:
        return {"telemetry": {"tracing": False, "metrics": False, "logs": False}}
    return {}


def new_sim(settings: Settings | None) -> Sim:
    """The simulator state and runtime for ``settings`` (its API version checked)."""
    settings = settings or Settings()
    if settings.api_version not in versions.SUPPORTED:
        raise ValueError(f"api_version must be one of {', '.join(versions.SUPPORTED)}")
    refusal = start_refusal(settings)
    if refusal is not None:
        raise StartRefused(refusal)
    sim = Sim(settings)
    served = sim.personality.versions
    if settings.api_version not in served:
        raise ValueError(f"api_version must be one of {', '.join(served)} (the versions served: A27)")
    return sim


def lifespan_of(sim: Sim) -> Lifespan:
    """Starting and stopping ``sim`` with the server (and following the wall clock, A46)."""

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        await sim.start()
        # On the wall clock time passes by itself: retries, expiry and bounds follow it (A46).
        ticking = asyncio.create_task(follow_wall_clock(sim)) if sim.settings.follows_wall_clock else None
        try:
            yield
        finally:
            if ticking is not None:
                ticking.cancel()
                await asyncio.gather(ticking, return_exceptions=True)
            await sim.aclose()

    return lifespan


def create_app(settings: Settings | None = None) -> FastAPI:
    """A new simulator app with its own state, seeded by ``settings.seed``."""
    sim = new_sim(settings)
    app, routers = fastapi_app(sim, lifespan_of(sim))
    if sim.settings.fast_path:  # inside ServiceHeaders: plain routes get the service headers too
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
        version=sim.settings.api_version,
        documents=documents,
        send_assumptions=chosen.send_assumptions,
        codes=chosen.codes,
        guard=Guard(sim.settings),
        max_concurrency=sim.settings.max_concurrency,
        served=chosen.versions,
    )
    return app


def fastapi_app(sim: Sim, lifespan: Lifespan | None) -> tuple[FastAPI, list[Any]]:
    """The FastAPI app of ``sim`` (routes, problems, OpenAPI) without middleware, and its routers."""
    from fastapi import FastAPI

    from kit.sim.routes import control

    app = FastAPI(
        **_no_telemetry(),
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
    if declared_index() != INDEX:  # what kit.sim.lazyapp matched before importing the modules
        raise RuntimeError("kit.sim.routes.INDEX no longer lists the routes the partner modules declare")
    routers = [module.router.api_router() for module in partner_routers()]
    if sim.settings.control:
        routers.append(control.router)
    for router in routers:
        app.include_router(router)
    openapi.install(app, sim.personality)
    return app, routers
