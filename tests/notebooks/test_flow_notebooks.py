"""The flow notebooks themselves: their shape, their stored outputs, and regression runs with
other parameters (issue #4). nbval compares the stored outputs (``make test``); here the
notebooks run through ``kit regress`` as a scheduled run would."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kit import regress
from kit.regress import leaks

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict) -> str:
    return "".join(cell["source"])


def test_there_is_a_notebook_per_flow() -> None:
    names = {p.name[:2] for p in NOTEBOOKS}
    assert {f"{n:02d}" for n in range(10)} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_follows_the_house_template(path: Path) -> None:
    cells = _cells(path)
    assert _source(cells[0]).startswith("# "), "an H1 title first"
    assert any("```mermaid" in _source(c) for c in cells if c["cell_type"] == "markdown")
    tagged = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged parameters"
    assert 'profile = "sim"' in _source(tagged[0]) and "seed = " in _source(tagged[0])
    assert any("## Recap" in _source(c) for c in cells if c["cell_type"] == "markdown")
    code = [c for c in cells if c["cell_type"] == "code"]
    assert all(c["execution_count"] is not None for c in code), "stored outputs keep execution counts"
    assert any(re.search(r"\bcheck\(", _source(c)) for c in code), "named checks fail the run on regression"
    streams = [o.get("name") for c in code for o in c.get("outputs", []) if o["output_type"] == "stream"]
    assert "stderr" not in streams, "no warning or log line is stored as part of the contract"
    imports_sim = re.compile(r"\bkit\.sim\b(?!ulate)|from kit import sim\b")
    assert not any(imports_sim.search(_source(c)) for c in code), "notebooks speak HTTP, not to kit.sim"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_notebook_holds_no_secret_pii_token_or_ciphertext(path: Path) -> None:
    findings = leaks.scan_notebook(path)
    assert findings == [], [f"{f.kind} at {f.location}" for f in findings]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_notebook_holds_no_wall_clock_time(path: Path) -> None:
    """Stored outputs are the regression contract: no run timestamps in cell metadata either."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    stamped = [n for n, cell in enumerate(nb["cells"], 1) if "execution" in cell.get("metadata", {})]
    assert not stamped, f"cells {stamped} keep execution timestamps: strip cell.metadata.execution"


@pytest.mark.slow  # a kit regress run: ≈7 s
@pytest.mark.papermill
def test_a_run_with_other_flow_values_passes(tmp_path: Path) -> None:
    report = regress.run(
        ["05", "06"],
        notebooks_dir=ROOT / "notebooks",
        out_dir=tmp_path,
        parameters={"reason": "stolen", "event_type": "password.forgot"},
        jobs=2,
        progress=False,
    )
    assert report.ok, report.summary
    executed = (tmp_path / "05_cards_close_with_reason.ipynb").read_text(encoding="utf-8")
    assert '"stolen"' in executed  # the injected parameter, and the outputs that follow from it
    assert (tmp_path / "junit.xml").is_file() and "passed" in report.summary


@pytest.mark.slow  # a kit regress run: ≈5 s
@pytest.mark.papermill
def test_a_run_with_a_wrong_parameter_fails_with_a_clear_report(tmp_path: Path) -> None:
    report = regress.run(
        ["05"],
        notebooks_dir=ROOT / "notebooks",
        out_dir=tmp_path,
        parameters={"reason": "misplaced"},
        jobs=1,
        progress=False,
    )
    assert not report.ok
    (result,) = report.failed
    assert result.status == "failed" and result.cell is not None
    assert result.error is not None and "UnknownCloseReason" in result.error
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "05_cards_close_with_reason.ipynb" in summary and "failed" in summary
    assert "UnknownCloseReason" in (tmp_path / "junit.xml").read_text(encoding="utf-8")
