"""Named checks through ``kit regress``: counted per notebook in ``summary.md``, one JUnit
testcase each, skipped on a sandbox with their reason — never silently passed."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from kit.notebook import NEEDS
from kit.notebook.basis import statement_ids
from kit.notebook.checks import EXPECTED_NOTHING
from kit.regress.model import EXIT_FAILED, EXIT_OK
from tests.notebooks.helpers import run_cli
from tests.notebooks.junit_check import case_properties
from tests.notebooks.test_regress_drift import notebook, run_sandbox
from tests.sandbox.conftest import sandbox_server
from tests.support.launcher import Served

pytestmark = pytest.mark.papermill

CHECKS = """\
import kit
from kit.notebook import check, skip
api = kit.notebook.connect(profile)
with check("the JWK set has keys") as c:
    c.expect_true(api.webhooks.jwks()["keys"], "the JWK set has keys", got="none", want="keys")

@check("clock travel moves the clock", needs="control plane")
def _():
    before = api.sim.clock()
    kit.notebook.expect_true(api.sim.advance(60) > before, "the clock moved on", want="a later time")

skip("a third-party step", "not offered by this API")
"""
FAILING = """\
from kit.notebook import check
with check("two and two make five"):
    assert 2 + 2 == 5, "arithmetic"
"""
#: A choice check that differs off the simulator (the code is not the simulator's), the notebook
#: going on after it, then a spec check that fails saying what was expected and what came.
CHOICES = """\
import kit
from kit.notebook import check, refused
api = kit.notebook.connect(profile)
with refused("no-such-code", choice="A43", name="an unknown card is refused with its code") as r:
    api.cards.get("card_0000")
print("went on after", r.status)
with check("the JWK set has keys", spec=SPEC) as c:
    c.expect_true(api.webhooks.jwks()["keys"], "JWK set", got="no keys", want="keys")
"""
FAILING_SPEC = """\
from kit.notebook import check
with check("a status the seed states", spec=SPEC) as c:
    c.expect(409, 404, what="status", show=True)
"""
#: A check that compares nothing: its body runs, no expectation is made.
EMPTY = """\
from kit.notebook import check
with check("a check that compares nothing", spec=SPEC):
    status = 200
