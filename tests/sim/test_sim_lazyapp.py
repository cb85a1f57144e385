"""The embedded simulator's app (``kit.sim.lazyapp``): the same answers as ``create_app``'s, byte
for byte, with FastAPI built only for the first request the plain routes do not settle."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from kit.sim import Settings, create_app
from kit.sim import lazyapp as lazyapp_module
from kit.sim.lazyapp import LazyApp, Served
from kit.sim.pipeline import Call
from tests.sim.helpers import partner_token
from tests.sim.helpers.wire import IN_PROCESS
from tests.sim.test_sim_fastpath import _exercise, _InProcess, _masked

Seen = list[tuple[Any, ...]]


def _record(seen: Seen) -> Callable[[httpx.Response], None]:
    def hook(response: httpx.Response) -> None:
        response.read()
        try:
            body: Any = _masked(response.json())
        except ValueError:
            body = response.content
        headers = sorted(response.headers.multi_items())
        seen.append((response.request.method, response.request.url.path, response.status_code, body, headers))

    return hook


@contextmanager
def _served(app: Any, root_path: str = "") -> Iterator[tuple[httpx.Client, Seen]]:
    seen: Seen = []
    with httpx.Client(
        transport=_InProcess(app, root_path), base_url="http://sim", event_hooks={"response": [_record(seen)]}
    ) as client:
        yield client, seen


def _both(exercise: Callable[[httpx.Client], None], root_path: str = "") -> tuple[Seen, Seen, LazyApp]:
    lazy = LazyApp(Settings(seed=7, allowed_hosts=IN_PROCESS))
    with _served(lazy, root_path) as (client, lazy_seen):
        exercise(client)
    with _served(create_app(Settings(seed=7, allowed_hosts=IN_PROCESS)), root_path) as (client, eager_seen):
        exercise(client)
    return lazy_seen, eager_seen, lazy


def _documents(client: httpx.Client) -> None:
    client.get("/openapi.json")
    client.get("/openapi.json", headers={"svc-api-version": "1.1.0-20221001"})
    client.get("/docs")
    client.get("/redoc")


def test_the_lazy_app_answers_every_route_as_create_apps_does() -> None:
    """Status, every header and the body (random tokens masked), request by request."""

    def exercise(client: httpx.Client) -> None:
        _exercise(client)
        _documents(client)
        client.get("/cards/card_1", headers={"svc-api-version": "9.9.9"})  # refused version
        client.post("/_sim/reset", json={"seed": 7})

    lazy, eager, _ = _both(exercise)
    assert len(lazy) == len(eager) > 25
    for a, b in zip(lazy, eager, strict=True):
        assert a == b


def test_kit_serve_serves_create_apps_app_past_fastapis_pass_throughs_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``kit serve``'s app (``Served``): the lean stack is used, and every answer is the same as
    ``create_app``'s own, a refused version, the control plane and an unexpected 500 included,
    also behind a root path."""

    def exercise(client: httpx.Client) -> None:
        _exercise(client)
        _documents(client)
        client.get("/cards/card_1", headers={"svc-api-version": "9.9.9"})

    served = Served(create_app(Settings(seed=7, allowed_hosts=IN_PROCESS)))
    assert served.lean
    with _served(served) as (client, lean_seen):
        exercise(client)
    with _served(create_app(Settings(seed=7, allowed_hosts=IN_PROCESS))) as (client, own_seen):
        exercise(client)
    assert len(lean_seen) == len(own_seen) > 25
    assert lean_seen == own_seen

    def fail(self: Call, card_id: str) -> Any:
        raise RuntimeError("secret-looking internals 000-00-0001")

    monkeypatch.setattr(Call, "find_card", fail)

    def failing(client: httpx.Client) -> None:
        token = partner_token(client, path="/api/oauth/accesstoken")
        client.get("/api/cards/card_1", headers={"Authorization": f"Bearer {token}"})

    with _served(Served(create_app(Settings(seed=7, allowed_hosts=IN_PROCESS))), "/api") as (
        client,
        lean_seen,
    ):
        failing(client)
    with _served(create_app(Settings(seed=7, allowed_hosts=IN_PROCESS)), "/api") as (client, own_seen):
        failing(client)
    assert lean_seen[-1][2] == 500 and lean_seen[-1][3]["code"] == "internal-error"
    assert lean_seen == own_seen


def test_an_app_with_its_own_root_path_is_served_by_fastapi_itself() -> None:
    app = create_app(Settings(seed=7, allowed_hosts=IN_PROCESS))
    app.root_path = "/api"  # FastAPI's own call sets it on every scope: not a pass-through
    assert not Served(app).lean
    assert Served(create_app(Settings(seed=7, allowed_hosts=IN_PROCESS))).lean


def test_plain_requests_never_build_fastapi_and_the_first_other_one_does() -> None:
    def exercise(client: httpx.Client) -> None:
        token = partner_token(client)
        auth = {"Authorization": f"Bearer {token}"}
        client.get("/sessions/user_session_initialization_data", headers=auth)
        client.get("/cards/card_unknown", headers=auth)
        assert not lazy_app.fastapi_built
        client.get("/nowhere", headers=auth)
        assert lazy_app.fastapi_built

    lazy_app = LazyApp(Settings(seed=7, allowed_hosts=IN_PROCESS))
    with _served(lazy_app) as (client, seen):
        exercise(client)
    assert [s[2] for s in seen] == [200, 200, 404, 404]


def test_behind_a_root_path_the_lazy_app_answers_the_same() -> None:
    def exercise(client: httpx.Client) -> None:
        token = partner_token(client, path="/api/oauth/accesstoken")
        client.get("/api/cards/card_unknown", headers={"Authorization": f"Bearer {token}"})
        client.get("/api/nowhere")
        client.get("/api/openapi.json")

    lazy, eager, _ = _both(exercise, root_path="/api")
    assert [s[2] for s in lazy] == [200, 404, 404, 200]
    assert lazy == eager


def test_an_unexpected_failure_in_a_plain_route_is_the_same_500_problem(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fail(self: Call, card_id: str) -> Any:
        raise RuntimeError("secret-looking internals 000-00-0001")

    monkeypatch.setattr(Call, "find_card", fail)

    def exercise(client: httpx.Client) -> None:
        client.get("/cards/card_1", headers={"Authorization": f"Bearer {partner_token(client)}"})

    lazy, eager, built = _both(exercise)
    assert lazy[-1][2] == 500 and lazy[-1][3]["code"] == "internal-error"
    assert "000-00-0001" not in str(lazy[-1])
    assert lazy == eager
    assert not built.fastapi_built


def test_first_requests_racing_the_build_all_get_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads, each with its own loop, ask a fresh app for pages that need FastAPI at once:
    it is built once and nobody gets a 5xx."""
    builds: list[int] = []
    real = lazyapp_module.fastapi_app

    def counted(*args: Any) -> Any:
        builds.append(1)
        return real(*args)

    monkeypatch.setattr(lazyapp_module, "fastapi_app", counted)
    app = LazyApp(Settings(seed=7, allowed_hosts=IN_PROCESS))
    statuses: list[int] = []
    start = threading.Barrier(4)

    def ask() -> None:
        with httpx.Client(transport=_InProcess(app, ""), base_url="http://sim") as client:
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
