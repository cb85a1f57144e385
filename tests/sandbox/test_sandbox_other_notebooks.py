"""Every notebook on the sandbox profile against a server that keeps the spec but chose otherwise.

``kit regress -p profile=sandbox`` against ``kit serve --no-control --choices
data/choices/other.toml --sandbox-fixtures F``: the simulator's second personality (UUID ids, no
``svc-assumptions``, optional fields such as ``created_at`` and ``last4`` left out, sessions
required where rule 5 says "should", other lifetimes, other refusal codes, a shorter close-reason
list) and three published test personas. The notebooks check the API, not the simulator: every
notebook passes, every choice check that does not hold is reported as a **difference** naming
its register entry (``summary.md``: "differs"), nothing crashes, no seed statement is violated,
and no fixture value reaches an output or a report. (The run on the simulator's own choices is
``test_sandbox_notebooks.py``.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from kit import _fixtures as fixtures
from kit import regress
from tests.sandbox.conftest import assert_every_notebook_passed, regress_on
from tests.support.launcher import Served, serve_process

ROOT = Path(__file__).resolve().parents[2]
OTHER = ROOT / "data" / "choices" / "other.toml"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))

pytestmark = [
    pytest.mark.papermill,
    pytest.mark.slow,
    pytest.mark.skipif(
        not OTHER.is_file(), reason="data/choices/other.toml (the second personality) is not shipped yet"
    ),
]


@pytest.fixture(scope="module")
def other_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    """``kit serve --no-control --choices data/choices/other.toml --sandbox-fixtures F``."""
    path = tmp_path_factory.mktemp("other") / "fixtures.toml"
    with serve_process("--no-control", "--choices", str(OTHER), "--sandbox-fixtures", str(path)) as served:
        yield served, path


@pytest.fixture(scope="module")
def report(
    other_server: tuple[Served, Path], tmp_path_factory: pytest.TempPathFactory
) -> regress.RegressReport:
    served, path = other_server
    return regress_on(served.base_url, path, tmp_path_factory.mktemp("other-out") / "out")


def test_every_notebook_passes_on_a_server_with_other_choices(report: regress.RegressReport) -> None:
    assert_every_notebook_passed(report, len(NOTEBOOKS))
    assert not report.drift, [f"{n}: {d}" for n, d in report.drift]
    unchecked = [r.notebook for r in report.results if r.count("passed") == 0]
    assert not unchecked, f"these notebooks checked nothing of the spec on this server: {unchecked}"


def test_every_difference_is_reported_with_its_entry(report: regress.RegressReport) -> None:
    differences = [d for r in report.results for d in r.differences]
    assert differences, "a server with other choices must differ from some register entry"
    assert all(re.fullmatch(r"A\d\d", entry) for entry, *_ in differences), differences
    summary = report.summary_path.read_text(encoding="utf-8")
    for entry in {entry for entry, *_ in differences}:
        assert re.search(rf"\b{entry}\b.*differs|differs.*\b{entry}\b", summary), (
            f"{entry} not listed as differing"
        )
    # The id formats, the close reasons and the optional fields are among what this server re-chose.
    differing = {entry for entry, *_ in differences}
    assert {"A41", "A15"} <= differing, differing


def test_nothing_leaks_on_a_server_with_other_choices(
    report: regress.RegressReport, other_server: tuple[Served, Path]
) -> None:
    assert not report.findings, report.findings
    _, path = other_server
    values = [v for v in fixtures.load(path).values() if len(v) >= 6]
    assert values
    pattern = re.compile("|".join(rf"(?<![\w-]){re.escape(v)}(?![\w-])" for v in values))
    for written in (p for p in report.out_dir.rglob("*") if p.is_file()):
        found = pattern.search(written.read_text(encoding="utf-8", errors="replace"))
        assert found is None, f"a fixture value in {written.name}"
