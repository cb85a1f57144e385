"""The API's description is "the spec" in the kit's prose, never "the seed".

"seed" is the random seed (``seed = 7``, ``kit serve --seed 7``, "reset the simulator to its
seed", "the same seed and the same calls"); the file ``data/seed.txt`` keeps its name. The
phrasings refused below can only mean the API's description. Inline code is left out before
looking, so a binding report line quoted as code (``S seed statements checked``) and the file
name stay allowed.

:data:`SOURCES` lists the files read, as globs from the repository root: README.md and every page
of docs/, hand-written and generated (``docs/contract.md``). A notebook's glob may be added: its
Markdown cells are read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: The files whose prose is read, as globs from the repository root.
SOURCES: tuple[str, ...] = ("README.md", "docs/*.md", "notebooks/[0-9]*.ipynb", "notebooks/_template.ipynb")

#: Phrasings that say "seed" for the API's description (case-insensitive).
REFUSED: tuple[str, ...] = (
    r"\bthe seed's (own )?(words?|table|version|change list|order|list|statements?|cadence|replacement"
    r"|facts|text)\b",
    r"\b(statement|statements|quote|quotes|words|version|table|text) of the seed\b",
    r"\bthe seed (says|said|states|stated|shows|names|lists|leaves|accepts|contradicts|is silent|does not)\b",
    r"\bthe seed \(",
    r"\(the seed[),]",
    r"\bthe seed: ",
    r"\b(departs?|departed|departure|drift) from (what )?the seed\b",
    r"\bseed statements?\b",
    r"\bseed version\b",
    r"^#+ the seed\s*$",
)
_REFUSED = [re.compile(pattern, re.IGNORECASE) for pattern in REFUSED]
_CODE = re.compile(r"`[^`\n]*`")


def prose(path: Path) -> list[str]:
    """The lines of prose ``path`` holds: a Markdown file's lines, a notebook's Markdown cells'."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        cells = json.loads(text)["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return text.splitlines()


def seed_for_spec(lines: list[str]) -> list[str]:
    """The lines that call the API's description "the seed" (inline code left out)."""
    return [line for line in lines if any(p.search(_CODE.sub("", line)) for p in _REFUSED)]


def _files() -> list[Path]:
    return sorted({path for pattern in SOURCES for path in ROOT.glob(pattern)})


FILES = _files()


def test_the_files_read_include_the_readme_and_the_generated_contract() -> None:
    names = {str(path.relative_to(ROOT)) for path in FILES}
    assert {"README.md", "docs/contract.md", "docs/index.md", "docs/sandbox.md"} <= names, names


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_api_description_is_the_spec_never_the_seed(path: Path) -> None:
    found = seed_for_spec(prose(path))
    assert not found, f"{path.relative_to(ROOT)}: say 'the spec' for the API's description: {found}"


#: Lines that call the API's description "the seed": each must be refused.
PLANTED = [
    "The simulator's choices, each beside the seed's words that leave it open.",
    'Every check names its basis: a statement of the seed (`check(…, spec="card.1")`).',
    "A behaviour no entry names comes from what the seed states.",
    "The seed names no error code: every code is the simulator's choice.",
    "The session token travels in `svc-session-id` (the seed, session.4, sequence.4).",
    "| change | touches | did | before 1.2.0 (the seed) | on the wire |",
    "whether the seed (the API's specification) states it",
    "and naming no method (the seed: it no longer exists)",
    "Only a departure from the seed is drift.",
    "then the seed statements checked, passed or violated",
    "## The seed",
]

#: Lines where "seed" is the random seed or the file's name: each must pass.
ALLOWED = [
    "Same seed and same calls give the same ids and bodies.",
    "`start` (connect, then reset the simulator to its seed)",
    "| `--seed N` | the random seed of every id and key |",
    "every customer's plan, drawn from the seed before anything runs",
    "Its first line: `N entries: C confirmed, …; S seed statements checked, V violated`",
    "- **the spec**: the API's own description, [`data/seed.txt`](data/seed.txt)",
    "ids derived from the random seed: the same seed and the same calls give the same ids",
    "The clock is seeded: it starts at `2025-01-06T09:00:00Z`.",
]


def test_a_planted_line_that_calls_the_spec_the_seed_fails() -> None:
    assert [line for line in PLANTED if not seed_for_spec([line])] == []
    assert seed_for_spec(ALLOWED) == []


def test_a_notebooks_markdown_cells_are_read(tmp_path: Path) -> None:
    notebook = {
        "cells": [
            {"cell_type": "markdown", "source": ["# A notebook\n", "The seed says so.\n"]},
            {"cell_type": "code", "source": ["seed = 7  # the seed says nothing here\n"]},
        ]
    }
    path = tmp_path / "00_planted.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert seed_for_spec(prose(path)) == ["The seed says so."]
