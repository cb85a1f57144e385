"""Fixtures for the simulator's HTTP contract tests.

One embedded simulator per xdist worker (session scope), reset to seed 7 before every test:
each test starts from the seeded state and talks to it over real HTTP. Separate servers for
strict mode and for the control plane switched off.

Every response a test receives is checked for the headers §3 puts on *every* partner-API
response and for the absence of 5xx answers that were not injected; a miss fails the test
at teardown.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.sim.helpers import API_VERSION, Receiver, partner_token, reset


def _start(**settings: Any) -> Any:
    from kit.sim import Settings
    from kit.sim.server import start_embedded

    return start_embedded(Settings(**settings))


class _Checked(httpx.Client):
    violations: list[str]


def _client(base_url: str) -> _Checked:
    client = _Checked(base_url=base_url, timeout=15.0)
    client.violations = []

    def check(resp: httpx.Response) -> None:
        path = resp.request.url.path
        if path.startswith("/_sim/"):
            return  # the control plane has its own test (test_sim_control)
        where = f"{resp.request.method} {path} -> {resp.status_code}"
        if not resp.headers.get("svc-request-id"):
            client.violations.append(f"no svc-request-id: {where}")
        if resp.headers.get("svc-api-version") != API_VERSION:
            client.violations.append(f"svc-api-version missing or wrong: {where}")
        if resp.status_code >= 500:
            resp.read()
            try:
                code = resp.json().get("code")
            except Exception:
                code = None
            if code != "injected-fault":
                client.violations.append(f"5xx not injected: {where}: {resp.text[:200]}")

    client.event_hooks["response"] = [check]
    return client


@pytest.fixture(scope="session")
def sim_server() -> Iterator[Any]:
    server = _start(seed=7)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def strict_server() -> Iterator[Any]:
    server = _start(seed=7, strict=True)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def nocontrol_server() -> Iterator[Any]:
    server = _start(seed=7, control=False)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def _sim_client(sim_server: Any) -> Iterator[_Checked]:
    with _client(sim_server.base_url) as client:
        yield client


@pytest.fixture(scope="session")
def _strict_client(strict_server: Any) -> Iterator[_Checked]:
    with _client(strict_server.base_url) as client:
        yield client


@pytest.fixture(scope="session")
def _nocontrol_client(nocontrol_server: Any) -> Iterator[_Checked]:
    with _client(nocontrol_server.base_url) as client:
        yield client


def _fresh(client: _Checked) -> Iterator[_Checked]:
    reset(client, 7)
    client.violations.clear()
    yield client
    violations = list(client.violations)
    client.violations.clear()
    assert not violations, "contract violations on responses:\n" + "\n".join(violations)


@pytest.fixture
def http(_sim_client: _Checked) -> Iterator[_Checked]:
    """An httpx client on a simulator freshly reset to seed 7."""
    yield from _fresh(_sim_client)


@pytest.fixture
def strict_http(_strict_client: _Checked) -> Iterator[_Checked]:
    yield from _fresh(_strict_client)


@pytest.fixture
def nocontrol_http(_nocontrol_client: _Checked) -> Iterator[_Checked]:
    _nocontrol_client.violations.clear()
    yield _nocontrol_client
    violations = list(_nocontrol_client.violations)
    _nocontrol_client.violations.clear()
    assert not violations, "contract violations on responses:\n" + "\n".join(violations)


@pytest.fixture
def token(http: httpx.Client) -> str:
    """A partner token of ``sim-partner``."""
    return partner_token(http)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    rec = Receiver()
    yield rec
    rec.close()
