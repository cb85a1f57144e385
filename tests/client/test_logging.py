"""The ``kit`` logger: silent by default (a NullHandler), token fetches, retries, drift and
version mismatches at INFO/WARNING with no token, secret or body, nothing built when logging
is off, and ``kit.sim``'s warnings still reaching stderr when nothing is configured."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Callable

import httpx
import pytest

import kit
from kit import _env as env
from kit import _log
from kit._config import resolve
from kit._drift import Drift
from kit._transport import Transport

OLD, NEW = "1.1.0", "1.2.0-20221215"


def test_the_kit_logger_has_a_null_handler() -> None:
    """The client gives the ``kit`` logger a NullHandler, as a library should (in a fresh
    interpreter: ``kit serve`` run in-process by other tests configures the logger for its output)."""
    code = (
        "import logging, kit; kit.connect; "
        "assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger('kit').handlers)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_token_fetches_and_retries_are_logged_without_a_secret(
    make_client: Callable[..., kit.Client], sleeps: list[float], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="kit")
    api = make_client(max_retries=2)
    api.sim.add_fault("GET", "/sessions/user_session_initialization_data", status=503, retry_after=2, times=1)
    api.sessions.init_data()
    token = api.token().token.reveal()
    messages = [(r.name, r.levelname, r.getMessage()) for r in caplog.records]
    client_id, secret = next(iter(env.SIM_PARTNER_CLIENTS.items()))
    assert (
        "kit.auth",
        "INFO",
        f"partner token fetched for client {client_id} (expires in {api.token().expires_in} s)",
    ) in messages
    assert (
        "kit.transport",
        "INFO",
        "GET /sessions/user_session_initialization_data: status 503, retry 1 in 2.00 s",
    ) in messages
    assert sleeps == [2.0]
    assert token not in caplog.text and secret not in caplog.text


@pytest.mark.drift_expected
def test_drift_is_logged_naming_the_field_not_the_values(
    make_client: Callable[..., kit.Client], sim_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    make_client().sim.add_fault("GET", "/webhooks/jwks", status=503, times=1)
    caplog.set_level(logging.INFO, logger="kit")
    client_id, secret = next(iter(env.SIM_PARTNER_CLIENTS.items()))
    with (
        kit.connect(
            "sandbox", base_url=sim_url, client_id=client_id, client_secret=secret, max_retries=0
        ) as api,
        pytest.raises(kit.errors.ServiceUnavailable),
    ):
        api.webhooks.jwks()
    (differs,) = [r for r in caplog.records if r.name == "kit.transport"]
    assert differs.levelname == "INFO"  # a 503 there departs from a register entry, not the seed
    assert differs.getMessage().startswith("GET /webhooks/jwks 503: differs from A21 in status (request req_")
    caplog.clear()
    seed = Drift(
        "version", "GET /cards/{card_id}", "header svc-api-version", "1.2.0", "9.9", "r2", "version.1"
    )
    _log.drift("GET", "/cards/card_1", 200, "r2", [seed])
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "WARNING",
            "GET /cards/card_1 200: contract drift (version.1) in header svc-api-version (request r2)",
        )
    ]
    assert "9.9" not in caplog.text  # the values stay out


def test_a_version_mismatch_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="kit")
    answer = httpx.Response(200, headers={"svc-api-version": NEW, "svc-request-id": "r9"})
    mock = httpx.MockTransport(lambda request: answer)
    options = {"base_url": "http://127.0.0.1:9", "api_version": OLD, "drift": "off", "transport": mock}
    transport = Transport(resolve("sim", options, environ={}), history=kit._history.History())
    with pytest.raises(kit.errors.ApiVersionMismatch):
        transport.request("GET", "/cards/card_1", partner=False)
    transport.close()
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", f"GET /cards/card_1: pinned svc-api-version {OLD}, served {NEW} (request r9)")
    ]


def test_nothing_is_built_when_logging_is_off(
    make_client: Callable[..., kit.Client], sleeps: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    def built(*args: object, **kwargs: object) -> None:
        raise AssertionError("a log message was built with logging off")

    for name in ("retry", "token_fetched", "drift", "version_mismatch"):
        monkeypatch.setattr(_log, name, built)
    logging.getLogger("kit").setLevel(logging.WARNING)  # INFO off (pytest's own level for the test)
    try:
        api = make_client(max_retries=1)
        api.sim.add_fault("GET", "/sessions/user_session_initialization_data", status=503, times=1)
        api.sessions.init_data()
        api.token()
    finally:
        logging.getLogger("kit").setLevel(logging.NOTSET)
    assert len(sleeps) == 1  # the retry happened, unlogged


def test_simulator_warnings_still_reach_stderr_when_nothing_is_configured() -> None:
    code = (
        "import logging, kit._transport\n"
        "logging.getLogger('kit.sim').warning('wall-clock round failed: Boom')\n"
        "logging.getLogger('kit.transport').warning('not shown: the kit logger is silent')\n"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert ran.stderr == "wall-clock round failed: Boom\n"
