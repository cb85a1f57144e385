"""The simulator's one app (``kit.sim.app``): the route table first, FastAPI's app built on first
need; the same answers as a FastAPI app routing everything itself (the parity reference), byte
for byte; the embedded server and ``kit serve`` serving the same app class and route table."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from kit.sim import Settings, create_app
from kit.sim import app as app_module
from kit.sim.app import SimApp
from kit.sim.pipeline import Call
from tests.sim.helpers import assert_problem, journey, partner_token
from tests.sim.helpers.inprocess import InProcess, masked, reference_app
from tests.sim.helpers.wire import IN_PROCESS

Seen = list[tuple[Any, ...]]


def _record(seen: Seen) -> Callable[[httpx.Response], None]:
    def hook(response: httpx.Response) -> None:
        response.read()
        try:
            body: Any = masked(response.json())
        except ValueError:
            body = response.content
        headers = sorted(response.headers.multi_items())
        seen.append((response.request.method, response.request.url.path, response.status_code, body, headers))

    return hook


@contextmanager
def _served(app: Any, root_path: str = "") -> Iterator[tuple[httpx.Client, Seen]]:
    seen: Seen = []
    with httpx.Client(
        transport=InProcess(app, root_path), base_url="http://sim", event_hooks={"response": [_record(seen)]}
    ) as client:
        yield client, seen


def _settings() -> Settings:
    return Settings(seed=7, allowed_hosts=IN_PROCESS)


def _both(exercise: Callable[[httpx.Client], None], root_path: str = "") -> tuple[Seen, Seen, SimApp]:
    """``exercise`` on the app, then on the reference; what each answered, and the app."""
    app = create_app(_settings())
    with _served(app, root_path) as (client, seen):
        exercise(client)
    with _served(reference_app(_settings()), root_path) as (client, reference_seen):
        exercise(client)
    return seen, reference_seen, app


def _exercise(client: httpx.Client) -> None:
    j = journey(client)  # token, sessions, account, person, KYC, promotion
    token = partner_token(client)
    auth = {"Authorization": f"Bearer {token}"}
    client.get("/cards/card_unknown", headers=auth)  # 404 problem from a partner route
    client.get("/nowhere", headers=auth)  # no route: FastAPI's 404, as problem+json
    client.put("/sessions", headers=auth)  # path known, method not: 405
    client.head("/sessions/user_session_initialization_data", headers=auth)
    client.post("/accounts/acc_1/savings/close")  # removed in 1.2.0
    client.delete("/accounts/acc_1/referrals")  # removed: the rest of the methods
    client.get("/authorization/server_api/access_tokens")  # the legacy path's own 405
    client.post("/sessions", headers={**auth, "Content-Type": "application/json"}, content=b"{")
    client.post("/p2p/transfers", headers={"Authorization": "Bearer nope"}, json={})
    client.get(f"/persons/{j.person_id}/kyc/questions", headers={**auth, "svc-session-id": j.account_session})
    client.get("/_sim/health")  # control plane
    client.get("/openapi.json")
    client.get("/openapi.json", headers={"svc-api-version": "1.1.0-20221001"})
    client.get("/docs")
    client.get("/redoc")
    client.get("/cards/card_1", headers={"svc-api-version": "9.9.9"})  # refused version
    client.post("/_sim/reset", json={"seed": 7})


def test_the_app_answers_every_request_as_fastapis_routing_does() -> None:
    """Status, every header and the body (random tokens masked), request by request."""
    seen, reference, _ = _both(_exercise)
    assert len(seen) == len(reference) > 30
    for a, b in zip(seen, reference, strict=True):
        assert a == b


def test_behind_a_root_path_the_app_answers_the_same() -> None:
    def exercise(client: httpx.Client) -> None:
        token = partner_token(client, path="/api/oauth/accesstoken")
        client.get(
            "/api/sessions/user_session_initialization_data", headers={"Authorization": f"Bearer {token}"}
        )
        client.get("/api/cards/card_unknown", headers={"Authorization": f"Bearer {token}"})
        client.get("/api/nowhere")
        client.get("/api/openapi.json")

    seen, reference, _ = _both(exercise, root_path="/api")
    assert [s[2] for s in seen] == [200, 200, 404, 404, 200]
    assert seen[2][3]["code"] == "card-not-found" and seen[3][3]["code"] == "not-found"
    assert seen == reference


@pytest.mark.parametrize(
    ("failure", "status", "code"),
    [
        (HTTPException(409, headers={"Retry-After": "5"}), 409, "http-error"),
        (RuntimeError("secret-looking internals 000-00-0001"), 500, "internal-error"),
    ],
    ids=["http-exception", "unexpected"],
)
def test_an_exception_from_an_endpoint_is_the_same_problem(
    monkeypatch: pytest.MonkeyPatch, failure: Exception, status: int, code: str
) -> None:
    """An HTTPException is the 4xx problem (never a 500); anything else the 500 problem, with no
    detail of the failure; FastAPI's app is not built for it."""

    def fail(self: Call, card_id: str) -> Any:
        raise failure

    monkeypatch.setattr(Call, "find_card", fail)

    def exercise(client: httpx.Client) -> None:
        resp = client.get("/cards/card_1", headers={"Authorization": f"Bearer {partner_token(client)}"})
        body = assert_problem(resp, status, code)
        assert "000-00-0001" not in resp.text and "RuntimeError" not in resp.text
        if status == 409:
            assert body["detail"] == "Conflict" and resp.headers["retry-after"] == "5"

    seen, reference, app = _both(exercise)
    assert seen == reference
    assert not app.fastapi_built


