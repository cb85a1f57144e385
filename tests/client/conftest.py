"""Fixtures for the client tests: one embedded simulator per process, reset between tests.

The tests speak HTTP to the real simulator (uvicorn in a thread), as users do. Each test
starts from the seeded state (``POST /_sim/reset``) and gets clients whose retry sleeps are
recorded instead of slept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

import kit
from kit._drift import Drift
from kit._embedded import embedded_base_url
from kit._hooks import Hooks
from kit.lab import journeys

SEED = 7


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "drift_expected: the test talks to a stand-in that drifts on purpose")


#: Contract drift met by the tests of this folder (test id → rows): the simulator must keep
#: its own contract (``data/openapi.json``), so this stays empty.
DRIFT: dict[str, list[str]] = {}
#: Every drift row the clients of ``make_client`` met, through their ``drift`` hook.
MET: list[Drift] = []
WATCH = Hooks(drift=(MET.extend,))


@pytest.fixture(autouse=True)
def contract_kept(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every answer a client of ``make_client`` received in the test matched the contract
    (its ``drift`` hook saw nothing).

    A test that talks to a stand-in on purpose (a mock transport, a drifting proxy) marks
    itself ``@pytest.mark.drift_expected``.
    """
    start = len(MET)
    yield
    found = MET[start:]
    if found and request.node.get_closest_marker("drift_expected") is None:
        DRIFT[request.node.nodeid] = [str(d) for d in found]
        pytest.fail(f"contract drift: {found[:3]}", pytrace=False)


@pytest.fixture(scope="session", autouse=True)
def no_drift_in_the_client_suite() -> Iterator[None]:
    """After the whole client suite: no drift at all (the per-test check names the test)."""
    yield
    assert not DRIFT, f"contract drift in {sorted(DRIFT)}"


@pytest.fixture(scope="session")
def sim_url() -> str:
    return embedded_base_url()


@pytest.fixture
def reset_sim(sim_url: str) -> str:
    response = httpx.post(f"{sim_url}/_sim/reset", json={"seed": SEED})
    assert response.status_code == 200, response.text
    return sim_url


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make_client(reset_sim: str, sleeps: list[float]) -> Iterator[Callable[..., kit.Client]]:
    made: list[kit.Client] = []

    def make(**overrides: Any) -> kit.Client:
        overrides.setdefault("sleep", sleeps.append)
        overrides.setdefault("seed", 1)
        overrides.setdefault("hooks", WATCH)
        client = kit.connect("sim", **overrides)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.fixture
def api(make_client: Callable[..., kit.Client]) -> kit.Client:
    return make_client()


@dataclass(frozen=True)
class Customer:
    api: kit.Client
    account_id: str
    person_id: str


def onboard(api: kit.Client, persona: int = 0, *, promote: bool = True) -> Customer:
    """anonymous (sliding) → account → person with KYC (:func:`kit.lab.journeys.onboard`)."""
    done = journeys.onboard(api, persona=persona, expiration="sliding", promote_to_person=promote)
    assert done.status == "established" and done.person_id is not None
    return Customer(api, done.account_id, done.person_id)


class Recorder(httpx.BaseTransport):
    """Wraps a client's httpx transport and records request lines and chosen headers."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.requests: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.inner.handle_request(request)


def record(api: kit.Client) -> Recorder:
    """Install a :class:`Recorder` under the client's httpx.Client."""
    client = api._requestor.transport._client
    recorder = Recorder(client._transport)
    client._transport = recorder
    # httpx routes by mounts first; none are configured, so _transport is used.
    return recorder
