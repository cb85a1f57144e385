"""``notebooks/_template.ipynb``: the house shape, and it runs cleanly under regress."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from kit import regress
from kit.regress import leaks
from tests.notebooks.helpers import ROOT, load

TEMPLATE = ROOT / "notebooks" / "_template.ipynb"


def _source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


@pytest.fixture(scope="module")
def cells() -> list[dict[str, Any]]:
    return load(TEMPLATE)["cells"]


def test_title_purpose_and_diagram(cells: list[dict[str, Any]]) -> None:
    first = re.sub(r"<!--.*?-->", "", _source(cells[0]), flags=re.S).strip()
    title, _, purpose = first.partition("\n")
    assert title.startswith("# ") and not title.startswith("## ")
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", purpose.strip()) if s]
    assert 2 <= len(sentences) <= 3
    headings = [ln for c in cells if c["cell_type"] == "markdown" for ln in _source(c).splitlines()]
    assert sum(ln.startswith("# ") for ln in headings) == 1
    assert any(
        _source(c).startswith("```mermaid\nsequenceDiagram") for c in cells if c["cell_type"] == "markdown"
    )


def test_one_parameters_cell_with_profile_and_seed(cells: list[dict[str, Any]]) -> None:
    tagged = [c for c in cells if "parameters" in c["metadata"].get("tags", [])]
    assert len(tagged) == 1 and tagged[0]["cell_type"] == "code"
    assigned = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in ast.parse(_source(tagged[0])).body
        if isinstance(node, ast.Assign)
    }
    assert assigned == {"profile": "sim", "seed": 7}
    regress.check_parameters(assigned)


def test_numbered_sections_then_recap_then_checks(cells: list[dict[str, Any]]) -> None:
    sections = [
        ln
        for c in cells
        if c["cell_type"] == "markdown"
        for ln in _source(c).splitlines()
        if ln.startswith("## ")
    ]
    numbered = [s for s in sections if re.match(r"## \d+\. ", s)]
    assert [int(s.split()[1].rstrip(".")) for s in numbered] == list(range(1, len(numbered) + 1))
    assert len(numbered) >= 2
    assert sections[-2:] == ["## Recap", "## The register entries this notebook relied on"]
    recap = next(i for i, c in enumerate(cells) if _source(c).startswith("## Recap"))
    closing = next(i for i, c in enumerate(cells) if _source(c).startswith("## The register entries"))
    assert _source(cells[closing + 1]).strip() == "kit.notebook.entries_used()"
    after = [c for c in cells[recap + 1 : closing] if c["cell_type"] == "code"]
    trees = [ast.parse(_source(c)) for c in after]
    calls = [
        n
        for t in trees
        for n in ast.walk(t)
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "check"
    ]
    assert calls, "named checks after the recap"
    assert all({k.arg for k in n.keywords} & {"spec", "choice"} for n in calls), "each check names its basis"
    assert not any(isinstance(n, ast.Assert) for t in trees for n in ast.walk(t)), "no bare assert"


def test_template_is_stored_without_outputs_or_leaks(cells: list[dict[str, Any]]) -> None:
    code = [c for c in cells if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    assert leaks.scan_notebook(TEMPLATE) == []
    assert load(TEMPLATE)["metadata"]["kernelspec"]["name"] == "python3"


@pytest.mark.slow  # the template notebook run by kit regress: ≈5 s
@pytest.mark.papermill
def test_template_runs_cleanly_with_execution_counts(tmp_path: Path) -> None:
    report = regress.run(["_template"], notebooks_dir=ROOT / "notebooks", out_dir=tmp_path, jobs=1)
    (result,) = report.results
    assert result.status == "passed", result.details
    assert result.notes == ()  # nothing on stderr, no papermill warning
    executed = load(tmp_path / "_template.ipynb")
    code = [c for c in executed["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in code] == list(range(1, len(code) + 1))
    assert not any(o.get("name") == "stderr" for c in code for o in c["outputs"])


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_papermill_reads_every_parameter_with_its_help(path: Path) -> None:
    """papermill parses each parameter line (``--help-notebook``); a line it cannot parse (an
    ``=`` in the comment) would show in every ``kit regress`` summary as a note."""
    from papermill.translators import PythonTranslator

    tagged = next(c for c in load(path)["cells"] if "parameters" in c["metadata"].get("tags", []))
    source = _source(tagged)
    names = [
        node.targets[0].id
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    ]
    found = PythonTranslator.inspect({"source": source})
    assert [p.name for p in found] == names
    assert all(p.help for p in found if p.name not in ("profile", "seed")), found
