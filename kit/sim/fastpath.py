"""Plain routes served straight from their endpoint, past FastAPI's per-request machinery.

A partner route opts in by its class: ``APIRouter(route_class=PlainRoute)``, or is declared
on :class:`Routes`, which records it without FastAPI (see below). Its endpoint is
``async def endpoint(request: Request, <str path params>) -> Response``: it reads the request
itself and answers a ready :class:`~starlette.responses.Response`, so FastAPI has nothing to
resolve, validate or serialize; a route of another shape is refused when it is declared.
FastAPI's routing and dependency layers cost about 60 µs a request in process, more than most
endpoints themselves, so :class:`PlainRoutes` matches those routes itself and calls the endpoint
directly. Without it the simulator answers about half as many sessions and card reads per
second over HTTP (measured: ``benchmarks/results/fastpath.json``).

It decides as FastAPI's router does: each route's own ``matches()`` (so a ``--root-path`` is
honoured), in the order the app matches them, the first full match wins. A plain route without
path parameters that no earlier route matches is found by (method, path) in a table built once,
the same choice without the regexes (``_static_paths``). When that route is
not plain, or none matches fully, the request goes on to FastAPI unchanged (its 404/405
problems, OpenAPI, the control plane). An exception from a plain endpoint is answered by the
app's own exception handlers, as it would be behind FastAPI's router; one they do not handle
goes on to the app's error middleware (a 500 problem).

The partner modules declare their routes on :class:`Routes`: plain routes recorded without
importing FastAPI, matched by :class:`DeclaredRoute` (the same ``matches()`` as FastAPI's), and
turned into an ``APIRouter`` of :class:`PlainRoute` only when the FastAPI app is built
(``kit.sim.lazyapp`` serves the first requests without it). Before a module is even imported,
its routes are matched from ``kit.sim.routes.INDEX`` as :class:`IndexedRoute`.

    >>> router = Routes(tags=["things"])
    >>> @router.get("/things/{thing_id}")
    ... async def thing(request: Request, thing_id: str) -> Response:
    ...     return Response(thing_id)
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.convertors import StringConvertor
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, compile_path, get_route_path
from starlette.types import ASGIApp, Receive, Scope, Send

Endpoint = Callable[..., Awaitable[Response]]
F = TypeVar("F", bound=Endpoint)
Handler = Callable[[Request, Exception], Any]


def why_not_plain(route: Any) -> str | None:
    """Why ``route`` (an ``APIRoute`` or a :class:`DeclaredRoute`) cannot be served past
    FastAPI, or None when it can."""
    if route.dependencies:
        return "it has dependencies"
    if not inspect.iscoroutinefunction(route.endpoint):
        return "its endpoint is not an async function"
    try:
        hints = typing.get_type_hints(route.endpoint)
    except Exception:  # an annotation that cannot be resolved
        return "its annotations cannot be resolved"
    returns = hints.pop("return", None)
    if not (inspect.isclass(returns) and issubclass(returns, Response)):
        return "its endpoint does not answer a Response"
    params = inspect.signature(route.endpoint).parameters
    requests = [name for name in params if hints.get(name) is Request]
    path = [name for name in params if name not in requests]
    if len(requests) != 1:
        return "its endpoint does not take the Request exactly once"
    if set(path) != set(route.param_convertors) or not all(
        hints.get(name) is str and isinstance(route.param_convertors[name], StringConvertor) for name in path
    ):
        return "its other parameters are not exactly its str path parameters"
    if not all(p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in params.values()):
        return "its parameters have defaults or are keyword- or positional-only"
    return None


def _plain_route_class() -> type:
    from fastapi.routing import APIRoute

    class PlainRoute(APIRoute):
        """A route :class:`PlainRoutes` may serve; declaring one of another shape raises TypeError."""

        def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
            super().__init__(path, endpoint, **kwargs)
            reason = why_not_plain(self)
            if reason is not None:
                raise TypeError(f"{path} cannot be a PlainRoute: {reason}")

    PlainRoute.__module__ = __name__
    return PlainRoute


_lazy: dict[str, type] = {}


def __getattr__(name: str) -> Any:
    """``PlainRoute`` (an ``APIRoute``), defined on first use: FastAPI is imported only then."""
    if name != "PlainRoute":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name not in _lazy:
        _lazy[name] = _plain_route_class()
    return _lazy[name]


def _path_match(route: DeclaredRoute | IndexedRoute, scope: Scope) -> tuple[Match, dict[str, Any]]:
    """How ``route`` matches ``scope``, as FastAPI's ``APIRoute`` matches, and the path parameters."""
    if scope["type"] == "http":
        found = route.path_regex.match(get_route_path(scope))
        if found:
            params = {k: route.param_convertors[k].convert(v) for k, v in found.groupdict().items()}
            match = Match.FULL if scope["method"] in route.methods else Match.PARTIAL
            return match, {**scope.get("path_params", {}), **params}
    return Match.NONE, {}


