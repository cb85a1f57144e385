"""Plain routes are served past FastAPI's routing (kit/sim/fastpath.py) with the same answers.

The same seeded journey and the same refusals go to two apps, one with the fast path and one
without it; every status, body (less the random tokens and ciphertexts) and service header
must match, request by request. A probe between the fast path and FastAPI's router records
what FastAPI had to route, so each comparison also shows that the fast path served the rest.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from fastapi import APIRouter, Depends, HTTPException, Request, Response
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Receive, Scope, Send

from kit.sim import Settings, create_app
from kit.sim.fastpath import IndexedRoute, PlainRoute, Routes
from kit.sim.pipeline import Call
from kit.sim.routes import INDEX, MODULES, control, declared_index, partner_module, partner_routers
from tests.sim.helpers import assert_problem, journey, partner_token
from tests.sim.helpers.wire import IN_PROCESS

_RANDOM = ("token", "nonce", "encrypted_")
_HEADERS = ("content-type", "svc-request-id", "svc-assumptions", "svc-session-expires-at", "allow")
Seen = list[tuple[Any, ...]]


class _Probe:
    """Records the requests that reach FastAPI's own exception middleware and router."""

    def __init__(self, app: ASGIApp, routed: list[tuple[str, str]]) -> None:
        self.app, self.routed = app, routed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.routed.append((scope["method"], scope["path"]))
        await self.app(scope, receive, send)


class _InProcess(httpx.BaseTransport):
    """httpx's ASGI transport for a sync client: each request on this transport's own loop."""

    def __init__(self, app: ASGIApp, root_path: str) -> None:
        self.asgi = httpx.ASGITransport(app=app, raise_app_exceptions=False, root_path=root_path)
        self.loop = asyncio.new_event_loop()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        async def send() -> httpx.Response:
            response = await self.asgi.handle_async_request(request)
            return httpx.Response(
                response.status_code, headers=response.headers, content=await response.aread()
            )

        return self.loop.run_until_complete(send())

    def close(self) -> None:
        self.loop.close()


def _masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<random>" if any(part in k for part in _RANDOM) else _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def _record(seen: Seen) -> Callable[[httpx.Response], None]:
    def hook(response: httpx.Response) -> None:
        response.read()
        try:
            body = _masked(response.json())
        except ValueError:
            body = response.text
        headers = tuple(response.headers.get(h) for h in _HEADERS)
        seen.append((response.request.method, response.request.url.path, response.status_code, body, headers))

    return hook


@contextmanager
def _served(fast_path: bool, root_path: str) -> Iterator[tuple[httpx.Client, Seen, list[tuple[str, str]]]]:
    """A client of a new app (seed 7), what it answered, and what FastAPI had to route."""
    app = create_app(Settings(seed=7, fast_path=fast_path, allowed_hosts=IN_PROCESS))
    routed: list[tuple[str, str]] = []
    app.user_middleware.append(Middleware(_Probe, routed=routed))  # innermost: after the fast path
    seen: Seen = []
    hooks = {"response": [_record(seen)]}
    with httpx.Client(
        transport=_InProcess(app, root_path), base_url="http://sim", event_hooks=hooks
    ) as client:
        yield client, seen, routed


def _both(
    exercise: Callable[[httpx.Client], None], root_path: str = ""
) -> list[tuple[Seen, list[tuple[str, str]]]]:
    """``exercise`` run on an app with the fast path, then on one without; the recordings."""
    results = []
    for fast_path in (True, False):
        with _served(fast_path, root_path) as (client, seen, routed):
            exercise(client)
        results.append((seen, routed))
    return results


def _exercise(client: httpx.Client) -> None:
    j = journey(client)  # token, sessions, account, person, KYC, promotion
    token = partner_token(client)
    auth = {"Authorization": f"Bearer {token}"}
    client.get("/cards/card_unknown", headers=auth)  # 404 problem from a plain route
    client.get("/nowhere", headers=auth)  # no route: FastAPI's 404, as problem+json
    client.put("/sessions", headers=auth)  # path known, method not: 405
    client.head("/sessions/user_session_initialization_data", headers=auth)
    client.post("/accounts/acc_1/savings/close")  # removed in 1.2.0
    client.post("/sessions", headers={**auth, "Content-Type": "application/json"}, content=b"{")
    client.post("/p2p/transfers", headers={"Authorization": "Bearer nope"}, json={})
    client.get(f"/persons/{j.person_id}/kyc/questions", headers={**auth, "svc-session-id": j.account_session})
    client.get("/_sim/health")  # control plane: never plain


def test_the_fast_path_answers_exactly_as_fastapi_does() -> None:
    (fast, fast_routed), (slow, slow_routed) = _both(_exercise)
    assert len(fast) == len(slow) > 20
    for a, b in zip(fast, slow, strict=True):
        assert a == b
    # The comparison means something: one app answered through the fast path, the other not.
    not_plain = {
        ("GET", "/nowhere"),
        ("PUT", "/sessions"),
        ("HEAD", "/sessions/user_session_initialization_data"),
    }
    expected = [r for r in fast if r[1].startswith("/_sim/") or (r[0], r[1]) in not_plain]
    assert fast_routed == [(r[0], r[1]) for r in expected]
    assert slow_routed == [(r[0], r[1]) for r in slow]