"""
CONTROL_PLANE = NEEDS["control plane"].reason
SPEC_ID = min(statement_ids(), default="card.1")


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    yield from sandbox_server(tmp_path_factory)


def _cases(junit: Path) -> dict[str, ET.Element]:
    root = ET.parse(junit).getroot()
    return {f"{c.get('classname')}::{c.get('name')}": c for c in root.findall(".//testcase")}


@pytest.mark.slow  # a kit regress run: ≈7 s
def test_checks_on_the_simulator_are_counted_and_reported_one_by_one(tmp_path: Path) -> None:
    folder = tmp_path / "nb"
    notebook(folder, "01_checks.ipynb", CHECKS)
    notebook(folder, "02_failing.ipynb", FAILING)
    code, stdout, stderr = run_cli("--notebooks", str(folder), "--out", str(tmp_path / "out"), "--jobs", "2")
    assert code == EXIT_FAILED, stdout + stderr
    assert "| notebook | ran | passed | failed | skipped | differ |" in stdout
    assert "| 01_checks.ipynb | 2 | 2 | 0 | 1 | 0 |" in stdout
    assert "| 02_failing.ipynb | 1 | 0 | **1** | 0 | 0 |" in stdout
    # cells as counted in the executed notebook (papermill adds its own around a failure)
    assert re.search(
        r"- 01_checks.ipynb: skipped — a third-party step \(cell \d+\): not offered by this API", stdout
    )
    assert re.search(
        r"- 02_failing.ipynb: failed — two and two make five \(cell \d+\): AssertionError: arithmetic", stdout
    )
    cases = _cases(tmp_path / "out" / "junit.xml")
    assert {"notebooks::01_checks", "notebooks::02_failing"} <= set(cases)
    passed = cases["checks.01_checks::clock travel moves the clock"]
    assert passed.find("skipped") is None and passed.find("failure") is None
    skipped = cases["checks.01_checks::a third-party step"].find("skipped")
    assert skipped is not None and skipped.get("message") == "not offered by this API"
    failure = cases["checks.02_failing::two and two make five"].find("failure")
    assert failure is not None and failure.get("type") == "CheckFailed"


def _with_spec(source: str) -> str:
    return f"SPEC = {SPEC_ID!r}\n" + source


@pytest.mark.slow  # a kit regress run: ≈11 s
def test_a_difference_is_reported_apart_and_fails_only_when_strict(
    sandbox: tuple[Served, Path], tmp_path: Path
) -> None:
    served, fixtures = sandbox
    notebook(tmp_path / "nb", "01_choices.ipynb", _with_spec(CHOICES))
    code, stdout, stderr = run_sandbox(served.base_url, fixtures, tmp_path / "nb", tmp_path / "out")
    assert code == EXIT_OK, stdout + stderr
    assert "went on after 4" in (tmp_path / "out" / "01_choices.ipynb").read_text(encoding="utf-8")
    assert "| 01_choices.ipynb | 2 | 1 | 0 | 0 | 1 |" in stdout
    assert "— 1 register entry differ" in stdout.splitlines()[0]
    assert "## Differences from the simulator's choices" in stdout
    assert re.search(
        r"- A43 differs: 01_choices.ipynb — check 'an unknown card is refused with its code' \(cell \d+\): "
        r"differs from A43: problem code: the simulator chooses 'no-such-code', "
        r"this server answered '[a-z-]+'",
        stdout,
    )
    assert "differs from 1 register entry (A43), reported" in stderr
    root = ET.parse(tmp_path / "out" / "junit.xml").getroot()
    name = "an unknown card is refused with its code"
    (case,) = [c for c in root.iter("testcase") if c.get("name") == name]
    assert case.get("classname") == "checks.01_choices"
    assert case.find("failure") is None and case.find("skipped") is None
    props = case_properties(root, case)
    assert props == {"kind": "choice", "outcome": "differs", "basis": "A43"}
    assert "differs from A43" in (case.findtext("system-out") or "")
    strict = run_sandbox(served.base_url, fixtures, tmp_path / "nb", tmp_path / "strict", "--strict-choices")
    assert strict[0] == EXIT_FAILED, strict[1] + strict[2]
    failure = _cases(tmp_path / "strict" / "junit.xml")[
        "checks.01_choices::an unknown card is refused with its code"
    ].find("failure")
    assert failure is not None and failure.get("type") == "ChoiceDiffers"


@pytest.mark.slow  # a kit regress run: ≈6 s
def test_a_failing_check_says_what_was_expected_in_summary_and_junit(tmp_path: Path) -> None:
    notebook(tmp_path / "nb", "01_failing.ipynb", _with_spec(FAILING_SPEC))
    code, stdout, stderr = run_cli("--notebooks", str(tmp_path / "nb"), "--out", str(tmp_path / "out"))
    assert code == EXIT_FAILED, stdout + stderr
    assert re.search(
        rf"- 01_failing.ipynb: failed — a status the seed states \[spec {re.escape(SPEC_ID)}\] \(cell \d+\): "
        r"status: expected 404, got 409",
        stdout,
    )
    assert "CheckFailed: check 'a status the seed states'" in stdout  # the notebook's row
    failure = _cases(tmp_path / "out" / "junit.xml")["checks.01_failing::a status the seed states"].find(
        "failure"
    )
    assert failure is not None and failure.get("message") == "status: expected 404, got 409"


@pytest.mark.slow  # a kit regress run: ≈5 s
def test_a_check_that_expects_nothing_fails_the_run_saying_so(tmp_path: Path) -> None:
    notebook(tmp_path / "nb", "01_empty.ipynb", _with_spec(EMPTY))
    code, stdout, stderr = run_cli("--notebooks", str(tmp_path / "nb"), "--out", str(tmp_path / "out"))
    assert code == EXIT_FAILED, stdout + stderr
    assert "| 01_empty.ipynb | 1 | 0 | **1** | 0 | 0 |" in stdout
    assert re.search(
        r"- 01_empty.ipynb: failed — a check that compares nothing "
        rf"\[spec {re.escape(SPEC_ID)}\] \(cell \d+\): " + re.escape(EXPECTED_NOTHING),
        stdout,
    )
    assert "CheckFailed: check 'a check that compares nothing'" in stdout  # the notebook's row
    failure = _cases(tmp_path / "out" / "junit.xml")["checks.01_empty::a check that compares nothing"].find(
        "failure"
    )
    assert failure is not None and failure.get("message") == EXPECTED_NOTHING
    data = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert [n["status"] for n in data["notebooks"]] == ["failed"]
    assert [(c["title"], c["outcome"], c["message"]) for c in data["checks"]] == [
        ("a check that compares nothing", "failed", EXPECTED_NOTHING)
    ]


@pytest.mark.slow  # a kit regress run: ≈5 s
def test_on_a_sandbox_control_plane_checks_are_skipped_with_their_reason(
    sandbox: tuple[Served, Path], tmp_path: Path
) -> None:
    served, fixtures = sandbox
    notebook(tmp_path / "nb", "01_checks.ipynb", CHECKS)
    code, stdout, stderr = run_sandbox(served.base_url, fixtures, tmp_path / "nb", tmp_path / "out")
    assert code == EXIT_OK, stdout + stderr
    assert "| 01_checks.ipynb | 1 | 1 | 0 | 2 | 0 |" in stdout
    assert re.search(
        r"- 01_checks.ipynb: skipped — clock travel moves the clock \(cell \d+\): "
        + re.escape(CONTROL_PLANE),
        stdout,
    )
    skipped = _cases(tmp_path / "out" / "junit.xml")["checks.01_checks::clock travel moves the clock"]
    assert skipped.find("skipped") is not None and skipped.find("skipped").get("message") == CONTROL_PLANE  # type: ignore[union-attr]
