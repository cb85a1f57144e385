"""The notebooks read end to end by a newcomer (issue 34, item 5), from the stored files (no kernel).

00 opens with who is who and a map of every notebook; each notebook ends with a link to the next
(the last back to 00); the shared preamble is one call (``kit.notebook.start``); no stored text
output is a wall (4,000 characters at most per output); no backlog remark is left in a notebook.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("[0-9][0-9]_*.ipynb"))
#: The most characters one stored text output (text/plain or a stream) may hold.
MAX_TEXT = 4000
LINK = re.compile(r"\[[^\]]+\]\(([^)#]+\.ipynb)(?:#[^)]*)?\)")


def _cells(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


def _texts(output: dict[str, Any]) -> list[str]:
    if output["output_type"] == "stream":
        return ["".join(output["text"])]
    plain = output.get("data", {}).get("text/plain")
    return ["".join(plain)] if plain is not None else []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_stored_text_output_is_a_wall(path: Path) -> None:
    long = [
        f"cell {n}: {len(text)} characters"
        for n, cell in enumerate(_cells(path))
        for output in cell.get("outputs", [])
        for text in _texts(output)
        if len(text) > MAX_TEXT
    ]
    assert not long, f"{path.name}: stored text outputs over {MAX_TEXT} characters: {long}"


def test_the_size_limit_reads_streams_and_plain_text() -> None:
    assert _texts({"output_type": "stream", "name": "stdout", "text": ["a\n", "b"]}) == ["a\nb"]
    assert _texts({"output_type": "execute_result", "data": {"text/plain": ["x"], "text/html": "<b>"}}) == [
        "x"
    ]
    assert _texts({"output_type": "display_data", "data": {"image/png": "..."}}) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_ends_with_a_link_to_the_next(path: Path) -> None:
    last = _cells(path)[-1]
    text = _source(last)
    assert last["cell_type"] == "markdown" and text.startswith("**Next →**"), (
        f"{path.name} must end with a markdown cell '**Next →** [NN_name](NN_name.ipynb): …'"
    )
    index = NOTEBOOKS.index(path)
    following = NOTEBOOKS[index + 1] if index + 1 < len(NOTEBOOKS) else NOTEBOOKS[0]
    targets = LINK.findall(text)
    assert targets and targets[0] == following.name, (
        f"{path.name} links {targets}, not {following.name} first"
    )
    assert all((FOLDER / target).is_file() for target in targets), targets


def test_00_opens_with_who_is_who_then_the_map_of_every_notebook() -> None:
    cells = _cells(FOLDER / "00_quickstart.ipynb")
    who, the_map = _source(cells[1]), _source(cells[2])
    assert who.startswith("## Who is who") and "```mermaid" in who
    for party in (
        "Partner app",
        "Partner back end",
        "simulator",
        "partner token",
        "device key",
        "svc-session-id",
    ):
        assert party in who, f"who is who names {party!r}"
    assert the_map.startswith("## The notebooks")
    rows = [ln for ln in the_map.splitlines() if ln.startswith("| [")]
    assert [LINK.findall(row)[0] for row in rows] == [p.name for p in NOTEBOOKS], (
        "one row per notebook, in order"
    )


def test_the_register_is_shown_compact() -> None:
    """The register is a table (``kit.notebook.register_table``), never printed entry by entry."""
    for path in NOTEBOOKS:
        code = "\n".join(_source(c) for c in _cells(path) if c["cell_type"] == "code")
        assert "textwrap.fill(entry" not in code and 'entry["choice"]' not in code, path.name
    code_00 = "\n".join(
        _source(c) for c in _cells(FOLDER / "00_quickstart.ipynb") if c["cell_type"] == "code"
    )
    assert "register_table(relied_on)" in code_00


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_preamble_is_one_call(path: Path) -> None:
    code = "\n".join(_source(c) for c in _cells(path) if c["cell_type"] == "code")
    assert '"the simulator starts from its seeded state"' not in code, (
        f"{path.name} writes out the preamble: api = kit.notebook.start(profile, seed=seed, ...)"
    )


BACKLOG = re.compile(r"(?i)\b(todo|fixme|xxx|backlog|a gap noted|not yet (?:done|built|implemented))\b")


@pytest.mark.parametrize("path", [*NOTEBOOKS, FOLDER / "_template.ipynb"], ids=lambda p: p.stem)
def test_no_backlog_remark_is_left(path: Path) -> None:
    found = [m.group(0) for c in _cells(path) for m in BACKLOG.finditer(_source(c))]
    assert not found, f"{path.name}: {found}"
