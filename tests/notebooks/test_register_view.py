"""``kit.notebook.register_table``: the register shown compact, one line per entry, details on demand."""

from __future__ import annotations

import re

import pytest

from kit import register
from kit.notebook import register_table


def test_one_short_line_per_entry_in_text() -> None:
    every = register.assumptions()
    text = repr(register_table())
    lines = text.splitlines()
    assert len(lines) == len(every) + 1 and lines[0].startswith("the assumptions register: every entry")
    assert [ln.split()[0] for ln in lines[1:]] == [e["id"] for e in every]
    assert max(map(len, lines[1:])) <= 80
    assert every[0]["choice"][:40] not in text, "the choice is on demand, never in the text"


def test_a_selection_keeps_register_order_and_says_how_many() -> None:
    table = register_table(["A15", "A01", "A15"])
    assert table.ids == ["A01", "A15"]
    assert (
        repr(table)
        .splitlines()[0]
        .startswith(f"the assumptions register: 2 of {len(register.assumptions())}")
    )


def _html(text: str) -> str:
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text).replace('"', "&quot;").replace("'", "&#x27;")


def test_html_folds_each_entry_with_the_spec_the_summary_and_a_link_to_the_whole() -> None:
    (entry,) = [e for e in register.assumptions() if e["id"] == "A15"]
    page = register_table(["A15"])._repr_html_()
    assert page.startswith("<details class='kit-register' open>")
    assert page.count("<details>") == 1 and "<summary>Close reasons</summary>" in page
    assert f"<b>the spec:</b> {_html(entry['spec'])}</p>" in page
    assert f"<b>the simulator:</b> {_html(entry['summary'])}</p>" in page
    assert _html(entry["choice"])[:60] not in page, "the whole choice is in the contract, not here"
    # written as the notebooks' Markdown links are: JupyterLab opens it, the site's hook rewrites it
    assert '<a href="../docs/contract.md#a15">the contract, entry A15</a>' in page
    assert "<details class='kit-register'>" in register_table(["A15"], open=False)._repr_html_()


def test_the_longest_entries_open_to_a_sentence_not_to_their_whole_text() -> None:
    """The register's longest choices (A11, A71, A27: hundreds of words) stay in the contract."""
    longest = sorted(register.assumptions(), key=lambda e: -len(e["choice"].split()))[:3]
    page = register_table([e["id"] for e in longest])._repr_html_()
    for entry in longest:
        assert len(entry["choice"].split()) > 300 and _html(entry["summary"]) in page
        assert _html(entry["choice"])[:80] not in page, entry["id"]
    assert len(page) < 3000, len(page)


def test_markup_in_entries_is_escaped() -> None:
    page = register_table()._repr_html_()
    assert "<script" not in page and page.count("<details") == len(register.assumptions()) + 1


def test_an_unknown_id_is_an_error() -> None:
    with pytest.raises(ValueError, match="A99"):
        register_table(["A01", "A99"])
