"""An httpx client that checks every partner answer, and the bodies of the fixtures that
serve it (``tests/sim/fixtures.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx

from tests.sim.helpers.contract import served_version
from tests.sim.helpers.control import reset


class CheckedClient(httpx.Client):
    """Records a violation for every partner answer without the contract's ``svc-request-id``
    and ``svc-api-version`` headers or with a 5xx that was not injected (``injected-fault``)."""

    violations: list[str]


def checked_client(base_url: str) -> CheckedClient:
    client = CheckedClient(base_url=base_url, timeout=30.0)
    client.violations = []

    def check(resp: httpx.Response) -> None:
        path = resp.request.url.path
        if path.startswith("/_sim/"):
            return
        where = f"{resp.request.method} {path} -> {resp.status_code}"
        version = resp.headers.get("svc-api-version")
        if not resp.headers.get("svc-request-id") or version != served_version(resp):
            client.violations.append(f"svc-request-id / svc-api-version missing: {where}")
        if resp.status_code >= 500:
            resp.read()
            try:
                code = resp.json().get("code")
            except ValueError:
                code = None
            if code != "injected-fault":
                client.violations.append(f"5xx not injected: {where}: {resp.text[:200]}")

    client.event_hooks["response"] = [check]
    return client


def embedded(**settings: Any) -> Iterator[Any]:
    """A session fixture's body: an embedded simulator with ``settings``, stopped afterwards."""
    from kit.sim import Settings
    from kit.sim.server import start_embedded

    server = start_embedded(Settings(**settings))
    yield server
    server.stop()


def plain_client(server: Any, seed: int = 7) -> Iterator[httpx.Client]:
    """A fixture's body: a plain client on ``server`` reset to ``seed``, closed afterwards (for a
    server speaking a dialect, whose answers the checked client's contract would not read)."""
    with httpx.Client(base_url=server.base_url) as client:
        reset(client, seed)
        yield client


def served_client(server: Any) -> Iterator[CheckedClient]:
    """A session fixture's body: a checked client on ``server``, closed afterwards."""
    with checked_client(server.base_url) as client:
        yield client


def checked(client: CheckedClient, *, reset_to: int | None = 7) -> Iterator[CheckedClient]:
    """Yield ``client`` (reset to ``reset_to`` unless None) and fail on any recorded violation."""
    if reset_to is not None:
        reset(client, reset_to)
    client.violations.clear()
    yield client
    violations = list(client.violations)
    client.violations.clear()
    assert not violations, "contract violations on responses:\n" + "\n".join(violations)
