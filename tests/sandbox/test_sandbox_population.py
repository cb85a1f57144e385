"""A population on the sandbox profile is played against the sandbox's server, capped — and
notebook 12 on ``-p profile=sandbox`` does that work there.

The server is ``kit serve --no-control --sandbox-fixtures F`` behind a recording proxy
(:class:`tests.sandbox.proxy.DriftingProxy` without rules): what was done is counted from the
server's own answers as they passed, never from what the kit says of itself.

Bounded: one population of 4 customers (of 40 asked) in 2 shards (≈10 s), and one notebook
(papermill, ≈30 s).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import kit.simulate
from kit import _fixtures as fixtures
from kit import regress
from kit.errors import ConfigError
from kit.notebook import NEEDS
from kit.simulate import SimulationResult
from tests.sandbox.conftest import point_at
from tests.sandbox.proxy import DriftingProxy
from tests.support.launcher import Served

ROOT = Path(__file__).resolve().parents[2]
ASKED, CAP, SHARDS = 40, 4, 2

Answers = list[tuple[str, str, int]]


def answered(answers: Answers, method: str, path: str, status: int) -> int:
    """How many times the server answered ``method path`` with ``status``."""
    return sum(1 for a in answers if a == (method, path, status))


@pytest.fixture(scope="module")
def recorder(sandbox: Served, fixtures_path: Path) -> Iterator[DriftingProxy]:
    """The sandbox behind a recording proxy; the environment points the kit at the proxy."""
    with DriftingProxy(sandbox.base_url, []) as proxy, pytest.MonkeyPatch.context() as patch:
        point_at(patch, proxy.base_url, fixtures_path)
        yield proxy


@pytest.fixture(scope="module")
def population(recorder: DriftingProxy) -> tuple[SimulationResult, Answers]:
    before = len(recorder.answers)
    result = kit.simulate.run(ASKED, seed=7, shards=SHARDS, profile="sandbox", server_cap=CAP, progress=False)
    return result, recorder.answers[before:]


def test_the_sessions_were_created_on_the_sandbox_by_the_capped_population(
    population: tuple[SimulationResult, Answers], recorder: DriftingProxy, fixtures_path: Path
) -> None:
    result, answers = population
    # the cap holds, and every customer onboarded there: one account each, as the server answered
    assert result.partial.customers == CAP and result.settings["requested"] == ASKED
    assert answered(answers, "POST", "/accounts", 201) == CAP
    persons = [a for a in answers if a[0] == "POST" and a[1].endswith("/persons") and a[2] == 201]
    assert len(persons) == CAP
    # sessions: the anonymous and account session of every customer, the person session of each
    # who passed KYC — the server's count, and what the population's clients saw, agree
    established = int(result.funnel.set_index("stage")["customers"]["person_session"])
    sessions = answered(answers, "POST", "/sessions", 201)
    assert sessions == 2 * CAP + established and established >= 1
    seen = result.calls.query("method == 'POST' and operation == '/sessions' and status == 201")
    assert int(seen["calls"].sum()) == sessions
    assert set(result.calls["server"]) == {recorder.base_url} == {result.server}
    # one partner token for the whole run, fetched here and handed to the workers
    assert answered(answers, "POST", "/oauth/accesstoken", 200) == 1
    # the customers were the sandbox's published personas
    assert set(result.customers["persona_id"]) <= {
        p.persona_id for p in fixtures.load(fixtures_path).personas
    }


def test_what_needs_the_control_plane_is_skipped_with_its_reason(
    population: tuple[SimulationResult, Answers],
) -> None:
    result, answers = population
    assert not [a for a in answers if a[1].startswith("/_sim")]  # never asked for
    assert result.money_conserved is None  # not a pass: the ledger was not read
    assert result.skipped["ledger"].endswith(NEEDS["control plane"].reason)
    text = str(result.summary())
    assert "ledger=not checked (needs the simulator's control plane)" in text
    assert "money_conserved" not in text and len(result.ledger) == 0


def test_faults_and_a_cluster_are_refused_before_anything_reaches_the_sandbox(
    recorder: DriftingProxy,
) -> None:
    before = len(recorder.answers)
    with pytest.raises(ValueError, match="faults="):
        kit.simulate.run(3, profile="sandbox", faults="degraded", progress=False)
    with pytest.raises(ConfigError, match="a population on the sandbox profile stays on this machine"):
        kit.simulate.run(3, profile="sandbox", cluster="tcp://127.0.0.1:9", progress=False)
    assert len(recorder.answers) == before


@pytest.mark.slow  # a population against a sandbox: ≈9 s
@pytest.mark.papermill
def test_notebook_12_on_the_sandbox_runs_its_population_there(
    recorder: DriftingProxy, tmp_path: Path
) -> None:
    before = len(recorder.answers)
    report = regress.run(
        ["12"],
        notebooks_dir=ROOT / "notebooks",
        out_dir=tmp_path / "out",
        parameters={"profile": "sandbox"},
        jobs=1,
        progress=False,
    )
    assert report.ok, [(r.notebook, r.message) for r in report.failed]
    answers = recorder.answers[before:]
    # its population's default cap, each customer onboarded on the sandbox (the notebook's own
    # journey needs the control plane and is skipped: every account here is the population's)
    customers = 5
    assert answered(answers, "POST", "/accounts", 201) == customers
    assert answered(answers, "POST", "/sessions", 201) >= 2 * customers
    assert answered(answers, "POST", "/oauth/accesstoken", 200) == 1  # kit regress's token, reused
    (result,) = report.results
    outcomes = {c.name: (c.outcome, c.reason) for c in result.checks}
    passed = {name for name, (outcome, _) in outcomes.items() if outcome == "passed"}
    skipped = {name: reason for name, (outcome, reason) in outcomes.items() if outcome == "skipped"}
    assert any("sessions" in name for name in passed), outcomes
    assert skipped and all(reason == NEEDS["control plane"].reason for reason in skipped.values()), skipped
    assert any("faults" in name for name in skipped) and any("money" in name for name in skipped), skipped
