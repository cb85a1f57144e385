"""The simulator fixtures, declared once for every suite (registered by ``tests/conftest.py``).

One embedded simulator per xdist worker (session scope; uvicorn in a thread, as users run
it), reset to seed 7 before every test that asks for ``http``: each test starts from the
seeded state and talks to it over real HTTP. Separate servers for strict mode, for the
control plane switched off and for JWEs decrypted in a crypto worker process.

Every response a test receives through ``http`` is checked for the headers the contract puts
on *every* partner-API response and for the absence of 5xx answers that were not injected;
a miss fails the test at teardown.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.sim.helpers.clients import CheckedClient, checked, embedded, served_client
from tests.sim.helpers.journeys import Journey, journey
from tests.sim.helpers.webhooks import Receiver
from tests.sim.helpers.wire import partner_token

# --- servers (one per worker, started on first use), each with one checked client ------------


def _simulator(name: str, **settings: Any) -> tuple[Any, Any]:
    """The session fixtures ``<name>_server`` (an embedded simulator with ``settings``) and
    ``_<name>_client`` (a checked client on it)."""

    @pytest.fixture(scope="session", name=f"{name}_server")
    def server() -> Iterator[Any]:
        yield from embedded(seed=7, **settings)

    @pytest.fixture(scope="session", name=f"_{name}_client")
    def client(request: pytest.FixtureRequest) -> Iterator[CheckedClient]:
        yield from served_client(request.getfixturevalue(f"{name}_server"))

    return server, client


sim_server, _sim_client = _simulator("sim")
strict_server, _strict_client = _simulator("strict", strict=True)
nocontrol_server, _nocontrol_client = _simulator("nocontrol", control=False)
#: Decrypting in a crypto worker process, as ``kit serve`` does by default.
workers_server, _workers_client = _simulator("workers", crypto_workers=1)


# --- what tests ask for -------------------------------------------------------------------------


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


@pytest.fixture(params=["_sim_client", "_workers_client"], ids=["decrypt-on-loop", "decrypt-in-worker"])
def both_decrypt_modes(request: pytest.FixtureRequest) -> Iterator[CheckedClient]:
    """The same simulator contract with JWEs decrypted on the event loop, then in a worker.

    Modules whose tests send JWEs use it as their ``http``: every answer, refusal code and
    unchanged nonce must be the same either way.
    """
    yield from checked(request.getfixturevalue(request.param))


@pytest.fixture
def token(http: httpx.Client) -> str:
    """A partner token of ``sim-partner``."""
    return partner_token(http)


@pytest.fixture
def pair(http: httpx.Client, token: str) -> tuple[Journey, Journey]:
    """Two established customers of the first partner: a sender and a receiver."""
    return journey(http, token=token), journey(http, persona_index=1, token=token)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    rec = Receiver()
    yield rec
    rec.close()