def test_partner_requests_never_build_fastapi_and_the_first_other_one_does() -> None:
    app = create_app(_settings())
    with _served(app) as (client, seen):
        token = partner_token(client)
        auth = {"Authorization": f"Bearer {token}"}
        client.get("/sessions/user_session_initialization_data", headers=auth)
        client.get("/cards/card_unknown", headers=auth)
        assert not app.fastapi_built
        client.get("/nowhere", headers=auth)
        assert app.fastapi_built
    assert [s[2] for s in seen] == [200, 200, 404, 404]


def test_every_partner_operation_is_registered_once_in_the_route_table() -> None:
    """FastAPI's app holds the documents and the control plane only: at each partner
    operation's path, whatever its method, none of its routes matches and its router leaves the
    request to its last resort (the table's 404/405); the documents have every operation the
    table declares for them."""
    app = create_app(_settings())
    fastapi = app.fastapi()
    left: list[tuple[str, str]] = []

    async def last_resort(scope: Scope, receive: Receive, send: Send) -> None:
        left.append((scope["method"], scope["path"]))
        await Response(status_code=204)(scope, receive, send)

    fastapi.router.default = last_resort
    asked = [
        (method, re.sub(r"\{[^}]*\}", "x1", route.path))
        for route in app.table.routes
        for method in route.operation.methods
    ]
    with httpx.Client(transport=InProcess(fastapi), base_url="http://sim") as client:
        for method, path in asked:
            client.request(method, path)
    assert left == asked
    app.openapi()
    documented = {
        (method, path)
        for document in fastapi.state.openapi_documents.values()  # one a version served (A27)
        for path, operations in document["paths"].items()
        for method in operations
    }
    for route in app.table.routes:
        if route.declared().options.get("include_in_schema", True):
            assert {(m.lower(), route.path) for m in route.operation.methods} <= documented, route


def test_first_requests_racing_the_build_all_get_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads, each with its own loop, ask a fresh app for pages that need FastAPI at once:
    it is built once and nobody gets a 5xx."""
    builds: list[int] = []
    real = app_module.fastapi_app

    def counted(*args: Any) -> Any:
        builds.append(1)
        return real(*args)

    monkeypatch.setattr(app_module, "fastapi_app", counted)
    app = create_app(_settings())
    statuses: list[int] = []
    start = threading.Barrier(4)

    def ask() -> None:
        with httpx.Client(transport=InProcess(app), base_url="http://sim") as client:
            start.wait(timeout=30)
            for path in ("/openapi.json", "/nowhere", "/_sim/health", "/cards/card_1"):
                statuses.append(client.get(path).status_code)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(statuses) == sorted([200, 404, 200, 401] * 4)
    assert builds == [1]


def test_the_embedded_server_and_kit_serve_serve_the_same_app_class_and_route_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``kit serve`` hands uvicorn what ``create_app`` makes, as the embedded server does."""
    import uvicorn

    from kit import cli
    from kit.sim.server import start_embedded

    handed: list[Any] = []

    class NoServer:
        started = False

        def __init__(self, config: Any) -> None:
            handed.append(config.app)

        async def serve(self) -> None:
            return None

    monkeypatch.setattr(uvicorn, "Server", NoServer)
    assert cli.main(["serve", "--port", "0", "--no-control"]) == 1  # it never started: NoServer
    embedded = start_embedded(Settings(seed=7))
    try:
        served = embedded._server.config.app
    finally:
        embedded.stop()
    (from_serve,) = handed
    assert type(from_serve) is type(served) is SimApp
    assert [(r.key, r.path) for r in from_serve.table.routes] == [
        (r.key, r.path) for r in served.table.routes
    ]


