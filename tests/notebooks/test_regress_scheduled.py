"""What a scheduled ``kit regress`` leaves for the morning: a valid report whatever the kernels
wrote, ``results.json`` read back as DataFrames, what changed since the last run, and flaky
notebooks found by reruns, their attempts shown in ``report.html`` (every run's ``junit.xml``
and ``results.json`` are also checked against their schemas by
``conftest.reports_follow_their_schemas``)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from types import MappingProxyType

import pytest

from kit import _env as env
from kit import _profiles
from kit.register import personas
from kit.regress import history, load, record
from kit.regress.model import EXIT_FAILED, EXIT_OK, RegressError
from tests.notebooks.helpers import run_cli
from tests.notebooks.junit_check import valid_junit, valid_results
from tests.notebooks.test_regress_drift import notebook
from tests.notebooks.test_regress_html import assert_flaky_page

pytestmark = pytest.mark.papermill

HOSTILE_BYTES = b"\x1b[31mred\x1b[0m \x07 nul:\x00 not utf-8:\xff\xfe\xc3\x28"
HOSTILE = f"""\
import os, sys
os.write(1, {HOSTILE_BYTES!r})
os.write(2, {HOSTILE_BYTES!r})
print("\\x1b[32mgreen\\x1b[0m\\x07\\x00", flush=True)
print("\\x1b[33myellow\\x07\\x00", file=sys.stderr, flush=True)
"""
FAILS_HOSTILE = 'raise ValueError("bad \\x1b[31mred\\x07\\x00 bytes")'


def _cases(junit: Path) -> dict[str, ET.Element]:
    root = ET.parse(junit).getroot()
    return {f"{c.get('classname')}::{c.get('name')}": c for c in root.iter("testcase")}


@pytest.mark.slow  # kit regress runs: ≈5 s
def test_a_report_from_hostile_bytes_is_valid_junit(tmp_path: Path) -> None:
    notebook(tmp_path / "nb", "01_hostile.ipynb", HOSTILE)
    notebook(tmp_path / "nb", "02_hostile_failure.ipynb", HOSTILE, FAILS_HOSTILE)
    code, stdout, stderr = run_cli("--notebooks", str(tmp_path / "nb"), "--out", str(tmp_path / "out"))
    assert code == EXIT_FAILED, stdout + stderr  # the failing notebook, not a crash of the run
    junit = tmp_path / "out" / "junit.xml"
    valid_junit(junit)  # parses (well-formed) and fits the schema
    text = junit.read_text(encoding="utf-8")
    assert "#x1B[31m" in text and "#x07" in text and "#x00" in text
    assert not any(ch in text for ch in "\x1b\x07\x00")
    cases = _cases(junit)
    failure = cases["notebooks::02_hostile_failure"].find("failure")
    assert failure is not None and "#x1B[31mred#x07#x00" in (failure.get("message") or "")
    err = cases["notebooks::01_hostile"].findtext("system-err") or ""
    assert "wrote to stderr" in err
    data = valid_results(tmp_path / "out")
    assert [n["status"] for n in data["notebooks"]] == ["passed", "failed"]


CHECKED = """\
from kit.notebook import check
with check("one and one make two", choice="A01") as c:
    c.expect(1 + 1, 2, what="the sum", show=True)
"""
ADDED = """\
from kit.notebook import check
with check("a check added since", choice="A01") as c:
    c.expect(1 + 1, 2, what="the sum", show=True)
