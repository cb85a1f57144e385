"""Fixtures for the hardening suite (issue #6): one real simulator per xdist worker.

The simulator runs under uvicorn in a thread (``kit.sim.server.start_embedded``), as users
run it; every test that asks for ``http`` starts from the seeded state (``POST /_sim/reset``)
and fails at teardown when any partner answer was a 5xx that the test did not inject.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.hardening.harness import CheckedClient, checked_client
from tests.sim.helpers import checked, embedded, partner_token


@pytest.fixture(scope="session")
def sim_server() -> Iterator[Any]:
    yield from embedded(seed=7)


@pytest.fixture(scope="session")
def _client(sim_server: Any) -> Iterator[CheckedClient]:
    with checked_client(sim_server.base_url) as client:
        yield client


@pytest.fixture
def http(_client: CheckedClient) -> Iterator[CheckedClient]:
    """An httpx client on the simulator, freshly reset to seed 7."""
    yield from checked(_client)


@pytest.fixture
def token(http: httpx.Client) -> str:
    return partner_token(http)
