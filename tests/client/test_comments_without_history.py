"""The client's comments explain the code, not its history: no issue numbers and no timings of
the kit's own speed-ups (a speed-up's reason points at its entry in benchmarks/bench.py's FIXES,
which keeps the figures)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

KIT = Path(__file__).resolve().parents[2] / "kit"
#: The client core: kit/*.py and the resources.
CLIENT = sorted([*KIT.glob("*.py"), *(KIT / "_resources").glob("*.py")])
HISTORY = re.compile(r"\bissue\s*#?\d+|\b\d+(?:\.\d+)?\s*(?:ms|µs|us)\b|\bwas\s+\d", re.IGNORECASE)


def _prose(source: str) -> list[tuple[int, str]]:
    """Comments and docstrings, with their line numbers."""
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):  # docstrings, of modules, classes, functions, attributes
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found.append((node.lineno, node.value.value))
    return found


def test_the_scan_finds_history() -> None:
    source = '"""Fast since issue 37."""\nx = 1  # was 24 ms, now ~0.1 ms\n'
    assert len([text for _, text in _prose(source) if HISTORY.search(text)]) == 2


def test_no_issue_numbers_or_speed_up_timings_in_the_clients_comments() -> None:
    found = {}
    for path in CLIENT:
        hits = [
            f"line {line}: {HISTORY.search(text)[0]!r}"
            for line, text in _prose(path.read_text())
            if HISTORY.search(text)
        ]
        if hits:
            found[path.name] = hits
    assert found == {}


ISSUE = re.compile(r"\bissue\s*#?\d+", re.IGNORECASE)


def test_no_issue_numbers_anywhere_in_kit() -> None:
    """Timings of libraries may explain a line anywhere (uvicorn's TCP_NODELAY trap); an issue
    number never does: the history of a change belongs to the FIXES ledger and the commits."""
    found = {
        str(path.relative_to(KIT)): [line for line, text in _prose(path.read_text()) if ISSUE.search(text)]
        for path in sorted(KIT.rglob("*.py"))
    }
    assert {name: lines for name, lines in found.items() if lines} == {}
