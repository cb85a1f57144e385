"""Every Mermaid diagram of the notebooks (and the template) parses with the real Mermaid parser,
the version JupyterLab renders with: a diagram that does not parse shows its source in an error
box instead of a picture.

The parser is the ``mermaid`` npm package under node (``tests/e2e/diagrams.py``), one node run
for all diagrams (about a second). Where it is not installed the tests skip with that reason;
``make e2e`` installs it and runs this module, so CI always parses.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.diagrams import mermaid_sources, parse, parser_missing

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="module")
def parsed() -> dict[str, str | None]:
    missing = parser_missing()
    if missing is not None:
        if os.environ.get("KIT_E2E") == "1":
            pytest.fail(f"make e2e must install the Mermaid parser: {missing}")
        pytest.skip(f"the Mermaid parser is not here: {missing}")
    diagrams = {
        f"{path.stem}#{n}": source for path in NOTEBOOKS for n, source in enumerate(mermaid_sources(path), 1)
    }
    diagrams["probe#1"] = "sequenceDiagram\n    A->>B: one; 2 things\n"
    return parse(diagrams)


def test_the_parser_is_the_strict_one(parsed: dict[str, str | None]) -> None:
    """A ``;`` inside a message ends the statement: the real parser refuses what follows."""
    error = parsed["probe#1"]
    assert error is not None and "Parse error on line 2" in error


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_diagram_parses(path: Path, parsed: dict[str, str | None]) -> None:
    ours = {key: error for key, error in parsed.items() if key.split("#")[0] == path.stem}
    assert ours, "a notebook opens with a sequence diagram"
    failures = [f"{key}: {' '.join(error.split())[:400]}" for key, error in ours.items() if error is not None]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_message_holds_a_semicolon_where_the_parser_is_absent(path: Path) -> None:
    """``make test`` runs without node: the one slip it can see without the parser (a ``;``
    inside a message ends the statement, as the probe above shows the real parser refuses)."""
    messages = [
        line.strip()
        for source in mermaid_sources(path)
        for line in source.splitlines()
        if ":" in line and ";" in line.partition(":")[2]
    ]
    assert messages == [], messages
