"""Where a population plays: the profile says (``own_servers``), not its name; another profile's
population is capped, cycles the published personas, refuses faults and a cluster before
anything runs, and hands its server's settings to local workers through their environment.

No server here (the sandbox runs are in ``tests/sandbox/test_sandbox_population.py``); one
worker process started (≈2 s).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import kit.simulate
from kit import _env as env
from kit import _fixtures as fixtures
from kit._profiles import SandboxProfile, SimProfile
from kit.errors import ConfigError, FixturesError
from kit.lab.populations.pool import Pool
from kit.lab.populations.target import DEFAULT_SERVER_CAP, Target


class Staging(SandboxProfile):
    name = "staging"


def _published(folder: Path, ids: list[str]) -> Path:
    path = folder / "fixtures.toml"
    people = [
        {
            "persona_id": i,
            "first_name": f"F{n}",
            "last_name": f"L{n}",
            "date_of_birth": "1980-01-0" + str(n + 1),
            "national_id": f"ID-{n}",
            "kyc": {"q": "a"},
        }
        for n, i in enumerate(ids)
    ]
    path.write_text(fixtures.render(people), encoding="utf-8")
    return path


@pytest.fixture
def staging_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = _published(tmp_path, ["alpha", "beta", "gamma"])
    for name, value in {
        env.BASE_URL: "http://127.0.0.1:9",
        env.CLIENT_ID: "partner",
        env.CLIENT_SECRET: "s3cret-value",
        env.SANDBOX_FIXTURES: str(path),
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv(env.ACCESS_TOKEN, raising=False)
    return path


def test_the_profile_says_whether_shards_run_their_own_simulators() -> None:
    assert SimProfile.own_servers and not SandboxProfile.own_servers and not Staging.own_servers
    sim = Target.of("sim")
    assert sim.own and sim.cap is None and sim.personas is None and sim.server is None
    assert sim.customers(10_000) == 10_000 and sim.skipped == {} and sim.environment() == {}


def test_another_profile_is_capped_and_cycles_its_published_personas(staging_env: Path) -> None:
    target = Target.of(Staging, server_cap=4)
    assert not target.own and target.server == "http://127.0.0.1:9" and target.name == "staging"
    assert target.customers(1000) == 4 and target.customers(2) == 2
    assert "control plane" in target.skipped["ledger"]
    plans = kit.simulate.plan(120, seed=7, profile=Staging, server_cap=4)
    assert [p.persona_id for p in plans] == ["alpha", "beta", "gamma", "alpha"]
    assert [p.customer for p in plans] == [0, 1, 2, 3]
    # the same draws as the simulator's plans of those customers, only the personas differ
    ours = kit.simulate.plan(4, seed=7)
    assert [p.fails_kyc for p in plans] == [p.fails_kyc for p in ours]
    assert len(kit.simulate.plan(120, seed=7, profile="sandbox")) == DEFAULT_SERVER_CAP == 5


def test_what_another_profile_cannot_do_is_refused_before_anything_runs(staging_env: Path) -> None:
    # faults need each shard's own simulator; a cluster would carry the sandbox's secrets away
    with pytest.raises(ValueError, match="faults= are injected through each shard's own simulator"):
        kit.simulate.run(10, profile=Staging, faults="flaky", progress=False)
    with pytest.raises(ConfigError, match=r"stays on this machine.*Drop cluster="):
        kit.simulate.run(10, profile="sandbox", cluster="tcp://127.0.0.1:9", progress=False)
    with pytest.raises(ValueError, match="server_cap must be >= 1"):
        kit.simulate.run(10, profile="sandbox", server_cap=0, progress=False)
    Target.of("sim").refuse([{"method": "POST"}], "tcp://127.0.0.1:9")  # the simulator's may leave


def test_missing_settings_or_fixtures_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (env.BASE_URL, env.CLIENT_ID, env.CLIENT_SECRET, env.SANDBOX_FIXTURES):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError, match=env.BASE_URL):
        kit.simulate.run(5, profile="sandbox", progress=False)
    monkeypatch.setenv(env.BASE_URL, "http://127.0.0.1:9")
    monkeypatch.setenv(env.CLIENT_ID, "partner")
    monkeypatch.setenv(env.CLIENT_SECRET, "s3cret-value")
    with pytest.raises(FixturesError, match=env.SANDBOX_FIXTURES):
        kit.simulate.plan(5, profile="sandbox")


def test_a_handed_token_is_reused_and_passed_with_the_settings(
    staging_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(env.ACCESS_TOKEN, "handed-token")  # as kit regress hands it to a kernel
    given = Target.of("sandbox").environment()  # no token exchange: the server here answers nothing
    assert given == {
        env.BASE_URL: "http://127.0.0.1:9",
        env.CLIENT_ID: "partner",
        env.CLIENT_SECRET: "s3cret-value",
        env.SANDBOX_FIXTURES: str(staging_env),
        env.ACCESS_TOKEN: "handed-token",
    }


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_get_the_server_settings_in_their_environment_never_their_command_line() -> None:
    token = "tok-only-in-the-environment"
    pool = Pool(1, {env.ACCESS_TOKEN: token, env.BASE_URL: "http://127.0.0.1:9"})
    try:
        pid = pool.workers[0].pid
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    finally:
        pool.close()
    assert not any(token.encode() in part for part in command)
    assert b"--clients" in command  # it starts no simulator
    assert f"{env.ACCESS_TOKEN}={token}".encode() in environ
    assert token not in os.environ.get(env.ACCESS_TOKEN, "")  # this process's environment unchanged
