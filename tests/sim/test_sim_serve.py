"""``kit serve``: the standalone simulator, run as users run it, in a subprocess."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.sim.helpers import (
    API_VERSION,
    Device,
    call,
    init_data,
    new_session,
    partner_token,
)

ROOT = Path(__file__).resolve().parent.parent.parent
START_TIMEOUT_S = 30.0


def _first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    box: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        box.append(proc.stdout.readline())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    return box[0] if box else ""


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "kit", "serve", "--host", "127.0.0.1", "--port", "0", "--seed", "7"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = _first_line(proc, START_TIMEOUT_S)
        match = re.fullmatch(r"Serving on (http://127\.0\.0\.1:\d+)\s*", line)
        if match is None:
            proc.kill()
            _, err = proc.communicate(timeout=5)
            pytest.fail(f"kit serve printed {line!r} first; stderr: {err[-800:]}")
        yield match.group(1)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()


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
