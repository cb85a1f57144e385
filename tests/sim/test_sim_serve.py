"""``kit serve``: the standalone simulator, run as users run it, in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from kit._env import SIM_CONTROL_TOKEN
from tests.sim.helpers.contract import API_VERSION
from tests.sim.helpers.encryption import Device
from tests.sim.helpers.journeys import new_session
from tests.sim.helpers.wire import call, init_data, partner_token, wait_until
from tests.support.launcher import serve_process


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    with serve_process() as server:
        yield server.base_url


def test_kit_serve_token_init_session_account(served: str) -> None:
    with httpx.Client(base_url=served, timeout=10) as http:
        assert http.get("/_sim/health").json()["status"] == "ok"
        tok = partner_token(http)
        init = init_data(http, tok)
        assert init["enc"] == ["A256GCM"]
        session = new_session(http, tok, Device())
        resp = call(http, "POST", "/accounts", token=tok, session=session, json_body={"product": "spending"})
        assert resp.status_code == 201, resp.text
        assert resp.json()["account_id"].startswith("acc_")
        assert resp.json()["balance"] == {"value": "500.00", "currency": "USD"}
        assert resp.headers["svc-api-version"] == API_VERSION


def test_kit_serve_uses_the_seed(served: str, http: httpx.Client) -> None:
    # The same seed gives the same keys as the embedded simulator (reset to seed 7).
    with httpx.Client(base_url=served, timeout=10) as other:
        other.post("/_sim/reset", json={"seed": 7})
        theirs = init_data(other, partner_token(other))["jwks"]
    ours = init_data(http, partner_token(http))["jwks"]
    assert theirs == ours


def test_kit_serve_refuses_a_public_control_plane_without_a_token() -> None:
    # The control plane (A45): off loopback, the control plane needs a control token. The refusal comes
    # before anything is bound, so no non-loopback socket is ever opened here.
    env = {k: v for k, v in os.environ.items() if k != SIM_CONTROL_TOKEN}
    done = subprocess.run(
        [sys.executable, "-m", "kit", "serve", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 2
    assert SIM_CONTROL_TOKEN in done.stderr
    assert done.stdout == ""


def _workers_of(pid: int) -> list[int]:
    """Pids of ``pid``'s crypto worker processes (Linux /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid and b"kit.sim.cryptoworker" in cmdline:
            found.append(int(entry))
    return found


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie has exited
    except OSError:
        return True


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
@pytest.mark.parametrize("workers", [0, 2])
def test_kit_serve_crypto_workers_start_serve_and_stop(workers: int) -> None:
    refused = {"session_type": "anonymous", "expiration_strategy": "fixed", "encrypted_data": "a.b.c.d.e"}
    with serve_process("--crypto-workers", str(workers)) as server:
        proc = server.process
        # 30 s: the first decrypt may wait for a worker process still importing (a loaded CI box)
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            tok = partner_token(http)
            new_session(http, tok, Device())
            bad = call(http, "POST", "/sessions", token=tok, json_body=refused)
            assert bad.status_code == 400 and bad.json()["code"] == "invalid-encrypted-data"
        pids = _workers_of(proc.pid)
        assert len(pids) == workers
        proc.terminate()
        proc.wait(timeout=15)
    # A graceful stop takes its workers with it: none is left running.
    assert wait_until(lambda: all(_gone(pid) for pid in pids), timeout=10)
