"""The sandbox profile against a separate ``kit serve --no-control --sandbox-fixtures F``.

``kit serve`` writes the fixtures file for its own personas, as a partner's sandbox publishes
test customers; the tests then use only what a partner has: ``PARTNER_API_*`` credentials and
``PARTNER_API_SANDBOX_FIXTURES`` — no control plane.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import kit
import kit.notebook
from kit import _env as env
from tests.support.launcher import Served, serve_process

CLIENT_ID, CLIENT_SECRET = next(iter(env.SIM_PARTNER_CLIENTS.items()))


@pytest.fixture(scope="session")
def fixtures_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sandbox") / "fixtures.toml"


@pytest.fixture(scope="session")
def sandbox(fixtures_path: Path) -> Iterator[Served]:
    """``kit serve --no-control --sandbox-fixtures F``: the stand-in for a partner's sandbox."""
    with serve_process("--no-control", "--sandbox-fixtures", str(fixtures_path)) as served:
        yield served


def sandbox_variables(base_url: str, fixtures: Path) -> dict[str, str]:
    """The environment of a partner pointing the kit at its sandbox."""
    return {
        env.BASE_URL: base_url,
        env.CLIENT_ID: CLIENT_ID,
        env.CLIENT_SECRET: CLIENT_SECRET,
        env.SANDBOX_FIXTURES: str(fixtures),
    }


def point_at(monkeypatch: pytest.MonkeyPatch, base_url: str, fixtures: Path) -> dict[str, str]:
    """Set the sandbox environment for this test (no handed-over token, no expectation
    overlay inherited from the caller's environment); the variables set."""
    variables = sandbox_variables(base_url, fixtures)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    for name in (env.ACCESS_TOKEN, env.EXPECT_CHOICES, env.PARTNER_CHOICES):
        monkeypatch.delenv(name, raising=False)
    return variables


def regress_on(
    base_url: str, fixtures: Path, out_dir: Path, choices: Path | None = None, selection: tuple[str, ...] = ()
) -> Any:
    """Every notebook of the repository (or those ``selection`` names) run by ``kit regress`` on
    the sandbox profile against the server at ``base_url`` (2 jobs; ``choices``: ``--choices
    FILE``, a dialect the kernels' clients speak and the checks expect); its ``RegressReport``."""
    from kit import regress

    with pytest.MonkeyPatch.context() as patch:
        point_at(patch, base_url, fixtures)
        return regress.run(
            selection,
            notebooks_dir=Path(__file__).resolve().parents[2] / "notebooks",
            out_dir=out_dir,
            parameters={"profile": "sandbox"},
            jobs=2,
            progress=False,
            expect_choices=choices,
        )


def assert_every_notebook_passed(report: Any, count: int) -> None:
    """``count`` notebooks ran, none failed and no check failed."""
    assert len(report.results) == count
    failed = {r.notebook: r.message for r in report.failed}
    assert not failed, failed
    violated = [
        (r.notebook, c.name, c.reason) for r in report.results for c in r.checks if c.outcome == "failed"
    ]
    assert not violated, violated


@pytest.fixture
def sandbox_env(sandbox: Served, fixtures_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    return point_at(monkeypatch, sandbox.base_url, fixtures_path)


@pytest.fixture
def connect(sandbox_env: dict[str, str]) -> Iterator[Callable[..., kit.Client]]:
    """Sandbox clients made as a notebook makes them (``kit.notebook.connect``: its checks are
    judged against the sandbox), closed afterwards; keyword arguments go to ``kit.connect``."""
    with contextlib.ExitStack() as opened:

        def make(**overrides: Any) -> kit.Client:
            options = {"sleep": lambda _: None, **overrides}
            return opened.enter_context(kit.notebook.connect("sandbox", **options))

        yield make


def sandbox_server(factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    """``kit serve --no-control --sandbox-fixtures F`` in a folder of ``factory``: (served, F)."""
    fixtures = factory.mktemp("sandbox") / "fixtures.toml"
    with serve_process("--no-control", "--sandbox-fixtures", str(fixtures)) as served:
        yield served, fixtures
