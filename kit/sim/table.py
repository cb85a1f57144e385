"""The route table: the partner operations (``kit.sim.routes.OPERATIONS``) served past FastAPI.

A route module declares each of its operations by key on its :class:`Routes`::

    router = Routes(tags=["cards"])

    @router.operation("get_card")
    async def get_card(request: Request, card_id: str) -> Response: ...

An endpoint takes the request and its path's parameters (``str``) and answers a ready
:class:`~starlette.responses.Response`, so nothing has to be resolved, validated or serialized
for it; a declaration of another shape raises ``TypeError`` when the module is imported.

:func:`build` makes a simulator's :class:`RouteTable` from the operations and the paths its
personality gives some of them (``Personality.paths()``), and checks it there, once:

- a path given to an unknown operation, or without exactly the parameters of the operation's
  default path, is refused;
- two operations whose templates can match one path must have the same template (parameter
  names aside); on one template, two operations may not take the same method (a collision),
  except for **the one precedence rule**: an operation marked ``rest`` takes the methods of
  its template that the others do not take (the removed and deprecated paths' own 404/405),
  and it is matched after them.

So the table's order decides nothing but the order of the OpenAPI document. The table is the one
place a partner operation is registered: the document is made from its declarations
(:meth:`RouteTable.api_router`, never served), and the 404/405 of a request no route takes is
its :meth:`RouteTable.refuse` (the last resort of FastAPI's router, which holds only the
documents and the control plane). An exception from an endpoint is answered by the problem
handlers (``kit.sim.problems.HANDLERS``) through Starlette's ``ExceptionMiddleware``
(:func:`endpoints`); any other goes on to the 500 layer.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

from starlette.convertors import StringConvertor
from starlette.exceptions import HTTPException
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import compile_path, get_route_path
from starlette.types import ASGIApp, ExceptionHandler, Receive, Scope, Send
from starlette.websockets import WebSocketClose

from kit.sim import routes as operations
from kit.sim.routes import Operation, partner_module

Endpoint = Callable[..., Awaitable[Response]]
F = TypeVar("F", bound=Endpoint)
_PARAMETER = re.compile(r"\{[^}]*\}")


class RouteTableError(ValueError):
    """The table cannot be built: the operations named, and why."""


def why_not_plain(endpoint: Callable[..., Any], parameters: set[str]) -> str | None:
    """Why ``endpoint`` cannot serve a route whose path has ``parameters``, or None when it can."""
    if not inspect.iscoroutinefunction(endpoint):
        return "its endpoint is not an async function"
    try:
        hints = typing.get_type_hints(endpoint)
    except Exception:  # an annotation that cannot be resolved
        return "its annotations cannot be resolved"
    returns = hints.pop("return", None)
    if not (inspect.isclass(returns) and issubclass(returns, Response)):
        return "its endpoint does not answer a Response"
    params = inspect.signature(endpoint).parameters
    requests = [name for name in params if hints.get(name) is Request]
    path = [name for name in params if name not in requests]
    if len(requests) != 1:
        return "its endpoint does not take the Request exactly once"
    if set(path) != parameters or not all(hints.get(name) is str for name in path):
        return "its other parameters are not exactly its str path parameters"
    if not all(p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in params.values()):
        return "its parameters have defaults or are keyword- or positional-only"
    return None


def _parameters(path: str) -> set[str]:
    convertors = compile_path(path)[2]
    if not all(isinstance(c, StringConvertor) for c in convertors.values()):
        raise RouteTableError(f"{path}: only str parameters ({{name}})")
    return set(convertors)


class Declared(NamedTuple):
    """An operation as its module declares it: the endpoint, and FastAPI's options for the
    document (summary, response model, tags…)."""

    key: str
    endpoint: Endpoint
    options: dict[str, Any]


#: Each declared endpoint's operation, for :func:`operation_of`.
_OPERATION_OF: dict[Callable[..., Any], Operation] = {}


def operation_of(scope: Scope) -> Operation | None:
    """The partner operation a request is served as: its endpoint's, as declared (whichever
    router set the endpoint in ``scope``: this table, or FastAPI's for the document); ``None``
    for a request no declared endpoint serves."""
    endpoint = scope.get("endpoint")
    return _OPERATION_OF.get(endpoint) if endpoint is not None else None


class Routes:
    """A route module's operations, declared by key without importing FastAPI."""

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.declared: dict[str, Declared] = {}

    def operation(self, key: str, **options: Any) -> Callable[[F], F]:
        """Declare the endpoint of operation ``key`` (``kit.sim.routes.OPERATIONS``)."""
        if key not in operations.BY_KEY:
            raise RouteTableError(f"no operation {key!r} in kit.sim.routes.OPERATIONS")
        if key in self.declared:
            raise RouteTableError(f"operation {key!r} declared twice")

        def record(endpoint: F) -> F:
            reason = why_not_plain(endpoint, _parameters(operations.BY_KEY[key].path))
            if reason is not None:
                raise TypeError(f"{key} cannot be served: {reason}")
            tags = [*self.options.get("tags", ()), *options.pop("tags", ())]
            self.declared[key] = Declared(key, endpoint, {**options, "tags": tags})
            _OPERATION_OF[endpoint] = operations.BY_KEY[key]
            return endpoint

        return record