def test_connect_and_the_first_session_import_neither_fastapi_nor_other_route_modules() -> None:
    """What makes connect cheap (benchmark 9): the first token and session are served plain, and
    only their route modules are imported (the others, the request bodies, the kept records and
    their representations, and the 1.1.0 models on first use)."""
    code = (
        "import sys, kit; api = kit.connect('sim'); api.sessions.create('anonymous'); "
        "assert 'fastapi' not in sys.modules, sorted(m for m in sys.modules if m.startswith('fastapi')); "
        "routes = sorted(m for m in sys.modules if m.startswith('kit.sim.routes.')); "
        "assert routes == [f'kit.sim.routes.{m}' for m in ('oauth', 'sessions')], routes; "
        "later = ('kit.sim.previous', 'kit.sim.bodies', 'kit.sim.records', 'kit.sim.representations'); "
        "assert not [m for m in later if m in sys.modules], [m for m in later if m in sys.modules]; "
        "api.accounts.create(); assert 'kit.sim.routes.onboarding' in sys.modules; "
        "assert 'kit.sim.records' in sys.modules and 'kit.sim.representations' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_uvicorn_is_imported_without_its_command_line_until_that_is_called() -> None:
    code = (
        "import sys, kit.sim.server, uvicorn, uvicorn.server; "
        "assert 'uvicorn.main' not in sys.modules and 'uvicorn.supervisors' not in sys.modules; "
        "assert uvicorn.Server is uvicorn.server.Server and kit.sim.server.uvicorn is uvicorn; "
        "assert uvicorn.main(['--version'], standalone_mode=False) == 0; "
        "real = sys.modules['uvicorn.main']; assert uvicorn.main is real.main and uvicorn.run is real.run"
    )
    command = [sys.executable, "-c", code]
    out = subprocess.run(command, check=True, timeout=120, capture_output=True, text=True)
    assert "uvicorn" in out.stdout  # its --version line


def test_an_embedded_server_that_cannot_listen_says_why_at_once() -> None:
    """The caller waits for the server to say it is up, not for a poll or a timeout: a server that
    cannot bind (192.0.2.1 is a documentation address, on no interface here) fails the start with
    uvicorn's reason, and no thread is left serving."""
    from kit.sim.server import start_embedded

    before = set(threading.enumerate())
    with pytest.raises(RuntimeError, match="did not start"):
        start_embedded(Settings(seed=7), host="192.0.2.1")
    assert not [t for t in set(threading.enumerate()) - before if t.name == "kit-sim"]


def test_the_embedded_server_answers_on_the_loop_it_was_given() -> None:
    """A notebook's simulator runs on the standard library's loop (one client needs no uvloop);
    a population shard asks for uvicorn's choice. Both serve the same answers."""
    from kit.sim.server import start_embedded

    for loop in ("asyncio", "auto"):
        server = start_embedded(Settings(seed=7), loop=loop)
        try:
            answer = httpx.get(f"{server.base_url}/webhooks/jwks")  # no token: the simulator's 401
            assert answer.status_code == 401 and answer.headers["content-type"] == "application/problem+json"
            assert server._server.config.loop == loop
            running = server._server.servers[0].get_loop()
            if loop == "asyncio":
                assert type(running).__module__.startswith("asyncio.")
            else:  # uvicorn's choice: uvloop, which the install brings
                assert type(running).__module__.startswith("uvloop")
        finally:
            server.stop()


def test_at_exit_a_memory_simulator_is_told_to_stop_and_a_durable_one_is_waited_for(tmp_path: Path) -> None:
    """The interpreter's exit does not wait for the graceful shutdown of a simulator whose state
    dies with the process (a daemon thread, told to stop); one keeping a state file is stopped
    and waited for, so its last transaction is in the file."""
    from kit.sim.server import start_embedded

    memory = start_embedded(Settings(seed=7))
    durable = start_embedded(Settings(seed=7, state_file=str(tmp_path / "state.db")))
    try:
        memory.stop_at_exit()
        assert memory._server.should_exit and not memory.running
        durable.stop_at_exit()
        assert not durable._thread.is_alive()
    finally:
        memory.stop()
        durable.stop()
    assert not memory._thread.is_alive()


@pytest.mark.parametrize(
    ("headers", "body", "status", "code"),
    [
        ({}, b"", 401, "invalid-partner-token"),  # step 2
        ({"authorization": "Bearer known", "content-type": "text/x"}, b"x", 415, "unsupported-media-type"),
        ({"authorization": "Bearer known", "idempotency-key": ""}, b"", 400, "idempotency-key-invalid"),  # 4
        ({"authorization": "Bearer known", "svc-session-id": "nope"}, b"", 401, "invalid-session"),  # 5
    ],
    ids=["token", "body", "idempotency", "session"],
)
def test_a_refusal_at_any_step_leaves_run_as_its_answer(
    headers: dict[str, str], body: bytes, status: int, code: str
) -> None:
    """One exit for a Problem: ``run`` answers it whichever step refused, no handler behind it."""
    import asyncio
    from datetime import timedelta

    from starlette.requests import Request

    from kit.sim.pipeline import RouteReply, run
    from kit.sim.state import PartnerToken

    app = create_app(_settings())
    state = app.sim.state
    known = PartnerToken("sim-partner", state.now + timedelta(hours=1))
    state.partner_tokens[state.sealer.digest("known")] = known
    raw = [(k.encode(), v.encode()) for k, v in headers.items()]
    scope = {"type": "http", "method": "POST", "path": "/x", "headers": raw, "query_string": b"", "app": app}
    scope["state"] = {"assumptions": set(), "api_version": app.version}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body}

    answer = asyncio.run(run(Request(scope, receive), lambda call: RouteReply(200, {})))
    assert answer.status_code == status and code in bytes(answer.body).decode()
    assert answer.headers["content-type"] == "application/problem+json"
