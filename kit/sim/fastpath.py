"""Plain routes served straight from their endpoint, past FastAPI's per-request machinery.

Every partner route is ``async def endpoint(request: Request, <str path params>) -> Response``:
it reads the request itself and answers a ready :class:`~starlette.responses.Response`, so
FastAPI has nothing to resolve, validate or serialize. Its routing and dependency layers still
cost about 65 µs a request (issue #7 profile: a third of an init-data request in process), so
:class:`PlainRoutes` matches those routes itself and calls the endpoint directly.

It is exact, not approximate: the first route whose path *and* method match wins, as in
Starlette's router; if that route is not plain, or nothing matches fully, the request goes on
to FastAPI unchanged (its 404/405 problems, OpenAPI, the control plane). The route is recorded
in the scope as Starlette's router would. Errors are answered by the app's own handlers.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from fastapi.routing import APIRoute
from starlette.convertors import StringConvertor
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from kit.sim.problems import OAuthError, Problem

Endpoint = Callable[..., Awaitable[Response]]
_ANY = re.compile("")  # a route without a path pattern (a mount): FastAPI decides


@dataclass(frozen=True)
class _Route:
    route: BaseRoute
    regex: re.Pattern[str]
    methods: frozenset[str]
    endpoint: Endpoint | None  # None: FastAPI serves it (not plain)


def is_plain(route: APIRoute) -> bool:
    """An endpoint taking only the request and str path parameters, answering a Response."""
    if route.dependencies:
        return False
    try:
        hints = typing.get_type_hints(route.endpoint)
    except Exception:  # an annotation we cannot resolve: leave the route to FastAPI
        return False
    returns = hints.pop("return", None)
    if not (inspect.isclass(returns) and issubclass(returns, Response)):
        return False
    if not inspect.iscoroutinefunction(route.endpoint):
        return False
    params = inspect.signature(route.endpoint).parameters
    requests = [name for name in params if hints.get(name) is Request]
    path = [name for name in params if name not in requests]
    return (
        len(requests) == 1
        and set(path) == set(route.param_convertors)
        and all(hints.get(name) is str for name in path)
        and all(isinstance(route.param_convertors[name], StringConvertor) for name in path)
        and all(p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in params.values())
    )


class PlainRoutes:
    """ASGI middleware: serve plain routes directly; hand everything else to ``app``.

    ``routes`` are the app's routes in the order FastAPI matches them (the routers are
    included without prefixes, so each route's own pattern is the one FastAPI uses).
    """

    def __init__(self, app: ASGIApp, routes: Sequence[BaseRoute]) -> None:
        self.app = app
        self._table = [
            _Route(
                r,
                getattr(r, "path_regex", _ANY),
                frozenset(getattr(r, "methods", None) or ()),
                r.endpoint if isinstance(r, APIRoute) and is_plain(r) else None,
            )
            for r in routes
        ]
        self.served = 0  # requests answered here (tests compare it with what they sent)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = scope.get("path", "")
            method = scope["method"]
            for entry in self._table:
                match = entry.regex.match(path)
                if match is None or method not in entry.methods:
                    continue
                if entry.endpoint is None:
                    break
                params = match.groupdict()
                self.served += 1
                scope["route"] = entry.route
                scope["endpoint"] = entry.endpoint
                scope["path_params"] = params
                request = Request(scope, receive, send)
                try:
                    response = await entry.endpoint(request, **params)
                except (Problem, OAuthError) as exc:
                    response = exc.response()
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