class Route:
    """An operation at its path in one simulator's table; its module imported on first use."""

    def __init__(self, operation: Operation, path: str) -> None:
        self.operation = operation
        self.key = operation.key
        self.path = path  # the template, as scope["route"].path reads it
        self.methods = frozenset(operation.methods)
        self.path_regex, self.path_format, self.param_convertors = compile_path(path)
        self._declared: Declared | None = None

    def declared(self) -> Declared:
        """The module's declaration (the module imported on first call)."""
        if self._declared is None:
            module = partner_module(self.operation.module)
            declared = module.router.declared.get(self.key)
            if declared is None:
                raise RouteTableError(f"kit.sim.routes.{self.operation.module} does not declare {self.key!r}")
            self._declared = declared
        return self._declared

    def __repr__(self) -> str:
        return f"Route({self.key!r}, {'|'.join(self.operation.methods)} {self.path})"


def _template(path: str) -> str:
    return _PARAMETER.sub("{}", path)


def _may_match_one_path(a: str, b: str) -> bool:
    sa, sb = a.split("/"), b.split("/")
    return len(sa) == len(sb) and all(x == y or "{" in x or "{" in y for x, y in zip(sa, sb, strict=True))


def _check(routes: Sequence[Route]) -> None:
    problems = []
    for i, a in enumerate(routes):
        for b in routes[i + 1 :]:
            if not _may_match_one_path(a.path, b.path):
                continue
            if _template(a.path) != _template(b.path):
                problems.append(f"{a.key} ({a.path}) and {b.key} ({b.path}) may match the same path")
            elif a.operation.rest and b.operation.rest:
                problems.append(f"{a.key} and {b.key} both take the rest of {a.path}'s methods")
            elif not (a.operation.rest or b.operation.rest) and a.methods & b.methods:
                both = ", ".join(sorted(a.methods & b.methods))
                problems.append(f"{a.key} and {b.key} are both {both} {_template(a.path)}")
    if problems:
        raise RouteTableError("; ".join(problems))


