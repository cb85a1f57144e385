"""What a notebook relied on, computed from what it did (``kit.notebook.entries_used``, in two
groups: what its checks rest on, then what the answers alone carried), the problem codes read
through one helper (``problem_code``), and the call tables notebooks show without the
simulator's control calls (``calls``)."""

from __future__ import annotations

import doctest
from datetime import UTC, datetime
from types import SimpleNamespace

import pandas as pd
import pytest

from kit import register
from kit._history import Entry
from kit.notebook import COMPANION, calls, entries_used, problem_code, relied
from kit.notebook.companion import Companion
from kit.notebook.outcome import CheckOutcome
from kit.notebook.register_view import _inline


def _call(path: str, assumptions: str | None) -> Entry:
    return Entry(
        datetime(2025, 1, 6, tzinfo=UTC), "POST", path, 200, 1.0, None, None, None, False, 0, assumptions
    )


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Companion:
    companion = Companion()
    monkeypatch.setattr(relied, "COMPANION", companion)
    return companion


def test_the_entries_used_come_from_the_answers_and_the_checks(fresh: Companion) -> None:
    fresh._on_call(_call("/sessions", "A04,A09"))
    fresh._on_call(_call("/accounts", None))  # a server that sends no svc-assumptions
    fresh.record(CheckOutcome("closed with a reason", "passed", kind="choice", basis="A16"))
    fresh.record(CheckOutcome("a statement", "passed", kind="spec", basis="card.1"))
    fresh.chose("A15", "reasons", ["lost"])
    table = entries_used()
    assert table.ids == ["A15", "A16", "A04", "A09"], "what the checks rest on first, each in register order"
    assert relied.used_ids() == {"A04": {"answers"}, "A09": {"answers"}, "A15": {"checks"}, "A16": {"checks"}}


def test_an_entry_a_check_named_is_in_the_first_group_even_if_an_answer_carried_it(fresh: Companion) -> None:
    fresh._on_call(_call("/cards", "A45,A16,A13"))
    fresh.record(CheckOutcome("closed with a reason", "passed", kind="choice", basis="A16"))
    table = entries_used()
    assert {where: [e["id"] for e in run] for where, run in table.groups.items()} == {
        relied.CHECKS: ["A16"],
        relied.ANSWERS: ["A13", "A45"],
    }
    head, *lines = repr(table).splitlines()
    assert head.startswith("3 register entries this notebook relied on (")
    assert lines == [
        f" {relied.GROUPS[relied.CHECKS]}: 1",
        "  A16  Card states and close errors",
        f" {relied.GROUPS[relied.ANSWERS]}: 2",
        "  A13  Card types",
        "  A45  The simulator's control plane",
    ]
    page = table._repr_html_()
    assert page.count("<table>") == 1 + 1 and page.index("A16") < page.index("A13") < page.index("A45")
    assert page.count("<details>") == 3, "one folded row per entry, whatever its group"
    answers = page.index("<details class='kit-answers'>")
    assert page.index("A16") < answers < page.index("A13"), "answers folded after the checks"
    assert f"{relied.GROUPS[relied.ANSWERS]}: 2: A13, A45</summary>" in page, "folded to one line of ids"
    assert page.startswith("<details class='kit-register' open><summary>3 register entries this notebook")
    for entry in ("A16", "A13", "A45"):  # each row opens to the summary, the whole in the contract
        shown = register.assumption(entry)
        assert _inline(shown["summary"]) in page and _inline(shown["choice"]) not in page
        assert f'<a href="../docs/contract.md#{entry.lower()}">the contract, entry {entry}</a>' in page


def test_on_a_server_without_svc_assumptions_the_checks_still_name_their_entries(fresh: Companion) -> None:
    fresh._on_call(_call("/cards/c/close", None))
    fresh.record(CheckOutcome("refused with card-already-closed", "differs", kind="choice", basis="A64"))
    table = entries_used()
    assert table.ids == ["A64"] and list(table.groups) == [relied.CHECKS]
    assert relied.GROUPS[relied.ANSWERS] not in repr(table), "no heading over an empty group"


def test_entries_met_outside_the_clients_are_noted_for_this_kernel(
    fresh: Companion, monkeypatch: pytest.MonkeyPatch
) -> None:
    relied.note(["A29", " A66", "", "X-1"], relied.ANSWERS)  # a plain httpx client's answer
    relied.note(["A66"])  # a comparison naming the entry giving a side
    assert relied.used_ids() == {"A29": {"answers"}, "A66": {"answers", "checks"}}
    with pytest.raises(ValueError, match="not 'report'"):
        relied.note(["A29"], "report")
    monkeypatch.setattr(relied, "COMPANION", Companion())
    assert relied.used_ids() == {}, "noted for one kernel's companion, not another's"


def test_the_closing_table_stays_short_for_35_entries() -> None:
    """The longest topics, 35 of them over both groups: still under 2,000 characters."""
    longest = sorted(register.assumptions(), key=lambda e: -len(e["topic"]))[:35]
    used = {e["id"]: {"checks" if n % 3 == 0 else "answers"} for n, e in enumerate(longest)}
    text = repr(relied.used_table(used))
    assert len(text.splitlines()) == 1 + 2 + 35 and len(text) <= 2000, len(text)


def test_the_modules_example_holds() -> None:
    failed, tried = doctest.testmod(relied)
    assert tried >= 3 and failed == 0


def test_the_table_never_counts_the_register(fresh: Companion) -> None:
    """A new register entry must not change a notebook's stored output."""
    fresh._on_call(_call("/sessions", "A04"))
    text = repr(entries_used())
    total = len(register.assumptions())
    assert text.splitlines()[0].startswith("1 register entry this notebook relied on (")
    assert f"of {total}" not in text and f" {total} " not in text
    assert f"of {total}" not in entries_used()._repr_html_()


def test_problem_code_reads_the_registers_table_and_is_noted_as_a_read() -> None:
    codes = register.value("A64")["codes"]
    name = sorted(codes)[0]
    assert problem_code(name) == codes[name]
    assert (("A64", "codes"), codes) in COMPANION.reads()
    with pytest.raises(KeyError, match="not a problem"):
        problem_code("no-such-problem")


def test_calls_leave_out_the_control_plane_only() -> None:
    history = pd.DataFrame(
        {
            "method": ["POST", "POST", "GET", "POST"],
            "path": ["/_sim/reset", "/oauth/accesstoken", "/_sim/clock", "/sessions"],
            "status": [200, 200, 200, 201],
            "code": [None, None, None, None],
        }
    )
    shown = calls(SimpleNamespace(history=history))  # type: ignore[arg-type]
    assert list(shown["path"]) == ["/oauth/accesstoken", "/sessions"]
    assert list(shown.index) == [1, 2] and list(shown["code"]) == ["-", "-"]
    assert len(history) == 4, "the history itself keeps every call"
