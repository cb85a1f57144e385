"""``pip install partner-api-kit`` without extras is enough for a partner back end.

A fresh virtual environment under a temporary folder gets the package from this checkout, no
extra (pip reaches the package index configured on the machine: a minute or less). In it, a
client connects to a ``kit serve --no-control`` on loopback (started here, from this
environment, as a sandbox would be), takes a token, fetches init data and opens a session,
and verifies a webhook signed the way the simulator signs its deliveries, against the JWK set
the server publishes. Nothing of the simulator, the notebooks, the lab or Dask is installed
there, and every part that needs an extra says which one.

Slow (a fresh install): ``make slow`` runs it (or ``pytest -m slow tests/install``), ``make test``
and a plain ``pytest`` do not (pyproject's addopts leave ``slow`` out).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

from kit import _env as env
from kit.sim.crypto import SimKeys
from tests.support.launcher import Served, serve_process

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SEED = 7
#: What a partner back end must not get with the client (issue 30).
NOT_INSTALLED = (
    "fastapi",
    "uvicorn",
    "jupyterlab",
    "papermill",
    "nbval",
    "ipywidgets",
    "ipykernel",
    "matplotlib",
    "dask",
)
INSTALL_TIMEOUT_S = 600

#: Runs inside the light environment; prints one JSON object of what it saw.
SCRIPT = r"""
import importlib, importlib.metadata as md, json, os, subprocess, sys
from pathlib import Path

import kit
import kit.webhooks

seen = {"kit_file": kit.__file__, "version": kit.__version__}
with kit.connect(
    "sandbox",
    base_url=os.environ["LIGHT_BASE_URL"],
    client_id=os.environ["LIGHT_CLIENT_ID"],
    client_secret=os.environ["LIGHT_CLIENT_SECRET"],
    max_retries=0,
) as api:
    init = api.sessions.init_data()
    seen["init_data_kids"] = len(init.kids)
    session = api.sessions.create("anonymous")
    seen["session_type"] = session.session_type
    jwks = api.webhooks.jwks()
    calls = api.history[["method", "path", "status"]].itertuples(index=False)  # a DataFrame
    seen["history"] = [f"{method} {path} {status}" for method, path, status in calls]
    seen["drift"] = len(api.drift)

delivery = json.loads(Path(os.environ["LIGHT_DELIVERY"]).read_text())
event = kit.webhooks.verify(delivery["body"].encode(), delivery["headers"], jwks, seen=set())
seen["event"] = [event.id, event.type, event.kid]
try:
    kit.webhooks.verify(delivery["body"].encode() + b" ", delivery["headers"], jwks, seen=set())
except kit.errors.SignatureInvalid:
    seen["tampered"] = "rejected"

seen["installed"] = sorted(d.metadata["Name"].lower() for d in md.distributions())
seen["missing_extras"] = {}
try:
    kit.connect("sim")
except kit.errors.MissingExtra as exc:
    seen["missing_extras"]["connect_sim"] = [exc.extra, str(exc)]
for module in ("kit.simulate", "kit.widgets", "kit.regress", "kit.sim"):
    try:
        importlib.import_module(module)
    except (ImportError, kit.errors.MissingExtra) as exc:
        seen["missing_extras"][module] = [type(exc).__name__, str(exc)]
command = [sys.executable, "-m", "kit", "serve", "--port", "0"]
served = subprocess.run(command, capture_output=True, text=True, timeout=60)
seen["kit_serve"] = [served.returncode, served.stderr]
print(json.dumps(seen))
"""


@pytest.fixture(scope="module")
def light_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the package installed from this checkout, no extra."""
    home = tmp_path_factory.mktemp("light") / "venv"
    venv.create(home, with_pip=True, clear=True)
    python = home / "bin" / "python"
    pip = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-input", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        env=_clean_env(),
        cwd=home.parent,
    )
    assert pip.returncode == 0, pip.stderr[-3000:]
    return python


def _clean_env(**extra: str) -> dict[str, str]:
    """This environment without anything pointing at this checkout or this virtualenv."""
    dropped = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}
    return {**{k: v for k, v in os.environ.items() if k not in dropped}, **extra}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Served]:
    """``kit serve --no-control`` from this (full) environment: a sandbox on loopback."""
    with serve_process("--no-control", seed=SEED) as served:
        yield served


def _delivery(path: Path) -> Path:
    """A ``card.closed`` delivery signed as the simulator of seed ``SEED`` signs them, now."""
    event_id = "evt_light_install_1"
    body = json.dumps(
        {
            "id": event_id,
            "type": "card.closed",
            "api_version": "1.2.0-20221215",
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "data": {"card_id": "card_light_1", "status": "closed"},
        }
    )
    signature = SimKeys.from_seed(SEED).sign_detached(body.encode(), iat=int(time.time()), event_id=event_id)
    path.write_text(json.dumps({"body": body, "headers": {"svc-webhook-signature": signature}}))
    return path


def test_the_client_alone_connects_and_verifies_webhooks(
    light_python: Path, sandbox: Served, tmp_path: Path
) -> None:
    client_id, secret = next(iter(env.SIM_PARTNER_CLIENTS.items()))
    script = tmp_path / "partner_backend.py"
    script.write_text(SCRIPT)
    run = subprocess.run(
        [str(light_python), str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=_clean_env(
            LIGHT_BASE_URL=sandbox.base_url,
            LIGHT_CLIENT_ID=client_id,
            LIGHT_CLIENT_SECRET=secret,
            LIGHT_DELIVERY=str(_delivery(tmp_path / "delivery.json")),
        ),
    )
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])

    # The installed package, not this checkout.
    assert Path(seen["kit_file"]).is_relative_to(light_python.parents[1])
    # A token, init data and a session, every answer checked against the contract.
    assert seen["init_data_kids"] >= 1 and seen["session_type"] == "anonymous"
    assert seen["history"][:2] == [
        "POST /oauth/accesstoken 200",
        "GET /sessions/user_session_initialization_data 200",
    ]
    assert "POST /sessions 201" in seen["history"] and "GET /webhooks/jwks 200" in seen["history"]
    assert seen["drift"] == 0
    # A delivery signed the simulator's way verifies against the published keys; a changed body does not.
    assert seen["event"] == ["evt_light_install_1", "card.closed", SimKeys.from_seed(SEED).signing_kid]
    assert seen["tampered"] == "rejected"
    # Nothing of the other parts is installed.
    installed = set(seen["installed"])
    assert {"partner-api-kit", "httpx", "joserfc", "pandas", "openapi-core"} <= installed
    assert installed.isdisjoint(NOT_INSTALLED), sorted(installed & set(NOT_INSTALLED))
    # Each part says which extra it needs.
    missing = seen["missing_extras"]
    assert missing["connect_sim"][0] == "sim"
    assert "pip install 'partner-api-kit[sim]'" in missing["connect_sim"][1]
    for module, extra in (("kit.simulate", "lab"), ("kit.widgets", "lab"), ("kit.regress", "regress")):
        assert missing[module][0] == "MissingExtra", (module, missing[module])
        assert f"pip install 'partner-api-kit[{extra}]'" in missing[module][1]
    assert missing["kit.sim"][0] == "ModuleNotFoundError"
    assert "pip install 'partner-api-kit[sim]'" in missing["kit.sim"][1]
    status, stderr = seen["kit_serve"]
    assert status == 2 and "pip install 'partner-api-kit[sim]'" in stderr
