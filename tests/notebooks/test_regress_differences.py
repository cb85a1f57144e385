"""Differences in the reports, without a kernel: counted apart, listed by entry (each line names
the entry and says "differs"), a JUnit testcase with properties, failing only when strict."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from kit._drift import Drift
from kit.regress import junit, reports
from kit.regress.model import EXIT_DRIFT, EXIT_FAILED, EXIT_OK, CheckResult, NotebookResult, RegressReport
from tests.notebooks.junit_check import case_properties, valid_junit

OUT = Path("out/regress")
REASON = (
    "differs from A16: problem code: the simulator chooses 'card-already-closed', this server answered 'gone'"
)
CHECKS = (
    CheckResult("a closed card is refused", "passed", "", "cell 3", "spec", "card.1"),
    CheckResult("refused with card-already-closed", "differs", REASON, "cell 4", "choice", "A16"),
    CheckResult(
        "card id format",
        "failed",
        "card id: expected 'card_ + 20 hex', got 'UUID'",
        "cell 5",
        "choice",
        "A41",
    ),
)
CREATED = Drift(
    "body", "GET /cards/{card_id}", "body.created_at", "present (required)", "missing", "r1", "A35"
)
VERSION = Drift(
    "version", "GET /cards/{card_id}", "header svc-api-version", "1.2.0", "9.9", "r2", "version.1"
)


def _result(drift: tuple[Drift, ...] = (CREATED, CREATED)) -> NotebookResult:
    return NotebookResult("05_cards.ipynb", "passed", 1.0, OUT, checks=CHECKS, drift=drift)


def _report(result: NotebookResult, **flags: bool) -> RegressReport:
    return RegressReport((result,), OUT, OUT / "junit.xml", OUT / "summary.md", "", **flags)


def test_the_summary_counts_and_lists_differences_by_entry() -> None:
    text = reports.summary([_result()], {}, OUT, 1, 60)
    assert text.splitlines()[0] == "# kit regress: 1 notebook, all passed — 2 register entries differ"
    assert "| 05_cards.ipynb | 3 | 1 | **1** | 0 | 1 |" in text
    assert "- 05_cards.ipynb: failed — card id format [choice A41] (cell 5): card id: expected" in text
    section = text.split("## Differences from the simulator's choices", 1)[1]
    assert "2 register entries (A16, A35) differ on this server, 3 time(s)" in section
    lines = [ln for ln in section.splitlines() if ln.startswith("- ")]
    assert lines == [
        f"- A16 differs: 05_cards.ipynb — check 'refused with card-already-closed' (cell 4): {REASON}",
        "- A35 differs: 05_cards.ipynb — contract GET /cards/{card_id} body.created_at: "
        "expected present (required), got missing (2 times)",
    ]
    assert "## Contract drift" not in text  # a difference from a choice is not drift


def test_differences_do_not_fail_the_run_unless_strict() -> None:
    only = _report(NotebookResult("05_cards.ipynb", "passed", 1.0, OUT, checks=CHECKS[:2], drift=(CREATED,)))
    assert only.exit_code == EXIT_OK and len(only.differences) == 2 and not only.drift
    strict = _report(only.results[0], strict_choices=True)
    assert strict.exit_code == EXIT_FAILED
    drifting = _report(NotebookResult("05_cards.ipynb", "passed", 1.0, OUT, drift=(CREATED, VERSION)))
    assert drifting.exit_code == EXIT_DRIFT and [d for _, d in drifting.drift] == [VERSION]


def test_junit_shows_a_difference_as_a_testcase_with_properties() -> None:
    for strict in (False, True):
        xml = junit.report([_result((CREATED, VERSION))], {}, strict_choices=strict)
        valid_junit(xml)
        root = ET.fromstring(xml)
        cases = {c.get("name"): c for c in root.iter("testcase")}
        differs = cases["refused with card-already-closed"]
        assert case_properties(root, differs) == {"kind": "choice", "outcome": "differs", "basis": "A16"}
        assert differs.findtext("system-out") == f"basis: choice A16\noutcome: differs\n{REASON}"
        assert (differs.find("failure") is not None) is strict
        failed = cases["card id format"].find("failure")
        assert (
            failed is not None and failed.get("message") == "card id: expected 'card_ + 20 hex', got 'UUID'"
        )
        contract = cases["GET /cards/{card_id} body.created_at"]
        assert contract.findtext("system-out", "").startswith("outcome: differs\ndiffers from A35: GET")
        assert case_properties(root, contract) == {"basis": "A35", "outcome": "differs"}
        drift = cases["GET /cards/{card_id} header svc-api-version"].find("failure")
        assert drift is not None and drift.get("type") == "ContractDrift"
