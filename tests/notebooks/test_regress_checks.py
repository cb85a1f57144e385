"""Named checks through ``kit regress``: counted per notebook in ``summary.md``, one JUnit
testcase each, skipped on a sandbox with their reason — never silently passed."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from kit.notebook import NEEDS
from kit.regress.model import EXIT_FAILED, EXIT_OK
from tests.notebooks.helpers import run_cli
from tests.notebooks.test_regress_drift import notebook, run_sandbox
from tests.sandbox.conftest import sandbox_server
from tests.support.launcher import Served

pytestmark = pytest.mark.papermill

CHECKS = """\
import kit
from kit.notebook import check, skip
api = kit.notebook.connect(profile)
with check("the JWK set has keys"):
    assert api.webhooks.jwks()["keys"]

@check("clock travel moves the clock", needs="control plane")
def _():
    before = api.sim.clock()
    assert api.sim.advance(60) > before

skip("a third-party step", "not offered by this API")
"""
FAILING = """\
from kit.notebook import check
with check("two and two make five"):
    assert 2 + 2 == 5, "arithmetic"
"""
CONTROL_PLANE = NEEDS["control plane"].reason


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    yield from sandbox_server(tmp_path_factory)


def _cases(junit: Path) -> dict[str, ET.Element]:
    root = ET.parse(junit).getroot()
    return {f"{c.get('classname')}::{c.get('name')}": c for c in root.findall(".//testcase")}


def test_checks_on_the_simulator_are_counted_and_reported_one_by_one(tmp_path: Path) -> None:
    folder = tmp_path / "nb"
    notebook(folder, "01_checks.ipynb", CHECKS)
    notebook(folder, "02_failing.ipynb", FAILING)
    code, stdout, stderr = run_cli("--notebooks", str(folder), "--out", str(tmp_path / "out"), "--jobs", "2")
    assert code == EXIT_FAILED, stdout + stderr
    assert "| notebook | ran | passed | failed | skipped |" in stdout
    assert "| 01_checks.ipynb | 2 | 2 | 0 | 1 |" in stdout
    assert "| 02_failing.ipynb | 1 | 0 | **1** | 0 |" in stdout
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


def test_on_a_sandbox_control_plane_checks_are_skipped_with_their_reason(
    sandbox: tuple[Served, Path], tmp_path: Path
) -> None:
    served, fixtures = sandbox
    notebook(tmp_path / "nb", "01_checks.ipynb", CHECKS)
    code, stdout, stderr = run_sandbox(served.base_url, fixtures, tmp_path / "nb", tmp_path / "out")
    assert code == EXIT_OK, stdout + stderr
    assert "| 01_checks.ipynb | 1 | 1 | 0 | 2 |" in stdout
    assert re.search(
        r"- 01_checks.ipynb: skipped — clock travel moves the clock \(cell \d+\): "
        + re.escape(CONTROL_PLANE),
        stdout,
    )
    skipped = _cases(tmp_path / "out" / "junit.xml")["checks.01_checks::clock travel moves the clock"]
    assert skipped.find("skipped") is not None and skipped.find("skipped").get("message") == CONTROL_PLANE  # type: ignore[union-attr]
