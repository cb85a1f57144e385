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

from tests.sim.helpers import CheckedClient, Receiver, checked, checked_client, embedded, partner_token


@pytest.fixture(scope="session")
def sim_server() -> Iterator[Any]:
    yield from embedded(seed=7)


@pytest.fixture(scope="session")
def strict_server() -> Iterator[Any]:
    yield from embedded(seed=7, strict=True)


@pytest.fixture(scope="session")
def nocontrol_server() -> Iterator[Any]:
    yield from embedded(seed=7, control=False)


@pytest.fixture(scope="session")
def workers_server() -> Iterator[Any]:
    """Decrypting in a crypto worker process, as ``kit serve`` does by default."""
    yield from embedded(seed=7, crypto_workers=1)


@pytest.fixture(scope="session")
def _workers_client(workers_server: Any) -> Iterator[CheckedClient]:
    with checked_client(workers_server.base_url) as client:
        yield client


@pytest.fixture(params=["_sim_client", "_workers_client"], ids=["decrypt-on-loop", "decrypt-in-worker"])
def both_decrypt_modes(request: pytest.FixtureRequest) -> Iterator[CheckedClient]:
    """The same simulator contract with JWEs decrypted on the event loop, then in a worker.

    Modules whose tests send JWEs use it as their ``http``: every answer, refusal code and
    unchanged nonce must be the same either way.
    """
    yield from checked(request.getfixturevalue(request.param))


@pytest.fixture(scope="session")
def _sim_client(sim_server: Any) -> Iterator[CheckedClient]:
    with checked_client(sim_server.base_url) as client:
        yield client


@pytest.fixture(scope="session")
def _strict_client(strict_server: Any) -> Iterator[CheckedClient]:
    with checked_client(strict_server.base_url) as client:
        yield client


@pytest.fixture(scope="session")
def _nocontrol_client(nocontrol_server: Any) -> Iterator[CheckedClient]:
    with checked_client(nocontrol_server.base_url) as client:
        yield client


@pytest.fixture
def http(_sim_client: CheckedClient) -> Iterator[CheckedClient]:
    """An httpx client on a simulator freshly reset to seed 7."""
    yield from checked(_sim_client)


@pytest.fixture
def strict_http(_strict_client: CheckedClient) -> Iterator[CheckedClient]:
    yield from checked(_strict_client)


@pytest.fixture
def nocontrol_http(_nocontrol_client: CheckedClient) -> Iterator[CheckedClient]:
    yield from checked(_nocontrol_client, reset_to=None)  # no control plane to reset with


@pytest.fixture
def token(http: httpx.Client) -> str:
    """A partner token of ``sim-partner``."""
    return partner_token(http)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    rec = Receiver()
    yield rec
    rec.close()
