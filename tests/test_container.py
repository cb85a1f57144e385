"""The team server's image recipe (``Dockerfile``, ``compose.yaml``), tested as far as a machine
that cannot pull a base image can: the install step is the documented ``[sim]`` install from the
checkout, the image runs as a user of its own, its command and health check name options of the
``kit`` parser and routes of the app, and the same command line starts ``kit serve`` and the
health check finds it healthy, with its control plane and without (``--no-control``).

``kit serve`` runs on loopback here, as everywhere in the tests; that the container's binding
beyond loopback accepts these settings is asked of the start refusal itself (A70).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from kit import _env, _health
from kit._choicetool import template
from kit._extras import EXTRAS
from kit.cli import build_parser
from kit.sim import Settings, create_app
from kit.sim.guard import start_refusal
from tests.support.launcher import serve_process

ROOT = Path(__file__).resolve().parent.parent
#: What an operator exports before ``docker compose up`` (compose.yaml requires both).
ENV = {
    _env.SIM_CONTROL_TOKEN: "a-control-token-of-32-characters",
    _env.SIM_PARTNERS: "team-app:a-long-secret",
}


def _instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions, (KEYWORD, arguments), continuations joined."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def _one(keyword: str) -> str:
    (found,) = [arguments for name, arguments in _instructions() if name == keyword]
    return found


def _compose() -> dict[str, Any]:
    (service,) = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))["services"].values()
    return dict(service)


def _serve_argv() -> list[str]:
    """``kit serve``'s arguments in the container: the ENTRYPOINT's, then compose's command,
    whose ``${NAME:-default}`` takes its default."""
    entry = json.loads(_one("ENTRYPOINT"))
    assert entry[:2] == ["kit", "serve"] and json.loads(_one("CMD")) == []
    command = [
        part.split(":-", 1)[1].rstrip("}") if part.startswith("${") else part
        for part in _compose()["command"]
    ]
    return [*entry[2:], *command]


def _option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def _health_argv() -> list[str]:
    options, _, command = _one("HEALTHCHECK").partition(" CMD ")
    assert "--interval" in options and "--retries" in options
    return list(json.loads(command))


def test_the_image_installs_the_sim_extra_from_the_checkout() -> None:
    instructions = _instructions()
    installs = [arguments for name, arguments in instructions if name == "RUN" and "pip install" in arguments]
    assert installs == ["pip install --no-cache-dir '.[sim]'"]
    assert ("COPY", ". .") in instructions and ("WORKDIR", "/src") in instructions
    extra = shlex.split(installs[0])[-1].removeprefix(".[").removesuffix("]")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert extra == "sim" and extra in pyproject["project"]["optional-dependencies"] and extra in EXTRAS
    assert "pip install '.[sim]'" in (ROOT / "docs" / "team-server.md").read_text(encoding="utf-8")
    assert ".git" in (ROOT / ".dockerignore").read_text(encoding="utf-8").split()


def test_the_image_runs_as_a_user_of_its_own() -> None:
    names = [name for name, _ in _instructions()]
    user = _one("USER")
    assert user not in ("root", "0") and f"useradd --create-home --uid 10001 {user}" in " ".join(
        arguments for name, arguments in _instructions() if name == "RUN"
    )
    assert names.index("USER") > max(i for i, name in enumerate(names) if name == "RUN")


def test_its_command_and_health_check_name_options_and_routes_that_exist() -> None:
    parser = build_parser()
    serve = parser.parse_args(["serve", *_serve_argv()])  # an unknown option: SystemExit
    assert (serve.host, serve.port) == ("0.0.0.0", 8000)
    health = parser.parse_args(_health_argv()[1:])
    assert _health_argv()[:2] == ["kit", "health"] and health.func is _health._run
    url = urlsplit(health.url)
    assert _env.is_loopback(url.hostname or "") and url.port == serve.port and url.scheme == "http"
    # the routes it asks for: the control plane's health, else the document every server serves
    with_control, without = create_app(Settings()), create_app(Settings(control=False))
    assert _health.HEALTH_PATH in with_control.openapi()["paths"]
    assert _health.HEALTH_PATH not in without.openapi()["paths"]
    assert _health.OPENAPI_PATH == without.fastapi().openapi_url == with_control.fastapi().openapi_url


def test_compose_mounts_the_state_the_dialect_and_passes_the_secrets() -> None:
    argv, service = _serve_argv(), _compose()
    state_folder = str(Path(_option(argv, "--state")).parent)
    assert json.loads(_one("VOLUME")) == [state_folder]
    mounts = {m if isinstance(m, str) else m["target"] for m in service["volumes"]}
    assert f"kit-state:{state_folder}" in mounts and _option(argv, "--choices") in mounts
    assert set(service["environment"]) == {_env.SIM_CONTROL_TOKEN, _env.SIM_PARTNERS}
    assert all(":?" in value for value in service["environment"].values())  # required, no default
    assert _option(argv, "--allowed-host")  # the name colleagues reach it under


def _container_argv(tmp_path: Path) -> list[str]:
    """The container's ``kit serve`` arguments for a run here: its files in ``tmp_path``, and
    the address and port the launcher gives (loopback, a free port)."""
    argv = _serve_argv()
    for option in ("--host", "--port"):
        del argv[argv.index(option) : argv.index(option) + 2]
    dialect = tmp_path / "dialect.toml"
    dialect.write_text(template(), encoding="utf-8")  # kit choices template: the guide's start
    argv[argv.index("--state") + 1] = str(tmp_path / "team.kitstate")
    argv[argv.index("--choices") + 1] = str(dialect)
    return argv


def _health_check(base_url: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The HEALTHCHECK's command, asking ``base_url`` instead of the container's port."""
    argv = _health_argv()
    argv[argv.index(_health.DEFAULT_URL)] = base_url
    environ = {k: v for k, v in os.environ.items() if k != _env.SIM_CONTROL_TOKEN}
    return subprocess.run(
        [sys.executable, "-m", "kit", *argv[1:]],
        capture_output=True,
        text=True,
        timeout=60,
        env={**environ, **env},
    )


@pytest.mark.slow  # the image's command line started: ≈9 s
@pytest.mark.parametrize("control", [True, False], ids=["control-plane", "no-control"])
def test_the_same_command_line_starts_and_answers_healthy(tmp_path: Path, control: bool) -> None:
    argv = [*_container_argv(tmp_path), *([] if control else ["--no-control"])]
    partners = _env.parse_partners(ENV[_env.SIM_PARTNERS])
    beyond = Settings(
        host="0.0.0.0", partners=partners, control=control, control_token=ENV[_env.SIM_CONTROL_TOKEN]
    )
    assert start_refusal(beyond) is None  # the container binds beyond loopback with these
    with serve_process(*argv, env=ENV) as served:
        done = _health_check(served.base_url, ENV)
        assert done.returncode == 0, done.stderr
        assert (
            done.stdout.startswith("healthy:")
            and ("(control plane)" if control else "(no control plane)") in done.stdout
        )
        if control:  # the control token is what lets it in
            healthy, why = _health.probe(served.base_url, None)
            assert not healthy and "401 (invalid-control-token)" in why
    assert (tmp_path / "team.kitstate").is_file()  # the state went to the file --state names


def test_kit_health_never_sends_the_control_token_in_clear_beyond_loopback() -> None:
    healthy, why = _health.probe("http://kit.example.org:8000", ENV[_env.SIM_CONTROL_TOKEN])
    assert not healthy and "in clear" in why
    healthy, why = _health.probe("http://127.0.0.1:9", None, timeout=2)  # nothing listens there
    assert not healthy and "ConnectError" in why
