"""An unexpected failure still answers a problem with the service headers and no detail of
the failure (A27, A28: every response carries svc-request-id and svc-api-version). The same
failure in a partner endpoint, served by the route table, is in ``test_sim_app.py``."""

from __future__ import annotations

import asyncio

import httpx

from kit.sim import create_app
from kit.sim.settings import Settings
from tests.sim.helpers.wire import IN_PROCESS


def test_an_unexpected_failure_is_a_problem_with_the_service_headers() -> None:
    app = create_app(Settings(allowed_hosts=IN_PROCESS))

    @app.fastapi().get("/sessions/_explode")
    async def explode() -> None:
        raise RuntimeError("secret-looking internals 000-00-0001")

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://sim") as client:
            return await client.get("/sessions/_explode")

    resp = asyncio.run(call())
    assert resp.status_code == 500
    assert resp.headers["content-type"] == "application/problem+json"
    assert resp.json()["code"] == "internal-error"
    assert resp.headers["svc-api-version"] == "1.2.0-20221215"
    assert resp.headers["svc-request-id"].startswith("req_")
    assert "000-00-0001" not in resp.text and "RuntimeError" not in resp.text
    assert "A21" in resp.headers["svc-assumptions"].split(","), "the 500's shape is A21's choice"


def test_an_unexpected_failure_on_the_legacy_path_is_still_deprecated() -> None:
    """Every answer from the deprecated path carries Deprecation (A03), a 500 included."""
    app = create_app(Settings(allowed_hosts=IN_PROCESS))

    @app.fastapi().api_route(
        "/authorization/server_api/access_tokens", methods=["PURGE"]
    )  # a method no route has
    async def explode() -> None:
        raise RuntimeError("boom")

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://sim") as client:
            return await client.request("PURGE", "/authorization/server_api/access_tokens")

    resp = asyncio.run(call())
    assert resp.status_code == 500
    assert resp.headers["deprecation"] == "@1671062400"
    assert "link" not in resp.headers
    assert {"A03", "A21"} <= set(resp.headers["svc-assumptions"].split(","))