def test_behind_a_root_path_the_fast_path_still_serves() -> None:
    """uvicorn --root-path /api puts the prefix in the path: each route's own matches() strips it."""

    def exercise(client: httpx.Client) -> None:
        token = partner_token(client, path="/api/oauth/accesstoken")
        auth = {"Authorization": f"Bearer {token}"}
        client.get("/api/sessions/user_session_initialization_data", headers=auth)
        client.get("/api/cards/card_unknown", headers=auth)
        client.get("/api/nowhere", headers=auth)

    (fast, fast_routed), (slow, slow_routed) = _both(exercise, root_path="/api")
    assert [r[2] for r in fast] == [200, 200, 404, 404]
    assert fast[2][3]["code"] == "card-not-found" and fast[3][3]["code"] == "not-found"
    assert fast == slow
    assert fast_routed == [("GET", "/api/nowhere")]
    assert len(slow_routed) == 4


@pytest.mark.parametrize(
    ("failure", "status", "code"),
    [
        (HTTPException(409, headers={"Retry-After": "5"}), 409, "http-error"),
        (RuntimeError("secret-looking internals 000-00-0001"), 500, "internal-error"),
    ],
    ids=["http-exception", "unexpected"],
)
def test_an_exception_from_a_plain_route_goes_to_the_apps_handlers(
    monkeypatch: pytest.MonkeyPatch, failure: Exception, status: int, code: str
) -> None:
    """An HTTPException is the app's 4xx problem (never a 500); anything else its 500 problem."""

    def fail(self: Call, card_id: str) -> Any:
        raise failure

    monkeypatch.setattr(Call, "find_card", fail)

    def exercise(client: httpx.Client) -> None:
        token = partner_token(client)
        resp = client.get("/cards/card_1", headers={"Authorization": f"Bearer {token}"})
        body = assert_problem(resp, status, code)
        assert "000-00-0001" not in resp.text and "RuntimeError" not in resp.text
        if status == 409:
            assert body["detail"] == "Conflict" and resp.headers["retry-after"] == "5"

    (fast, fast_routed), (slow, _) = _both(exercise)
    assert fast == slow
    assert fast_routed == []  # the fast path served the failing request itself


def test_the_index_names_exactly_the_routes_the_modules_declare_in_order() -> None:
    """What the lazy app matches before importing a module (kit.sim.routes.INDEX)."""
    assert declared_index() == INDEX
    assert [name for name, _, _ in INDEX] == sorted((n for n, _, _ in INDEX), key=MODULES.index)


def test_an_indexed_route_imports_its_module_when_chosen_and_refuses_a_stale_entry() -> None:
    loaded: list[str] = []

    def load(module: str) -> Routes:
        loaded.append(module)
        routes: Routes = partner_module(module).router
        return routes

    card = IndexedRoute("cards", ["GET"], "/cards/{card_id}", load)
    scope = {"type": "http", "method": "GET", "path": "/cards/card_9", "root_path": ""}
    assert card.matches(scope)[1] == {"path_params": {"card_id": "card_9"}} and loaded == []
    assert card.matches({**scope, "method": "POST"})[0].name == "PARTIAL"
    assert card.declared().endpoint is partner_module("cards").get_card and loaded == ["cards"]
    card.declared()
    assert loaded == ["cards"]  # once
    stale = IndexedRoute("cards", ["GET"], "/cards/{card_id}/gone", load)
    with pytest.raises(LookupError, match="cards declares no"):
        stale.declared()


def test_every_partner_route_opts_in_and_no_control_route_does() -> None:
    for module in partner_routers():
        routes = module.router.routes
        assert routes and all(isinstance(r, PlainRoute) for r in routes), module.__name__
    assert not any(isinstance(r, PlainRoute) for r in control.router.routes)


async def _needs(request: Request) -> None:
    return None


def _declare(kind: str) -> None:
    router = APIRouter(route_class=PlainRoute)
    if kind == "dependency":

        @router.get("/x", dependencies=[Depends(_needs)])
        async def a(request: Request) -> Response:
            return Response()
    elif kind == "query":

        @router.get("/x")
        async def b(request: Request, q: str) -> Response:
            return Response()
    elif kind == "int-path":

        @router.get("/x/{n}")
        async def c(request: Request, n: int) -> Response:
            return Response()
    elif kind == "returns-dict":

        @router.get("/x")
        async def d(request: Request) -> dict[str, str]:
            return {}
    elif kind == "sync":

        @router.get("/x")
        def e(request: Request) -> Response:
            return Response()
    elif kind == "default":

        @router.get("/x/{name}")
        async def f(request: Request, name: str = "n") -> Response:
            return Response()
    else:

        @router.get("/x/{name}")
        async def g(request: Request, name: str) -> Response:
            return Response()


@pytest.mark.parametrize("kind", ["dependency", "query", "int-path", "returns-dict", "sync", "default"])
def test_a_route_of_another_shape_cannot_opt_in(kind: str) -> None:
    with pytest.raises(TypeError, match="cannot be a PlainRoute"):
        _declare(kind)


def test_a_plain_route_takes_the_request_and_str_path_parameters() -> None:
    _declare("plain")  # no TypeError
