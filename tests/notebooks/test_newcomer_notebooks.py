"""The notebooks read end to end by a newcomer, from the stored files (no kernel).

00 links every notebook, reaches its first call within about 200 words, says who is who after it
and stays a quickstart (a journey and where to go next, no conformance lesson, no register ids in
its table of calls); each notebook ends with a link to the next (the last back to 00); the
shared preamble is one call (``kit.notebook.start``); no stored text output is a wall (2,000
characters at most per output); no backlog remark is left in a notebook. The register
stays out of the way: no "What the simulator chose here" paragraph nor register table at the top,
no register size in an output (a new entry must not churn them), the problem codes read through
one helper, and each notebook ends with its own table of the entries it relied on, computed from
what it did. History tables leave out the simulator's ``/_sim`` calls; where a title says wire,
the wire is shown (02 the session JWE's marker, 04 the ``encrypted_pii`` one).
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from kit import register
from kit.notebook.relied import GROUPS

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("[0-9][0-9]_*.ipynb"))
#: The most characters one stored text output (text/plain or a stream) may hold.
MAX_TEXT = 2000
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


#: The most words of prose 00 puts before its first call of the API (the issue asked "about 200").
FIRST_CALL_WITHIN = 200
_CLIENT_CALL = re.compile(r"\bapi\.\w+\.\w+\(")


def _prose_words(cell: dict[str, Any]) -> int:
    """Words a reader reads in a markdown cell: diagrams and link targets left out."""
    text = re.sub(r"```.*?```", "", _source(cell), flags=re.DOTALL)
    return len(re.sub(r"\]\([^)]*\)", "]", text).split())


def test_00_reaches_its_first_call_within_about_200_words() -> None:
    cells = _cells(FOLDER / "00_quickstart.ipynb")
    calling = [n for n, c in enumerate(cells) if c["cell_type"] == "code" and _CLIENT_CALL.search(_source(c))]
    first = calling[0]
    words = sum(_prose_words(c) for c in cells[:first] if c["cell_type"] == "markdown")
    assert words <= FIRST_CALL_WITHIN, f"00 has {words} words of prose before its first call (cell {first})"


def test_00_links_every_notebook_first_then_says_who_is_who() -> None:
    cells = _cells(FOLDER / "00_quickstart.ipynb")
    title = _source(cells[0])
    # the one table of every notebook is the site's home (tests/test_docs_agree.py checks it)
    assert "(../docs/index.md#the-notebooks)" in title, "00 links the table of every notebook"
    assert not [ln for ln in title.splitlines() if ln.startswith("| [")], "no second table"
    (who,) = [_source(c) for c in cells if _source(c).startswith("## Who is who")]
    assert "```mermaid" in who
    for party in (
        "Partner app",
        "Partner back end",
        "simulator",
        "partner token",
        "device key",
        "svc-session-id",
    ):
        assert party in who, f"who is who names {party!r}"


def test_the_register_is_shown_compact() -> None:
    """The register is a table (``kit.notebook.register_table``), never printed entry by entry."""
    for path in NOTEBOOKS:
        code = "\n".join(_source(c) for c in _cells(path) if c["cell_type"] == "code")
        assert "textwrap.fill(entry" not in code and 'entry["choice"]' not in code, path.name


#: How many cells open a notebook (title, diagram, parameters, the first section): the register
#: stays out of them.
OPENING = 8


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_register_paragraph_or_table_opens_a_notebook(path: Path) -> None:
    opening = _cells(path)[:OPENING]
    for n, cell in enumerate(opening):
        text = _source(cell)
        assert "What the simulator chose" not in text, f"{path.name} cell {n}: the register paragraph"
        assert "register_table(" not in text and "entries_used(" not in text, f"{path.name} cell {n}"


def _plain_outputs(cell: dict[str, Any]) -> list[str]:
    return [text for output in cell.get("outputs", []) for text in _texts(output)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_ends_with_its_own_table_of_the_entries_it_used(path: Path) -> None:
    cells = _cells(path)
    table, code = cells[-2], _source(cells[-2])
    assert table["cell_type"] == "code" and code.strip() == "kit.notebook.entries_used()", (
        f"{path.name}: the cell before the Next link shows kit.notebook.entries_used()"
    )
    assert _source(cells[-3]).startswith("## The register entries this notebook relied on")
    (text,) = _plain_outputs(table)
    head, *lines = text.splitlines()
    count = int(re.match(r"(\d+) register entr(?:y|ies) this notebook relied on ", head).group(1))
    rows = [line for line in lines if re.match(r"  A\d\d  ", line)]
    assert count == len(rows) > 0, f"{path.name}: {head}"
    # the rows come in groups (what its checks rest on, then the answers alone), each headed by
    # its name and count: every other line is such a heading, in that order
    headings = [n for n, line in enumerate(lines) if line not in rows]
    assert headings[:1] == [0], f"{path.name}: the table opens with a group's heading"
    named = [re.fullmatch(r" (.+): (\d+)", lines[n]) for n in headings]
    assert all(named), f"{path.name}: a line that is neither an entry nor a group's heading"
    assert [m.group(1) for m in named] == [g for g in GROUPS.values() if g in [m.group(1) for m in named]]
    for n, m in zip(headings, named, strict=True):
        run = list(itertools.takewhile(lambda line: line in rows, lines[n + 1 :]))
        assert int(m.group(2)) == len(run) > 0, f"{path.name}: {lines[n]}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_output_counts_the_register(path: Path) -> None:
    """An output saying "N of M entries" would change whenever the register gains an entry."""
    total = len(register.assumptions())
    counted = [
        f"cell {n}"
        for n, cell in enumerate(_cells(path))
        for text in _plain_outputs(cell)
        if re.search(r"\b\d+ of \d+ entries\b", text) or f" {total} entries" in text
    ]
    assert not counted, f"{path.name}: outputs counting the register: {counted}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_problem_codes_are_read_through_one_helper(path: Path) -> None:
    code = [_source(c) for c in _cells(path) if c["cell_type"] == "code"]
    reads = sum(len(re.findall(r'chosen\("A64", "codes"\)', source)) for source in code)
    assert reads <= (1 if path.name == "14_errors.ipynb" else 0), (
        f"{path.name} reads A64's codes {reads} times: use kit.notebook.problem_code(name)"
    )
    assert not any("problem_codes[" in source for source in code), path.name


_SIM_ROW = re.compile(r"^\s*\d*\s*(GET|POST|DELETE|PUT|PATCH)\s+/_sim/", re.MULTILINE)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_call_tables_leave_out_the_simulators_control_calls(path: Path) -> None:
    shown = [
        f"cell {n}"
        for n, cell in enumerate(_cells(path))
        if cell["cell_type"] == "code"
        for text in _plain_outputs(cell)
        if _SIM_ROW.search(text)
    ]
    assert not shown, f"{path.name}: a table of calls shows /_sim rows: {shown}"


def _wire_views(name: str) -> list[str]:
    return [
        text
        for cell in _cells(FOLDER / name)
        if "api.wire(" in _source(cell)
        for text in _plain_outputs(cell)
        if "HTTP/1.1" in text
    ]


def test_02_shows_the_session_jwe_as_its_marker() -> None:
    views = _wire_views("02_session_init_data.ipynb")
    assert any('"encrypted_data": "<JWE alg=' in view and "POST /sessions" in view for view in views)


def test_04_shows_the_persons_request_with_encrypted_pii_as_its_marker() -> None:
    views = _wire_views("04_onboarding_and_kyc.ipynb")
    assert any('"encrypted_pii": "<JWE alg=' in view and "/persons" in view for view in views)


@pytest.mark.parametrize(
    "name", ["04_onboarding_and_kyc.ipynb", "05_cards_close_with_reason.ipynb", "06_inbound_events.ipynb"]
)
def test_a_section_titled_wire_shows_the_wire(name: str) -> None:
    cells = _cells(FOLDER / name)
    titled = [n for n, c in enumerate(cells) if "What went over the wire" in _source(c)]
    assert titled, name
    following = _source(cells[titled[0] + 1])
    assert "api.wire(" in following and "history" not in following, name


def test_00_is_a_quickstart() -> None:
    cells = _cells(FOLDER / "00_quickstart.ipynb")
    assert len(cells) <= 17, f"00 has {len(cells)} cells"
    text = "\n".join(_source(c) for c in cells)
    assert "conformance()" not in text and "## Where does your server agree" not in text, (
        "the conformance lesson is the sandbox guide's"
    )
    assert "data/seed.txt" in _source(cells[0]), "00 says where the spec is, first"
    assert "../docs/sandbox.md" in text, "00 says where a sandbox tester goes next"
    story = [c for c in cells if c["cell_type"] == "code" and "checks" not in c["metadata"].get("tags", [])]
    assert not [c for c in story if "assumptions" in _source(c)], "the story's calls have no register column"


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


CONTRACT = ROOT / "docs" / "contract.md"
_QUOTE_MARK = re.compile(r"^\s*>\s*— the spec \((.*)\)\s*$")
_LINKED_ID = re.compile(r"\[([^\]]+)\]\(\.\./docs/contract\.md#([^)]+)\)")
_BARE_ENTRY = re.compile(r"(?<![\[#\w])A\d\d(?![\]\w])")


def _anchors() -> set[str]:
    text = CONTRACT.read_text(encoding="utf-8")
    headings = {m.lower() for m in re.findall(r"^### (A\d\d)$", text, re.MULTILINE)}
    return headings | set(re.findall(r'<a id="([^"]+)"></a>', text)) | {"the-register", "the-spec"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_quotes_and_register_ids_link_their_words_in_the_contract(path: Path) -> None:
    """A quote's statement ids and a register id in prose link to docs/contract.md, at an anchor
    that exists; the spec's text is linked once, at data/seed.txt."""
    anchors = _anchors()
    markdown = [_source(c) for c in _cells(path) if c["cell_type"] == "markdown"]
    text = "\n".join(markdown)
    assert "](../data/seed.txt)" in text, f"{path.name} never links the spec's text"
    for line in text.splitlines():
        mark = _QUOTE_MARK.match(line)
        if mark:
            linked = _LINKED_ID.findall(mark.group(1))
            assert linked and all(name == anchor for name, anchor in linked), (path.name, line)
    missing = sorted({anchor for _, anchor in _LINKED_ID.findall(text)} - anchors)
    assert not missing, f"{path.name} links anchors the contract lacks: {missing}"
    for block in markdown:
        prose = re.sub(r"```.*?```|`[^`]*`|\[[^\]]*\]\([^)]*\)", "", block, flags=re.DOTALL)
        bare = _BARE_ENTRY.findall(prose)
        assert not bare, f"{path.name}: register ids not linked to the contract: {bare[:5]}"


def test_the_quote_mark_finds_the_notebooks_quotes() -> None:
    """The link check above reads quotes by their mark: a mark that matched none would pass it
    for nothing."""
    lines = [
        line
        for path in NOTEBOOKS
        for c in _cells(path)
        if c["cell_type"] == "markdown"
        for line in _source(c).splitlines()
    ]
    assert sum(bool(_QUOTE_MARK.match(line)) for line in lines) >= 20
