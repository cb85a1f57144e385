"""Spec or choice, in every notebook: each register entry its calls relied on is named to its reader.

The simulator names, in ``svc-assumptions``, the register entries that shaped each answer. A
reader of a notebook must be able to tell the spec's word from the simulator's choice, so every
entry a notebook's calls were answered with is listed in the table the notebook ends with
(``kit.notebook.entries_used()``, its stored output: the entry's topic, and in Jupyter the spec's
words and the choice), and the entries a notebook's lesson is about are cited (``A12``…) in its
markdown where the choice is met.

Each notebook's code cells run in a fresh interpreter (the ``sim`` profile, as stored), with the
call history's ``record`` wrapped to collect every ``assumptions`` value: the test watches the
client from outside, nothing in the kit exists for it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
CITATION = re.compile(r"\bA\d\d\b")

_RUNNER = textwrap.dedent(
    """
    import json, os, sys
    os.environ["KIT_REGRESS"] = "1"       # headless: widgets print text, nothing waits for a person
    os.environ.pop("JPY_SESSION_NAME", None)
    import kit._history
    used = set()
    _record = kit._history.History.record
    def record(self, entry):
        used.update(a for a in (entry.assumptions or "").split(",") if a)
        return _record(self, entry)
    kit._history.History.record = record
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    for source in json.load(sys.stdin):
        result = shell.run_cell(source, silent=True)
        if not result.success:
            raise SystemExit(f"a cell failed: {result.error_in_exec or result.error_before_exec!r}")
    print("USED=" + ",".join(sorted(used)))
    """
)


def cited(nb: dict) -> set[str]:
    return {
        match
        for cell in nb["cells"]
        if cell["cell_type"] == "markdown"
        for match in CITATION.findall("".join(cell["source"]))
    }


def tabled(nb: dict) -> set[str]:
    """The entries the notebook's closing table lists, as stored (``kit.notebook.entries_used()``)."""
    return {
        match
        for cell in nb["cells"]
        if cell["cell_type"] == "code" and "entries_used()" in "".join(cell["source"])
        for output in cell.get("outputs", [])
        for match in re.findall(r"^  (A\d\d)  ", "".join(output.get("data", {}).get("text/plain", "")), re.M)
    }


def used_by(nb: dict) -> set[str]:
    sources = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER],
        input=json.dumps(sources),
        capture_output=True,
        text=True,
        cwd=ROOT / "notebooks",
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-1000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("USED="))
    return set(filter(None, line.removeprefix("USED=").split(",")))


def test_citations_are_read_from_markdown_only() -> None:
    nb = {
        "cells": [
            {"cell_type": "markdown", "source": ["Simulator choice (A24): ES256; A7 and A123 are not ids"]},
            {"cell_type": "code", "source": ["# A25 in a comment is not prose"]},
        ]
    }
    assert cited(nb) == {"A24"}


@pytest.mark.slow  # every notebook in a fresh interpreter: ≈63 s
@pytest.mark.papermill
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_entry_a_notebook_relies_on_is_in_its_closing_table(path: Path) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    used = used_by(nb)
    assert used, "the notebook's calls named no register entry: the collector saw nothing"
    missing = sorted(used - tabled(nb))
    assert not missing, f"{path.name} relies on {missing} but its closing table does not list them"
    assert cited(nb) & used, f"{path.name} cites none of the entries it relies on where it meets them"


def test_the_closing_table_is_read_from_its_stored_output() -> None:
    plain = [
        "2 register entries this notebook relied on (…)\n",
        "  A04  Session initialization data fields\n",
        "  A45  The simulator's control plane",
    ]
    table = {"output_type": "execute_result", "data": {"text/plain": plain}}
    nb = {
        "cells": [
            {"cell_type": "markdown", "source": ["A01 in prose"]},
            {"cell_type": "code", "source": ["kit.notebook.entries_used()"], "outputs": [table]},
        ]
    }
    assert tabled(nb) == {"A04", "A45"}
