"""The simulator's one app: the route table first, FastAPI's app built on first need.

:func:`create_app` makes a :class:`SimApp`, which the embedded server, ``kit serve`` and the
tests serve alike. A request goes through (:func:`edge`):

1. the 500 problem (outermost; under a dialect, spelled the dialect's way);
2. the guards of a shared server (``kit.sim.guarded``, asking ``kit.sim.guard``'s rules:
   ``Host``, the control plane's ``Origin``, the concurrency limit), asked of the request as it
   came off the wire;
3. under a dialect that is not the register's, its translation (``kit.sim.dialect``): header
   names at once, a JSON body only when the app reads it, and never past A22's limit; an
   answer's names, values and problem code (A64) in one pass;
4. ``ServiceHeaders`` (``kit.sim.middleware``): step 0 (the API version), the service headers
   on the way out, a durable simulator's journal;
5. the simulator's route table (``kit.sim.table``, built for its personality): a partner
   operation is answered by its endpoint, its module imported on its first request.

With the register's own dialect there is no translation, and ``ServiceHeaders`` asks the guards
itself before anything else (one layer less on every request); under a dialect ``Guarded`` asks
them outside the translation and hands a refusal down for ``ServiceHeaders`` to answer. What the
table does not take goes to FastAPI's app, built once, under a lock, on the first such request
(the first token and session of ``kit.connect("sim")`` never import FastAPI). That app holds
only what is FastAPI's: the OpenAPI document (made from the table's declarations) and its
pages, and the ``/_sim`` control plane; its router's last resort is the table's 404/405.

>>> app = create_app(Settings(seed=7))  # doctest: +SKIP
>>> uvicorn.run(app, port=8000)  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from starlette.datastructures import State
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Router
from starlette.types import ASGIApp, Receive, Scope, Send

from kit import register
from kit.sim import openapi, problems, versions
from kit.sim.dialect import Spoken
from kit.sim.guard import Guard, StartRefused, start_refusal
from kit.sim.guarded import Guarded
from kit.sim.headers import ASSUMPTIONS
from kit.sim.middleware import ServiceHeaders
from kit.sim.problems import HANDLERS, unexpected
from kit.sim.runtime import Sim
from kit.sim.settings import Settings
from kit.sim.table import RouteTable, build, endpoints
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


def create_app(settings: Settings | None = None) -> SimApp:
    """A new simulator app with its own state, seeded by ``settings.seed``.

    Raises:
        ValueError: an API version not served; ``StartRefused``, ``StateFileError``,
            ``ChoicesError``, ``RouteTableError``: what the settings ask cannot be served.
    """
    return SimApp(settings)


def service_headers(app: ASGIApp, sim: Sim, *, guarded: bool = False) -> ServiceHeaders:
    """``ServiceHeaders`` around ``app`` for ``sim`` (its settings and personality); with
    ``guarded``, the guards are asked outside it (``Guarded``) and it answers their refusal."""
    chosen = sim.personality
    return ServiceHeaders(
        app,
        state=sim.state,
        version=sim.settings.api_version,
        documents=DOCUMENTS,
        send_assumptions=chosen.send_assumptions,
        guard=Guard(sim.settings),
        max_concurrency=sim.settings.max_concurrency,
        served=chosen.versions,
        guarded=guarded,
    )


def edge(app: ASGIApp, sim: Sim) -> ASGIApp:
    """``app`` (the route table) behind what every request meets first: the 500 problem, the
    guards of a shared server on the request as it came, a dialect's translation (only when it
    is not the register's), the service headers (see the module docstring)."""
    dialect = sim.personality.dialect
    if not Spoken.needed(dialect):  # nothing to translate: ServiceHeaders asks the guards itself, first
        return ServerErrorMiddleware(service_headers(app, sim), handler=unexpected)
    spoken = Spoken(service_headers(app, sim, guarded=True), dialect)
    guarded = Guarded(spoken, Guard(sim.settings), sim.settings.max_concurrency)
    return ServerErrorMiddleware(guarded, handler=spoken.unexpected(unexpected))


class SimApp:
    """An ASGI app serving ``settings``' simulator (see the module docstring).

    ``version`` and ``state.sim`` are what a request's ``request.app`` offers the routes and the
    500 handler, as the FastAPI app's do; ``table`` is the simulator's route table.
    """

    def __init__(self, settings: Settings | None = None) -> None:
        self.sim = sim = new_sim(settings)
        self.version = sim.version
        self.state = State()
        self.state.sim = sim
        self.table: RouteTable = build(sim.personality.paths())
        self._lifespan = Router(lifespan=lifespan_of(sim))
        self._lock = threading.Lock()
        self._app: FastAPI | None = None
        self._endpoints = endpoints(HANDLERS)
        self._stack = edge(self._route, sim)

    @property
    def fastapi_built(self) -> bool:
        return self._app is not None

    def fastapi(self) -> FastAPI:
        """The simulator's FastAPI app (built on first call), sharing this app's simulator."""
        with self._lock:  # built once, whoever asks first
            if self._app is None:
                self._app = fastapi_app(self.sim, None, self.table)
                # The 500 problem is this app's outermost layer (edge): FastAPI's own 500 layer
                # hands every exception no other handler takes on to it.
                self._app.add_exception_handler(Exception, _outermost)
            return self._app

    def openapi(self) -> dict[str, Any]:
        """The OpenAPI document served at ``/openapi.json``."""
        return self.fastapi().openapi()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan.lifespan(scope, receive, send)
            return
        scope["app"] = self
        await self._stack(scope, receive, send)

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A partner operation by the table; anything else by FastAPI's app."""
        if self.table.enter(scope):
            await self._endpoints(scope, receive, send)
        else:
            await self.fastapi()(scope, receive, send)


async def _outermost(request: Request, exc: Exception) -> Response:
    raise exc


def fastapi_app(sim: Sim, lifespan: Lifespan | None, table: RouteTable) -> FastAPI:
    """The FastAPI app of ``sim``: the OpenAPI document of ``table`` and its pages, the control
    plane, the problem handlers, and ``table``'s 404/405 for what no route of its own takes; no
    middleware and no partner route (``table`` serves those)."""
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
    documents = {app.openapi_url, app.docs_url, app.redoc_url, app.swagger_ui_oauth2_redirect_url}
    if documents - {None} != DOCUMENTS:
        raise RuntimeError(f"FastAPI's documents moved: {sorted(map(str, documents))}")
    app.state.sim = sim
    problems.install(app)
    if sim.settings.control:
        app.include_router(control.router)
    app.router.default = table.refuse
    openapi.install(app, sim.personality, table)
    return app
