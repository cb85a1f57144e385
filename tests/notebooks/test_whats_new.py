"""Notebook 10, what's new in 1.2.0, and the table it ends with (``kit.notebook.changes_checked``).

The notebook opens with the spec's own list of the nine changes, quoted, not a generated table;
every check it makes is named for its change (``change N: …``), so the closing table is computed
from the checks alone: its stored output is what the helper makes of the notebook's own stored
check outcomes, no result is kept by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kit import register
from kit.notebook import CHECK_MIME_TYPE, changes_checked
from kit.notebook.outcome import CheckOutcome

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "10_whats_new_in_1_2_0.ipynb"
PREAMBLE = "the simulator starts from its seeded state"


def _cells() -> list[dict[str, Any]]:
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


def _stored_checks() -> list[CheckOutcome]:
    found = []
    for cell in _cells():
        for output in cell.get("outputs", []):
            data = output.get("data", {}).get(CHECK_MIME_TYPE)
            if data is not None:
                found.append(
                    CheckOutcome(
                        data["name"],
                        data["outcome"],
                        data["reason"],
                        tuple(data["needs"]),
                        data.get("kind", ""),
                        data.get("basis", ""),
                    )
                )
    return found


def _outcome(name: str, outcome: str = "passed", basis: str = "A15") -> CheckOutcome:
    kind = "choice" if basis.startswith("A") else "spec"
    return CheckOutcome(name, outcome, "" if outcome == "passed" else "why", kind=kind, basis=basis)


# --- the helper -----------------------------------------------------------------------------------


def test_each_change_gets_the_checks_named_for_it_in_the_specs_order() -> None:
    table = changes_checked(
        [
            _outcome("change 2: b", basis="A15"),
            _outcome("another check, of no change"),
            _outcome("change 1: a", basis="change.1"),
            _outcome("change 2: c", basis="change.2"),
        ]
    )
    assert [row.change for row in table.rows] == [f"change.{n}" for n in range(1, 10)]
    assert [o.name for o in table.rows[1].checks] == ["change 2: b", "change 2: c"]
    assert [o.name for o in table.rows[0].checks] == ["change 1: a"]
    markdown = table._repr_markdown_()
    assert "| change.2 | ✔ b (A15)<br>✔ c (change.2) | ✔ passed |" in markdown
    assert "another check" not in markdown


def test_a_result_is_the_worst_check_skips_apart_and_never_passed_unchecked() -> None:
    def result(*outcomes: str) -> str:
        checks = [_outcome(f"change 3: check {n}", o) for n, o in enumerate(outcomes)]
        return changes_checked(checks).rows[2].result

    assert result("passed", "skipped") == "✔ passed"
    assert result("passed", "differs") == "≠ differs"
    assert result("differs", "failed", "passed") == "✘ failed"
    assert result("skipped", "skipped") == "⊘ skipped"
    rows = changes_checked([]).rows
    assert rows[0].result == "not checked here"  # a change on the wire with no check is not passed
    assert rows[8].result == "— no wire effect (category.1)"  # the spec: names change no path
    assert "change.9  — no wire effect (category.1)" in repr(changes_checked([]))


def test_the_text_form_is_one_line_per_change_with_its_counts() -> None:
    checks = [_outcome("change 5: a"), _outcome("change 5: b", "skipped")]
    lines = repr(changes_checked(checks)).splitlines()
    assert len(lines) == 10
    assert lines[5] == "  change.5  ✔ passed (2 checks: 1 passed, 1 skipped)"


def test_a_check_named_for_a_change_the_spec_does_not_list_is_an_error() -> None:
    with pytest.raises(ValueError, match="no change 10"):
        changes_checked([_outcome("change 10: not in the spec")])


def test_a_pipe_in_a_name_does_not_break_the_table() -> None:
    markdown = changes_checked([_outcome("change 7: sender | receiver")])._repr_markdown_()
    assert "sender \\| receiver" in markdown


# --- the notebook ---------------------------------------------------------------------------------


def test_10_opens_with_the_nine_changes_and_each_section_quotes_its_own() -> None:
    cells = _cells()
    first_code = next(n for n, c in enumerate(cells) if c["cell_type"] == "code")
    opening = "\n".join(_source(c) for c in cells[:first_code] if c["cell_type"] == "markdown")
    markdown = "\n".join(_source(c) for c in cells if c["cell_type"] == "markdown")
    for n in range(1, 10):
        # the opening lists the nine, numbered as the spec's list, each linked to its words
        assert f"\n{n}. " in opening and f"[change.{n}](../docs/contract.md#change.{n})" in opening, n
        # each section quotes the spec's words of its change
        assert f"## {n}. " in markdown and f"> {register.statement(f'change.{n}')['text']}" in markdown, n
    shown = json.dumps([c.get("outputs", []) for c in cells])
    assert "before 1.2.0 (the spec)" not in shown, "the records' table is the contract's, not 10's opening"


def test_10_keeps_no_result_by_hand_and_every_check_is_named_for_its_change() -> None:
    code = "\n".join(_source(c) for c in _cells() if c["cell_type"] == "code")
    assert "results[" not in code and "def verdict" not in code
    names = [o.name for o in _stored_checks()]
    assert names and names[0] == PREAMBLE
    assert all(re.match(r"change [1-8]: ", name) for name in names[1:]), names


def test_10_ends_with_the_table_its_own_checks_make() -> None:
    code = [c for c in _cells() if c["cell_type"] == "code"]
    (summary,) = [c for c in code if "kit.notebook.changes_checked()" in _source(c)]
    (stored,) = [o["data"] for o in summary["outputs"] if "text/markdown" in o.get("data", {})]
    table = changes_checked(_stored_checks())
    assert "".join(stored["text/markdown"]) == table._repr_markdown_()
    assert "".join(stored["text/plain"]) == repr(table)
    assert all(row.checks for row in table.rows[:8]), "each change with a wire effect shows a check"
