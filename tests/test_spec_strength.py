"""The kit's prose says what the spec says, no stronger and no less: a statement that says
"should" is not one the spec "asks" or "requires", and a statement that names a header is not
one that "names no header".

Read: the Markdown of every notebook and of README.md and docs/ (a notebook's Markdown cells, a
page's paragraphs), each block on its own, against the statements of ``data/spec.toml``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kit import register

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("README.md", "docs/*.md", "notebooks/[0-9]*.ipynb", "notebooks/_template.ipynb")

#: Saying the spec demands what it only recommends.
_DEMANDS = re.compile(r"\bthe spec(?:\]\([^)]*\))? (?:asks|requires|demands|insists)\b", re.IGNORECASE)
#: Saying the spec names no header where it names one (p2p.1: "… beyond svc-session-id").
_NO_HEADER = re.compile(r"\bspec names no (?:[\w-]+ )?header", re.IGNORECASE)


def _should_only() -> list[str]:
    """The ids of the statements that recommend ("should") and never require ("must")."""
    found = []
    for statement in register.statements():
        text = " ".join([statement.get("text", ""), *statement.get("row", [])]).lower()
        if re.search(r"\bshould\b", text) and not re.search(r"\bmust\b", text):
            found.append(statement["id"])
    return found


SHOULD_ONLY = _should_only()


def blocks(path: Path) -> list[str]:
    """A notebook's Markdown cells, or a page's paragraphs."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        return ["".join(c["source"]) for c in json.loads(text)["cells"] if c["cell_type"] == "markdown"]
    return text.split("\n\n")


FILES = sorted({path for pattern in SOURCES for path in ROOT.glob(pattern)})


def test_the_statements_read_include_rule_5() -> None:
    assert "rule.5" in SHOULD_ONLY  # "a session … should be established"


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_what_the_spec_recommends_is_not_said_to_be_asked(path: Path) -> None:
    cites = re.compile(r"\b(?:" + "|".join(re.escape(i) for i in SHOULD_ONLY) + r")\b")
    found = [b[:160] for b in blocks(path) if cites.search(b) and _DEMANDS.search(b)]
    assert not found, f"{path.relative_to(ROOT)}: the spec says 'should' there: {found}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_spec_is_not_said_to_name_no_header(path: Path) -> None:
    found = [m.group(0) for b in blocks(path) for m in _NO_HEADER.finditer(b)]
    assert not found, f"{path.relative_to(ROOT)}: p2p.1 names svc-session-id: {found}"


@pytest.mark.parametrize(
    "planted",
    [
        "The card call carries the current session, as the spec asks ([rule.5](../docs/contract.md#rule.5)).",
        "but [the spec](../data/seed.txt) asks for a session:\n\n> … should be established …\n> — (rule.5)",
    ],
)
def test_the_planted_phrasings_are_refused(planted: str) -> None:
    assert re.search(r"rule\.5", planted) and _DEMANDS.search(planted)
    assert _NO_HEADER.search("the `svc-p2p-role` header (the spec names no P2P header)")
