"""Plain routes are served past FastAPI's routing (kit/sim/fastpath.py) with the same answers.

The same seeded journey and the same refusals go to two apps, one with the fast path and one
without it; every status, body (less the random tokens and ciphertexts) and service header
must match, request by request.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import APIRouter, Depends, Request, Response

from kit.sim import Settings
from kit.sim.fastpath import PlainRoutes, is_plain
from kit.sim.routes import cards, control, oauth, onboarding, p2p, sessions
from kit.sim.server import start_embedded
from tests.sim.helpers import journey, partner_token

_RANDOM = ("token", "nonce", "encrypted_")
_HEADERS = ("content-type", "svc-request-id", "svc-assumptions", "svc-session-expires-at", "allow")


def _masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<random>" if any(part in k for part in _RANDOM) else _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def _recording() -> tuple[httpx.Client, list[tuple[Any, ...]]]:
    seen: list[tuple[Any, ...]] = []

    def hook(response: httpx.Response) -> None:
        response.read()
        try:
            body = _masked(response.json())
        except ValueError:
            body = response.text
        headers = tuple(response.headers.get(h) for h in _HEADERS)
        seen.append((response.request.method, response.request.url.path, response.status_code, body, headers))

    return httpx.Client(event_hooks={"response": [hook]}), seen


def _plain_routes(server: Any) -> PlainRoutes | None:
    layer = server._server.config.app.middleware_stack
    while layer is not None and not isinstance(layer, PlainRoutes):
        layer = getattr(layer, "app", None)
    return layer


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
    recorded = []
    served = []
    for fast_path in (True, False):
        server = start_embedded(Settings(seed=7, fast_path=fast_path))
        client, seen = _recording()
        try:
            with client:
                client.base_url = httpx.URL(server.base_url)
                _exercise(client)
            layer = _plain_routes(server)
            served.append(layer.served if layer is not None else None)
        finally:
            server.stop()
        recorded.append(seen)
    fast, slow = recorded
    assert len(fast) == len(slow) > 20
    for a, b in zip(fast, slow, strict=True):
        assert a == b
    # The comparison means something: one app answered through the fast path, the other not.
    not_plain = {
        ("GET", "/nowhere"),
        ("PUT", "/sessions"),
        ("HEAD", "/sessions/user_session_initialization_data"),
    }
    expected = [r for r in fast if not r[1].startswith("/_sim/") and (r[0], r[1]) not in not_plain]
    assert served == [len(expected), None]


def test_every_partner_route_is_plain_and_no_control_route_is() -> None:
    for module in (oauth, sessions, onboarding, cards, p2p):
        assert module.router.routes and all(is_plain(r) for r in module.router.routes), module.__name__
    assert not any(is_plain(r) for r in control.router.routes)


async def _needs(request: Request) -> None:
    return None


def _route(router: APIRouter) -> Any:
    return router.routes[-1]


@pytest.mark.parametrize("kind", ["dependency", "query", "int-path", "returns-dict", "sync", "default"])
def test_what_is_not_plain_is_left_to_fastapi(kind: str) -> None:
    router = APIRouter()
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
    else:

        @router.get("/x/{name}")
        async def f(request: Request, name: str = "n") -> Response:
            return Response()

    assert not is_plain(_route(router))


def test_a_plain_route_takes_the_request_and_str_path_parameters() -> None:
    router = APIRouter()

    @router.get("/x/{name}")
    async def g(request: Request, name: str) -> Response:
        return Response()

    assert is_plain(_route(router))