"""
BREAKS = "assert not broken, 'broken on purpose'"


def _suite(folder: Path, *, changed: bool) -> None:
    """The run of last night (``changed=False``) and this morning's: 01 breaks, 02 is fixed,
    03 gets a check, 04 is gone, 05 is new."""
    for old in folder.glob("*.ipynb"):
        old.unlink()
    notebook(folder, "01_breaks.ipynb", f"broken = {changed}", BREAKS)
    notebook(folder, "02_fixed.ipynb", f"broken = {not changed}", BREAKS)
    notebook(folder, "03_slower.ipynb", CHECKED, *([ADDED] if changed else []))
    notebook(folder, "04_gone.ipynb", "pass") if not changed else notebook(folder, "05_new.ipynb", "pass")


@pytest.mark.slow  # kit regress runs: ≈14 s
def test_since_the_last_run_from_two_runs_with_a_change_between(tmp_path: Path) -> None:
    folder, kept = tmp_path / "nb", tmp_path / "history"
    _suite(folder, changed=False)
    first = run_cli("--notebooks", str(folder), "--out", str(tmp_path / "night"), "--history", str(kept))
    assert first[0] == EXIT_FAILED  # 02 fails
    summary = (tmp_path / "night" / "summary.md").read_text(encoding="utf-8")
    assert "No earlier run to compare with" in summary
    _suite(folder, changed=True)
    code, stdout, stderr = run_cli(
        "--notebooks", str(folder), "--out", str(tmp_path / "morning"), "--history", str(kept)
    )
    assert code == EXIT_FAILED, stdout + stderr  # 01 fails now: the comparison changes no status
    assert len(list(kept.glob("results-*.json"))) == 2
    summary = (tmp_path / "morning" / "summary.md").read_text(encoding="utf-8")
    headings = [line for line in summary.splitlines() if line.startswith("## ")]
    assert headings[0] == "## Since the last run"
    rows = {line.split(" | ")[0].lstrip("| "): line for line in summary.splitlines() if line.startswith("| ")}
    assert rows["newly failing"] == "| newly failing | 1 | 01_breaks.ipynb |"
    assert rows["fixed"] == "| fixed | 1 | 02_fixed.ipynb |"
    assert rows["still failing"] == "| still failing | 0 |  |"
    assert rows["notebooks added"] == "| notebooks added | 1 | 05_new.ipynb |"
    assert rows["notebooks removed"] == "| notebooks removed | 1 | 04_gone.ipynb |"
    assert rows["checks added"] == "| checks added | 1 | 03_slower.ipynb: a check added since |"
    assert rows["largest changes in seconds"].startswith("| largest changes in seconds | ")
    since = valid_results(tmp_path / "morning")["since_last_run"]
    assert since["newly_failing"] == ["01_breaks.ipynb"] and since["fixed"] == ["02_fixed.ipynb"]
    assert len(since["largest_changes_in_seconds"]) <= history.LARGEST
    suite = ET.parse(tmp_path / "morning" / "junit.xml").getroot().find("testsuite[@name='notebooks']")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.iterfind("properties/property")}
    assert props["since.newly_failing"] == "01_breaks.ipynb"
    assert props["since.fixed"] == "02_fixed.ipynb"
    # --baseline names the run to compare with: the same night, whatever the history holds
    night, again = str(tmp_path / "night"), str(tmp_path / "again")
    code, stdout, _ = run_cli("02", "--notebooks", str(folder), "--out", again, "--baseline", night)
    assert code == EXIT_OK
    since = valid_results(tmp_path / "again")["since_last_run"]
    assert since["fixed"] == ["02_fixed.ipynb"] and "01_breaks.ipynb" in since["notebooks_removed"]
    assert f"(`{tmp_path / 'night'}`)" in stdout


def test_a_baseline_of_another_format_is_refused_before_any_kernel(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "results.json").write_text('{"format": 99}', encoding="utf-8")
    notebook(tmp_path / "nb", "01_x.ipynb", "pass")
    old, out = str(tmp_path / "old"), str(tmp_path / "out")
    code, _, stderr = run_cli("--notebooks", str(tmp_path / "nb"), "--out", out, "--baseline", old)
    assert code == 2 and "format 99" in stderr and "reads format 1" in stderr
    assert not (tmp_path / "out").exists()
    with pytest.raises(RegressError, match="format 99"):
        load(tmp_path / "old")


def test_the_largest_changes_in_seconds_come_first_and_are_bounded() -> None:
    def run(seconds: dict[str, float]) -> dict[str, object]:
        return {
            "started": "x",
            "notebooks": [{"notebook": n, "status": "passed", "seconds": s} for n, s in seconds.items()],
        }

    before = run({f"{i:02d}_nb.ipynb": 10.0 for i in range(8)})
    now = run({**{f"{i:02d}_nb.ipynb": 10.0 + i for i in range(8)}, "03_nb.ipynb": 2.0})
    changes = history.compare(before, now)["largest_changes_in_seconds"]
    assert [(c["notebook"], c["change"]) for c in changes] == [
        ("03_nb.ipynb", -8.0),
        ("07_nb.ipynb", 7.0),
        ("06_nb.ipynb", 6.0),
        ("05_nb.ipynb", 5.0),
        ("04_nb.ipynb", 4.0),
    ]
    assert len(changes) == history.LARGEST


def test_the_history_keeps_a_bounded_number_of_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history, "KEEP", 3)
    for day in range(1, 6):
        history.keep(tmp_path, {"format": record.FORMAT, "started": f"2026-11-0{day}T03:00:00+00:00"})
    kept = sorted(p.name for p in tmp_path.glob("results-*.json"))
    assert kept == [f"results-202611{d:02d}T0300000000.json" for d in (3, 4, 5)]
    data, source = history.previous(tmp_path, None) or ({}, "")
    assert data["started"].startswith("2026-11-05") and source.endswith(kept[-1])


COUNTS = """\
from pathlib import Path
counter = Path(counters) / NAME
attempt = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(attempt))
"""
FLAKY = """\
from kit.notebook import check
with check("passes the second time", choice="A01") as c:
    c.expect_true(attempt > 1, "a retry", got=f"attempt {attempt} fails", want="attempt 2 or later")