class RouteTable:
    """A simulator's routes (see the module docstring); :func:`build` makes one."""

    def __init__(self, routes: Sequence[Route]) -> None:
        self.routes = tuple(routes)  # the order of the document
        matching = [r for r in routes if not r.operation.rest] + [r for r in routes if r.operation.rest]
        #: (method, path) -> the route of a path without parameters; the others by method.
        self._static: dict[tuple[str, str], Route] = {}
        self._by_method: dict[str, list[Route]] = {}
        for route in matching:
            for method in route.operation.methods:
                if route.param_convertors:
                    self._by_method.setdefault(method, []).append(route)
                else:
                    self._static.setdefault((method, route.path), route)

    def __getitem__(self, key: str) -> Route:
        for route in self.routes:
            if route.key == key:
                return route
        raise KeyError(key)

    def match(self, scope: Scope) -> tuple[Route, dict[str, Any]] | None:
        """The route a request is served by and its path parameters; None when no route takes
        both its path and its method (FastAPI's app answers it)."""
        method, path = scope["method"], get_route_path(scope)
        route = self._static.get((method, path))
        if route is not None:
            return route, {}
        for route in self._by_method.get(method, ()):
            found = route.path_regex.match(path)
            if found:
                return route, found.groupdict()
        return None

    def enter(self, scope: Scope) -> bool:
        """Whether a route takes the request; if one does, its endpoint, path parameters and
        route are set in ``scope`` (as Starlette's router sets them) for :func:`endpoints`."""
        found = self.match(scope) if scope["type"] == "http" else None
        if found is None:
            return False
        route, path_params = found
        scope.update(endpoint=route.declared().endpoint, path_params=path_params, route=route)
        return True

    async def refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a request no route takes, as a router's last resort (its exception is the
        app's handlers' to answer): 405 with the methods of the first route on its path, or 404
        when none has it (step 1 of the order of checks); a websocket is closed."""
        if scope["type"] != "http":
            await WebSocketClose()(scope, receive, send)
            return
        path = get_route_path(scope)
        for route in self.routes:
            if route.path_regex.match(path):
                raise HTTPException(405, headers={"Allow": ", ".join(route.operation.methods)})
        raise HTTPException(404)

    def api_router(self) -> Any:
        """An ``APIRouter`` of every route, in the table's order, for the OpenAPI document: never
        served (imports FastAPI and every module)."""
        from fastapi import APIRouter

        router = APIRouter()
        for route in self.routes:
            declared = route.declared()
            methods = list(route.operation.methods)
            router.add_api_route(route.path, declared.endpoint, methods=methods, **declared.options)
        return router


def build(paths: Mapping[str, str] | None = None) -> RouteTable:
    """The route table of the operations, at their default paths but those ``paths`` gives
    ({operation key: path}); checked (see the module docstring).

    Raises:
        RouteTableError: an unknown key, a path with other parameters, a collision.
    """
    paths = dict(paths or {})
    unknown = sorted(set(paths) - set(operations.BY_KEY))
    if unknown:
        raise RouteTableError(f"no such operation: {', '.join(unknown)}")
    for key, path in paths.items():
        default = operations.BY_KEY[key].path
        if not path.startswith("/") or _parameters(path) != _parameters(default):
            raise RouteTableError(f"{key}: {path!r} must start with / and keep {default}'s parameters")
    routes = [Route(op, paths.get(op.key, op.path)) for op in operations.OPERATIONS]
    _check(routes)
    return RouteTable(routes)


def endpoints(handlers: Mapping[Any, ExceptionHandler]) -> ASGIApp:
    """The ASGI app answering a request :meth:`RouteTable.enter` took with its route's endpoint,
    an exception by its handler in ``handlers`` (Starlette's ``ExceptionMiddleware``); any other
    exception goes on."""
    return _Endpoints(handlers)


class _Endpoints:
    """A route's endpoint, called; an exception from it answered by Starlette's
    ``ExceptionMiddleware``, which is built for that exception only. Wrapping every request in
    it cost a second ``Request`` and two more layers for the few that raise (refusals are the
    pipeline's own answers, not exceptions)."""

    def __init__(self, handlers: Mapping[Any, ExceptionHandler]) -> None:
        self.handlers = dict(handlers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            response = await scope["endpoint"](Request(scope, receive, send), **scope["path_params"])
        except Exception as exc:
            await ExceptionMiddleware(_Raise(exc), handlers=self.handlers)(scope, receive, send)
            return
        await response(scope, receive, send)


class _Raise:
    """An ASGI app raising ``exc``: how an endpoint's exception is handed to the middleware."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise self.exc
