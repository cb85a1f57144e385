"""The embedded simulator's app: the partner routes served before FastAPI is even imported.

Every partner route is plain (``kit.sim.fastpath``): it reads its request and answers a ready
Response. :class:`LazyApp` serves those through the same layers as :func:`~kit.sim.app.create_app`'s
app (the 500 problem outermost, then ``ServiceHeaders``, then the plain routes with the app's
problem handlers) and builds the FastAPI app (its routes, pydantic response fields, OpenAPI,
docs, control plane, 404/405 problems) only for the first request the plain routes do not
settle, once, under a lock. The first token and session of ``kit.connect("sim")`` thus never
import FastAPI: about 300 ms CPU less (``benchmarks/results/connect_profile.json``). The
answers are the same bytes either way; ``kit serve`` serves ``create_app``'s app through
:class:`Served`: the same layers, without the ones FastAPI's own call puts around them that do
nothing for the simulator (its telemetry is off, it sets no body limit).

    >>> app = LazyApp(Settings(seed=7))  # doctest: +SKIP
    >>> app.fastapi_built  # doctest: +SKIP
    False
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from starlette.datastructures import State
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.routing import Router
from starlette.types import ASGIApp, Receive, Scope, Send

from kit.sim.app import DOCUMENTS, fastapi_app, lifespan_of, new_sim
from kit.sim.fastpath import IndexedRoute, PlainRoutes, Routes
from kit.sim.guard import Guard
from kit.sim.middleware import ServiceHeaders
from kit.sim.problems import HANDLERS, unexpected
from kit.sim.routes import INDEX, partner_module
from kit.sim.settings import Settings

if TYPE_CHECKING:
    from fastapi import FastAPI


class LazyApp:
    """An ASGI app serving ``settings``' simulator; FastAPI's app is built on first need.

    ``version`` and ``state.sim`` are what a request's ``request.app`` offers the routes and the
    500 handler, as the FastAPI app's do.
    """

    def __init__(self, settings: Settings | None = None) -> None:
        self.sim = sim = new_sim(settings)
        self.version = sim.version
        self.state = State()
        self.state.sim = sim
        self._lifespan = Router(lifespan=lifespan_of(sim))
        self._lock = threading.Lock()
        self._app: FastAPI | None = None
        self._inner: ASGIApp | None = None
        routes = [IndexedRoute(module, methods, path, _routes_of) for module, methods, path in INDEX]
        chosen = sim.personality
        self._stack = ServerErrorMiddleware(
            ServiceHeaders(
                PlainRoutes(self._delegate, routes=routes, handlers=HANDLERS),
                state=sim.state,
                version=sim.settings.api_version,
                documents=DOCUMENTS,
                send_assumptions=chosen.send_assumptions,
                codes=chosen.codes,
                guard=Guard(sim.settings),
                max_concurrency=sim.settings.max_concurrency,
                served=chosen.versions,
            ),
            handler=unexpected,
        )

    @property
    def fastapi_built(self) -> bool:
        return self._app is not None

    def fastapi(self) -> FastAPI:
        """The simulator's FastAPI app (built on first call), sharing this app's simulator."""
        return self._built()[0]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan.lifespan(scope, receive, send)
            return
        scope["app"] = self
        await self._stack(scope, receive, send)

    async def _delegate(self, scope: Scope, receive: Receive, send: Send) -> None:
        """What the plain routes do not settle: FastAPI's app inside its 500 layer (ours is
        outermost, as it is in its own stack)."""
        app, inner = self._built()
        scope["app"] = app
        await inner(scope, receive, send)

    def _built(self) -> tuple[FastAPI, ASGIApp]:
        with self._lock:  # built once, whoever asks first
            if self._app is None or self._inner is None:
                app, _ = fastapi_app(self.sim, None)
                documents = {app.openapi_url, app.docs_url, app.redoc_url, app.swagger_ui_oauth2_redirect_url}
                if documents - {None} != DOCUMENTS:
                    raise RuntimeError(f"FastAPI's documents moved: {sorted(map(str, documents))}")
                stack: Any = app.build_middleware_stack()
                if not isinstance(stack, ServerErrorMiddleware):
                    raise RuntimeError("FastAPI's middleware stack no longer starts with its 500 layer")
                app.middleware_stack = stack
                self._app, self._inner = app, stack.app
            return self._app, self._inner


def _routes_of(module: str) -> Routes:
    routes: Routes = partner_module(module).router
    return routes


#: FastAPI's layers between its 500 layer and the app's own middleware that pass a request
#: straight on when, as in ``create_app``'s app, telemetry is off and no body limit is set.
_PASS_THROUGH = frozenset({"ExceptionTelemetryMiddleware", "AppBodyLimitMiddleware"})


class Served:
    """``create_app``'s ``app`` as ``kit serve`` serves it: an HTTP request goes to the 500 layer
    of the app's own middleware stack, then straight to ``ServiceHeaders`` (and the plain routes,
    FastAPI's routing behind them), past ``FastAPI.__call__``, ``Starlette.__call__`` and the two
    layers of :data:`_PASS_THROUGH`, which do nothing for it: about 3 µs a request, resumed
    requests included (the issue 37 profile). Everything else (the lifespan) goes to ``app``.
    With a FastAPI that stacks its layers otherwise, or with a root path, telemetry or a body
    limit, it is ``app`` itself (``lean`` False).
    """

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self._stack = self._lean(app)

    @property
    def lean(self) -> bool:
        return self._stack is not None

    @staticmethod
    def _lean(app: FastAPI) -> ASGIApp | None:
        telemetry = getattr(app, "_native_telemetry", None)
        if app.root_path or getattr(app, "max_body_size", None) is not None:
            return None
        if telemetry is not None and telemetry.enabled():
            return None
        stack: Any = app.build_middleware_stack()
        if not isinstance(stack, ServerErrorMiddleware):
            return None
        app.middleware_stack = stack  # the app's own (for the lifespan): built once, here
        inner: Any = stack.app
        while type(inner).__name__ in _PASS_THROUGH and type(inner).__module__.startswith("fastapi."):
            inner = inner.app
        if not isinstance(inner, ServiceHeaders):
            return None
        return ServerErrorMiddleware(inner, handler=stack.handler, debug=stack.debug)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        stack = self._stack
        if stack is None or scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope["app"] = self.app
        await stack(scope, receive, send)