"""
LEAKS_AND_FAILS = f"""\
print("born on", {personas()[0]["date_of_birth"]!r})
raise RuntimeError("and fails")
"""


@pytest.fixture
def staging(monkeypatch: pytest.MonkeyPatch) -> str:
    """A profile other than sim that needs no partner token (the notebooks here connect to
    nothing): what a rerun means off the seeded simulator."""

    class Staging(_profiles.SandboxProfile):
        name = "staging"
        secrets_may_leave = True

    monkeypatch.setattr(_profiles, "PROFILES", MappingProxyType({**_profiles.PROFILES, "staging": Staging}))
    return "staging"


def _rerun_suite(folder: Path) -> None:
    notebook(folder, "01_flaky.ipynb", 'NAME = "01"\n' + COUNTS, FLAKY)
    notebook(folder, "02_broken.ipynb", 'NAME = "02"\n' + COUNTS, "raise AssertionError(f'try {attempt}')")
    notebook(folder, "03_leaky.ipynb", 'NAME = "03"\n' + COUNTS, LEAKS_AND_FAILS)


def _run(folder: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    (out.parent / f"{out.name}-counters").mkdir()
    counters = ("-r", f"counters={out.parent / f'{out.name}-counters'}")
    return run_cli("--notebooks", str(folder), "--out", str(out), *counters, *extra)


@pytest.mark.slow  # kit regress runs: ≈8 s
def test_a_flaky_notebook_off_the_simulator_is_reported_flaky_and_passes(
    staging: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(env.BASE_URL, "https://user:pw@sandbox.example:8443/api?key=v#top")
    _rerun_suite(tmp_path / "nb")
    code, stdout, stderr = _run(
        tmp_path / "nb", tmp_path / "out", "01", "-p", f"profile={staging}", "--reruns", "2"
    )
    assert code == EXIT_OK, stdout + stderr
    assert (tmp_path / "out-counters" / "01").read_text() == "2"  # failed once, passed on the rerun
    assert "1 notebook, all passed — 1 flaky" in stdout.splitlines()[0]
    assert "| 01_flaky.ipynb | **flaky** |" in stdout and "passed on attempt 2; first failed: cell" in stdout
    data = valid_results(tmp_path / "out")
    (nb,) = data["notebooks"]
    assert nb["status"] == "flaky" and len(nb["attempts"]) == 1
    assert "attempt 1 fails" in nb["attempts"][0]["message"]
    assert [c["outcome"] for c in data["checks"]] == ["flaky"]
    case = _cases(tmp_path / "out" / "junit.xml")["notebooks::01_flaky"]
    assert case.find("failure") is None
    flaky = case.findall("flakyFailure")
    assert len(flaky) == 1 and "attempt 1 fails" in (flaky[0].get("message") or "")
    assert "attempt 1 fails" in (flaky[0].findtext("stackTrace") or "")
    notebooks = load(tmp_path / "out").notebooks
    assert notebooks.set_index("notebook").loc["01_flaky.ipynb", "status"] == "flaky"
    assert_flaky_page(tmp_path / "out", server="https://sandbox.example:8443/api")


@pytest.mark.slow  # kit regress runs: ≈15 s
def test_reruns_end_in_a_failure_and_never_rerun_a_leak(staging: str, tmp_path: Path) -> None:
    _rerun_suite(tmp_path / "nb")
    code, stdout, stderr = _run(
        tmp_path / "nb", tmp_path / "out", "-p", f"profile={staging}", "--reruns", "2"
    )
    assert code == EXIT_FAILED, stdout + stderr
    counted = {n: (tmp_path / "out-counters" / n).read_text() for n in ("01", "02", "03")}
    assert counted == {"01": "2", "02": "3", "03": "1"}  # the leak ran once
    statuses = {
        n["notebook"]: (n["status"], len(n["attempts"])) for n in valid_results(tmp_path / "out")["notebooks"]
    }
    assert statuses == {
        "01_flaky.ipynb": ("flaky", 1),
        "02_broken.ipynb": ("failed", 2),
        "03_leaky.ipynb": ("failed", 0),
    }
    cases = _cases(tmp_path / "out" / "junit.xml")
    broken = cases["notebooks::02_broken"]
    assert broken.find("failure") is not None and len(broken.findall("rerunFailure")) == 2
    assert "and leaks: persona-dob" in (cases["notebooks::03_leaky"].find("failure").get("message") or "")  # type: ignore[union-attr]


@pytest.mark.slow  # kit regress runs: ≈9 s
def test_on_the_simulator_a_pass_on_a_rerun_is_not_deterministic(tmp_path: Path) -> None:
    _rerun_suite(tmp_path / "nb")
    code, stdout, stderr = _run(tmp_path / "nb", tmp_path / "out", "01", "--reruns", "1")
    assert code == EXIT_FAILED, stdout + stderr
    assert "| 01_flaky.ipynb | **failed** |" in stdout and "NotDeterministic: failed on attempt 1" in stdout
    (nb,) = valid_results(tmp_path / "out")["notebooks"]
    assert nb["status"] == "failed" and nb["error"].startswith("NotDeterministic")
    failure = _cases(tmp_path / "out" / "junit.xml")["notebooks::01_flaky"].find("failure")
    assert failure is not None and failure.get("type") == "NotDeterministic"


@pytest.mark.slow  # kit regress runs: ≈4 s
def test_results_json_holds_the_run_and_loads_as_dataframes(tmp_path: Path) -> None:
    notebook(tmp_path / "nb", "01_checked.ipynb", CHECKED)
    code, stdout, stderr = run_cli(
        "--notebooks", str(tmp_path / "nb"), "--out", str(tmp_path / "out"), "-p", "seed=11"
    )
    assert code == EXIT_OK, stdout + stderr
    data = valid_results(tmp_path / "out")
    assert data["parameters"] == {"seed": 11} and data["exit_code"] == 0
    assert data["started"] <= data["ended"] and data["api_version"] == "1.2.0-20221215"
    run = load(tmp_path / "out")
    assert list(
        run.checks[["notebook", "title", "kind", "basis", "outcome"]].itertuples(index=False, name=None)
    ) == [("01_checked.ipynb", "one and one make two", "choice", "A01", "passed")]
    assert run.notebooks["status"].tolist() == ["passed"] and run.run["settings"]["reruns"] == 0
    assert json.loads((tmp_path / "out" / "results.json").read_text())["since_last_run"] is None


def test_versions_refuses_the_options_it_does_not_take(tmp_path: Path) -> None:
    versions = "1.1.0,1.2.0-20221215"
    code, _, stderr = run_cli("--versions", versions, "--reruns", "1", "--history", str(tmp_path))
    assert code == 2 and "--versions runs without --reruns, --history" in stderr
