"""Every notebook in the second dialect: ``kit regress -p profile=sandbox --choices
data/choices/camel.toml`` against ``kit serve --no-control --choices data/choices/camel.toml``
(other paths, camelCase names, other header names, EdDSA signatures, generic codes, the form-post
client authentication). The kernels' clients speak the file and the checks expect it: every
notebook passes, nothing drifts, nothing leaks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kit import regress
from tests.sandbox.conftest import assert_every_notebook_passed, regress_on
from tests.support.launcher import serve_process

ROOT = Path(__file__).resolve().parents[2]
CAMEL = ROOT / "data" / "choices" / "camel.toml"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))

pytestmark = [pytest.mark.papermill, pytest.mark.slow]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[regress.RegressReport]:
    fixtures = tmp_path_factory.mktemp("camel") / "fixtures.toml"
    with serve_process(
        "--no-control", "--choices", str(CAMEL), "--sandbox-fixtures", str(fixtures)
    ) as served:
        yield regress_on(
            served.base_url, fixtures, tmp_path_factory.mktemp("camel-out") / "out", choices=CAMEL
        )


def test_every_notebook_passes_in_the_second_dialect(report: regress.RegressReport) -> None:
    assert_every_notebook_passed(report, len(NOTEBOOKS))
    assert not report.drift, [f"{n}: {d}" for n, d in report.drift]


def test_nothing_leaks_in_the_second_dialect(report: regress.RegressReport) -> None:
    assert not report.findings, report.findings


def test_the_migration_explains_every_difference_in_the_second_dialect(report: regress.RegressReport) -> None:
    """13's wire is recorded in the kit's spelling, so the change records attribute what the
    dialect renamed (the role header, close_reason, the moved P2P path)."""
    (migrating,) = [r for r in report.results if r.notebook.startswith("13_")]
    outcomes = {c.name: (c.outcome, c.reason) for c in migrating.checks}
    assert outcomes["every difference on the wire belongs to a change of 1.2.0"] == ("passed", ""), outcomes
