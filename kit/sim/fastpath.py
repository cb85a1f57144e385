"""Plain routes served straight from their endpoint, past FastAPI's per-request machinery.

A partner route opts in by its class: ``APIRouter(route_class=PlainRoute)``. Its endpoint is
``async def endpoint(request: Request, <str path params>) -> Response``: it reads the request
itself and answers a ready :class:`~starlette.responses.Response`, so FastAPI has nothing to
resolve, validate or serialize; a route of another shape is refused when it is declared.
FastAPI's routing and dependency layers cost about 60 µs a request in process, more than most
endpoints themselves, so :class:`PlainRoutes` matches those routes itself and calls the endpoint
directly. Without it the simulator answers about half as many sessions and card reads per
second over HTTP (measured: ``benchmarks/results/fastpath.json``).

It decides as FastAPI's router does: each route's own ``matches()`` (so a ``--root-path`` is
honoured), in the order the app matches them, the first full match wins. When that route is
not plain, or none matches fully, the request goes on to FastAPI unchanged (its 404/405
problems, OpenAPI, the control plane). An exception from a plain endpoint is answered by the
app's own exception handlers, as it would be behind FastAPI's router; one they do not handle
goes on to the app's error middleware (a 500 problem).

    >>> from fastapi import APIRouter
    >>> router = APIRouter(route_class=PlainRoute)
    >>> @router.get("/things/{thing_id}")
    ... async def thing(request: Request, thing_id: str) -> Response:
    ...     return Response(thing_id)
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.convertors import StringConvertor
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

Endpoint = Callable[..., Awaitable[Response]]
Handler = Callable[[Request, Exception], Any]


def why_not_plain(route: APIRoute) -> str | None:
    """Why ``route`` cannot be served past FastAPI, or None when it can."""
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


class PlainRoute(APIRoute):
    """A route :class:`PlainRoutes` may serve; declaring one of another shape raises TypeError."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, endpoint, **kwargs)
        reason = why_not_plain(self)
        if reason is not None:
            raise TypeError(f"{path} cannot be a PlainRoute: {reason}")


def _handler(handlers: Mapping[Any, Handler], exc: Exception) -> Handler | None:
    """The handler the app's exception middleware would choose (500 and Exception are not its)."""
    if isinstance(exc, HTTPException) and exc.status_code in handlers and exc.status_code != 500:
        return handlers[exc.status_code]
    for cls in type(exc).__mro__:
        if cls in handlers and cls is not Exception:
            return handlers[cls]
    return None


class PlainRoutes:
    """ASGI middleware: serve plain routes directly; hand everything else to ``app``.

    ``routes`` are the app's routes in the order FastAPI matches them; ``handlers`` are the
    app's exception handlers (``app.exception_handlers``).
    """

    def __init__(self, app: ASGIApp, routes: Sequence[BaseRoute], handlers: Mapping[Any, Handler]) -> None:
        self.app = app
        self.handlers = handlers
        # Only a route that takes the method can match fully: ask just those, in the app's order.
        taken = [(route, getattr(route, "methods", None)) for route in routes]
        self._any_method = [route for route, methods in taken if methods is None]
        self._by_method = {
            method: [route for route, methods in taken if methods is None or method in methods]
            for method in {m for _, methods in taken for m in methods or ()}
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for route in self._by_method.get(scope["method"], self._any_method):
                match, child_scope = route.matches(scope)
                if match is not Match.FULL:
                    continue
                if isinstance(route, PlainRoute):
                    scope.update(child_scope)  # endpoint, path_params, route
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
