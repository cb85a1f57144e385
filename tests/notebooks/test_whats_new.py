"""The table of the version's changes a notebook's checks showed (``kit.notebook.changes_checked``)."""

from __future__ import annotations

import pytest

from kit.notebook import changes_checked
from kit.notebook.outcome import CheckOutcome


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