class DeclaredRoute:
    """A plain route as declared on :class:`Routes`: matched as FastAPI's ``APIRoute`` matches
    (``path`` is its template, as ``scope["route"].path`` reads it)."""

    def __init__(
        self, path: str, endpoint: Endpoint, methods: Sequence[str], options: dict[str, Any]
    ) -> None:
        self.path = path
        self.endpoint = endpoint
        self.declared_methods = list(methods)
        self.methods = {m.upper() for m in methods}
        self.options = options
        self.dependencies = options.get("dependencies") or []
        self.path_regex, self.path_format, self.param_convertors = compile_path(path)
        reason = why_not_plain(self)
        if reason is not None:
            raise TypeError(f"{path} cannot be a PlainRoute: {reason}")

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, path_params = _path_match(self, scope)
        if match is Match.NONE:
            return match, {}
        return match, {"endpoint": self.endpoint, "path_params": path_params, "route": self}


class IndexedRoute:
    """A plain route known by its module, methods and path before the module is imported
    (``kit.sim.routes.INDEX``): matched as :class:`DeclaredRoute` matches; :meth:`declared`
    imports the module, on the first request that chooses the route."""

    def __init__(self, module: str, methods: Sequence[str], path: str, load: Callable[[str], Routes]) -> None:
        self.module = module
        self.path = path
        self.methods = {m.upper() for m in methods}
        self.path_regex, self.path_format, self.param_convertors = compile_path(path)
        self._load = load
        self._declared: DeclaredRoute | None = None

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, path_params = _path_match(self, scope)
        return match, ({} if match is Match.NONE else {"path_params": path_params})

    def declared(self) -> DeclaredRoute:
        """The module's own route (its module imported on first call).

        Raises:
            LookupError: the module declares no such route (the index is out of date).
        """
        if self._declared is None:
            for route in self._load(self.module).declared:
                if route.path == self.path and route.methods == self.methods:
                    self._declared = route
                    break
            else:
                methods = ", ".join(sorted(self.methods))
                raise LookupError(f"kit.sim.routes.{self.module} declares no {methods} {self.path}")
        return self._declared


class Routes:
    """A partner module's plain routes, declared like an ``APIRouter``'s without importing FastAPI.

    ``api_router()`` builds the ``APIRouter`` of :class:`PlainRoute` (once) for the FastAPI app;
    ``routes`` are its routes (as ``APIRouter.routes``); ``declared`` the :class:`DeclaredRoute`
    the fast path matches before that app exists.
    """

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.declared: list[DeclaredRoute] = []
        self._built: Any = None

    def api_route(self, path: str, *, methods: Sequence[str], **options: Any) -> Callable[[F], F]:
        def record(endpoint: F) -> F:
            self.declared.append(DeclaredRoute(path, endpoint, methods, options))
            return endpoint

        return record

    def get(self, path: str, **options: Any) -> Callable[[F], F]:
        return self.api_route(path, methods=["GET"], **options)

    def post(self, path: str, **options: Any) -> Callable[[F], F]:
        return self.api_route(path, methods=["POST"], **options)

    def delete(self, path: str, **options: Any) -> Callable[[F], F]:
        return self.api_route(path, methods=["DELETE"], **options)

    def api_router(self) -> Any:
        """The ``APIRouter`` of these routes (built on first call; imports FastAPI)."""
        if self._built is None:
            from fastapi import APIRouter

            router = APIRouter(**self.options, route_class=__getattr__("PlainRoute"))
            for route in self.declared:
                methods = route.declared_methods
                router.add_api_route(route.path, route.endpoint, methods=methods, **route.options)
            self._built = router
        return self._built

    @property
    def routes(self) -> list[BaseRoute]:
        return list(self.api_router().routes)


