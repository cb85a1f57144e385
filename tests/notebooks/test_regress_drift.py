"""``kit regress -p profile=sandbox`` against a stand-in sandbox that drifts: a departure from the
seed is drift (exit status 3, a Contract drift section, JUnit failures), a departure from a
register entry is a difference (listed apart, exit 0 unless --strict-choices) — and against one
that does not: 0, no fixture value in any output, a planted one found."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from kit import _fixtures as fixtures
from kit import register
from kit.regress.model import EXIT_DRIFT, EXIT_FAILED, EXIT_OK
from tests.notebooks.helpers import load, run_cli
from tests.notebooks.junit_check import case_properties
from tests.sandbox.conftest import point_at, sandbox_server
from tests.sandbox.proxy import OTHER_VERSION, DriftingProxy, Rule
from tests.support.launcher import Served

pytestmark = pytest.mark.papermill

VERSION = str(register.spec()["version"])
JOURNEY = """\
import kit.notebook
from kit.lab.journeys import onboard
api = kit.notebook.connect(profile)
done = onboard(api, persona="persona-01", expiration="sliding")
card = api.cards.create(done.account_id, type="temporary")
print(api.cards.get(card.card_id).status, done.status)
"""


def notebook(folder: Path, name: str, *cells: str) -> Path:
    """A notebook of a ``parameters`` cell (``profile = "sim"``) and ``cells``."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "sim"')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, *(nbformat.v4.new_code_cell(c) for c in cells)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    yield from sandbox_server(tmp_path_factory)


def run_sandbox(base_url: str, fixtures: Path, folder: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    """``kit regress --notebooks FOLDER --out OUT -p profile=sandbox *extra`` with a partner's
    environment for the sandbox at ``base_url``."""
    with pytest.MonkeyPatch.context() as mp:
        point_at(mp, base_url, fixtures)
        return run_cli("--notebooks", str(folder), "--out", str(out), "-p", "profile=sandbox", *extra)


def _one(sandbox: tuple[Served, Path], tmp_path: Path, source: str) -> tuple[int, str, str]:
    """One notebook of ``source`` run on the (non-drifting) sandbox."""
    served, fixtures = sandbox
    notebook(tmp_path / "nb", "01_one.ipynb", source)
    return run_sandbox(served.base_url, fixtures, tmp_path / "nb", tmp_path / "out")


@pytest.mark.slow  # kit regress against a stand-in sandbox: ≈19 s
def test_a_drifting_sandbox_fails_the_run_with_its_own_exit_status(
    sandbox: tuple[Served, Path], tmp_path: Path
) -> None:
    served, fixtures = sandbox
    folder = tmp_path / "nb"
    notebook(folder, "01_journey.ipynb", JOURNEY)
    rules = [
        Rule("GET", r"/cards/[^/]+", retype="last4"),  # a field type: register entry A35
        Rule("GET", r"/cards/[^/]+", version=OTHER_VERSION),  # the version the seed states
    ]
    with DriftingProxy(served.base_url, rules) as proxy:
        code, stdout, stderr = run_sandbox(proxy.base_url, fixtures, folder, tmp_path / "out")
        allowed = run_sandbox(proxy.base_url, fixtures, folder, tmp_path / "allowed", "--allow-drift")
    assert code == EXIT_DRIFT, stdout + stderr
    assert "contract drift (1)" in stderr
    summary = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    assert "— contract drift: 1 — 1 register entry differ" in summary.splitlines()[0]
    drift = summary.split("## Contract drift", 1)[1].split("## Differences", 1)[0]
    assert f"| GET /cards/{{card_id}} | header svc-api-version | {VERSION} | {OTHER_VERSION} |" in drift
    assert "body.last4" not in drift and "version.1 |" in drift
    assert (
        "- A35 differs: 01_journey.ipynb — contract GET /cards/{card_id} body.last4: "
        "expected string, got integer"
    ) in summary
    root = ET.parse(tmp_path / "out" / "junit.xml").getroot()
    failures = root.findall(".//testcase/failure[@type='ContractDrift']")
    assert [f.get("message", "").split(" (request")[0] for f in failures] == [
        f"expected {VERSION}, got {OTHER_VERSION}"
    ]
    (differs,) = root.findall(".//testsuite[@name='contract differences']/testcase")
    assert differs.find("failure") is None
    assert case_properties(root, differs) == {"outcome": "differs", "basis": "A35"}
    assert allowed[0] == EXIT_OK, allowed[1] + allowed[2]
    allowed_root = ET.parse(tmp_path / "allowed" / "junit.xml").getroot()
    assert not allowed_root.findall(".//failure")
    assert len(allowed_root.findall(".//testcase/skipped")) == 1


@pytest.mark.slow  # kit regress against a stand-in sandbox: ≈18 s
def test_a_sandbox_that_only_differs_from_choices_passes_unless_strict(
    sandbox: tuple[Served, Path], tmp_path: Path
) -> None:
    served, fixtures = sandbox
    folder = tmp_path / "nb"
    notebook(folder, "01_journey.ipynb", JOURNEY)
    rules = [Rule("GET", r"/cards/[^/]+", drop="created_at"), Rule("POST", r"/accounts", drop="product")]
    with DriftingProxy(served.base_url, rules) as proxy:
        code, stdout, stderr = run_sandbox(proxy.base_url, fixtures, folder, tmp_path / "out")
        strict = run_sandbox(proxy.base_url, fixtures, folder, tmp_path / "strict", "--strict-choices")
    assert code == EXIT_OK, stdout + stderr
    assert "## Contract drift" not in stdout
    assert "- A10 differs: 01_journey.ipynb — contract POST /accounts body.product" in stdout
    assert "- A35 differs: 01_journey.ipynb — contract GET /cards/{card_id} body.created_at" in stdout
    assert "differs from 2 register entries (A10, A35), reported" in stderr
    assert strict[0] == EXIT_FAILED, strict[1] + strict[2]
    root = ET.parse(tmp_path / "strict" / "junit.xml").getroot()
    assert len(root.findall(".//testcase/failure[@type='ChoiceDiffers']")) == 2


@pytest.mark.slow  # kit regress against a stand-in sandbox: ≈6 s
def test_a_sandbox_that_keeps_the_contract_passes_and_nothing_leaks(
    sandbox: tuple[Served, Path], tmp_path: Path
) -> None:
    code, stdout, stderr = _one(sandbox, tmp_path, JOURNEY)
    assert code == EXIT_OK, stdout + stderr
    assert "Contract drift" not in stdout
    executed = (tmp_path / "out" / "01_one.ipynb").read_text(encoding="utf-8")
    assert "active established" in executed
    values = fixtures.load(sandbox[1]).values()
    standalone = [rf"(?<![0-9A-Za-z]){re.escape(v)}(?![0-9A-Za-z])" for v in values if len(v) >= 4]
    assert not [p for p in standalone if re.search(p, executed)]


@pytest.mark.slow  # kit regress against a stand-in sandbox: ≈6 s
def test_a_fixture_value_planted_in_an_output_is_a_leak(sandbox: tuple[Served, Path], tmp_path: Path) -> None:
    plant = (
        "from kit import _fixtures as fixtures\n"
        "print(fixtures.required().persona('persona-02').pii['last_name'].reveal())"
    )
    code, stdout, _ = _one(sandbox, tmp_path, plant)
    assert code == EXIT_FAILED
    assert "fixture-value" in stdout
    executed = load(tmp_path / "out" / "01_one.ipynb")
    assert "Testwell" not in str(executed)  # redacted from the executed notebook