def _is_plain(route: object) -> bool:
    plain = _lazy.get("PlainRoute")
    return isinstance(route, DeclaredRoute | IndexedRoute) or (plain is not None and isinstance(route, plain))


def _served(route: Any) -> Any:
    """The route that serves a request ``route`` was chosen for (an indexed route's own)."""
    return route.declared() if isinstance(route, IndexedRoute) else route


def _handler(handlers: Mapping[Any, Handler], exc: Exception) -> Handler | None:
    """The handler the app's exception middleware would choose (500 and Exception are not its)."""
    if isinstance(exc, HTTPException) and exc.status_code in handlers and exc.status_code != 500:
        return handlers[exc.status_code]
    for cls in type(exc).__mro__:
        if cls in handlers and cls is not Exception:
            return handlers[cls]
    return None


def _static_paths(by_method: Mapping[str, Sequence[Any]]) -> dict[tuple[str, str], Any]:
    """(method, path) -> the plain route without path parameters that matching the routes in
    order would choose for exactly that path: none before it matches the path fully (checked
    here, once). Matching a request route by route cost several regexes and, for FastAPI's
    routes, its scope look-ups: more than the rest of the routing (issue 37 profile)."""
    found: dict[tuple[str, str], Any] = {}
    for method, routes in by_method.items():
        for index, route in enumerate(routes):
            path = getattr(route, "path_format", None)
            if not _is_plain(route) or getattr(route, "param_convertors", True) or not isinstance(path, str):
                continue
            probe = {"type": "http", "path": path, "root_path": "", "method": method}
            if route.matches(probe)[0] is not Match.FULL:
                continue
            if all(earlier.matches(probe)[0] is not Match.FULL for earlier in routes[:index]):
                found.setdefault((method, path), route)
    return found


class PlainRoutes:
    """ASGI middleware: serve plain routes directly; hand everything else to ``app``.

    ``routes`` are the app's routes in the order FastAPI matches them; ``handlers`` are the
    app's exception handlers (``app.exception_handlers``).
    """

    def __init__(self, app: ASGIApp, routes: Sequence[Any], handlers: Mapping[Any, Handler]) -> None:
        self.app = app
        self.handlers = handlers
        # Only a route that takes the method can match fully: ask just those, in the app's order.
        taken = [(route, getattr(route, "methods", None)) for route in routes]
        self._any_method = [route for route, methods in taken if methods is None]
        self._by_method = {
            method: [route for route, methods in taken if methods is None or method in methods]
            for method in {m for _, methods in taken for m in methods or ()}
        }
        self._static = _static_paths(self._by_method)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            route = self._static.get((scope["method"], get_route_path(scope)))
            if route is not None:  # what matching in order would choose, without the regexes
                route = _served(route)
                path_params = dict(scope.get("path_params", {}))
                scope.update(endpoint=route.endpoint, path_params=path_params, route=route)
                await self._serve(route.endpoint, scope, receive, send)
                return
            for route in self._by_method.get(scope["method"], self._any_method):
                match, child_scope = route.matches(scope)
                if match is not Match.FULL:
                    continue
                if _is_plain(route):
                    route = _served(route)
                    scope.update(child_scope, endpoint=route.endpoint, route=route)  # and path_params
                    await self._serve(route.endpoint, scope, receive, send)
                    return
                break
        await self.app(scope, receive, send)

    async def _serve(self, endpoint: Endpoint, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive, send)
        try:
            response = await endpoint(request, **scope["path_params"])
        except Exception as exc:
            handler = _handler(self.handlers, exc)
            if handler is None:
                raise
            if inspect.iscoroutinefunction(handler):
                response = await handler(request, exc)
            else:
                response = await run_in_threadpool(handler, request, exc)
        await response(scope, receive, send)
