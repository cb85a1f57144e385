"""Every notebook against a server that serves only 1.2.0-20221215.

``kit serve --no-control --choices F --sandbox-fixtures P`` where ``F`` re-chooses A27's
``versions`` to the seed's version alone: 1.1.0 is refused there as any unknown version. Every
notebook passes on the sandbox profile; the migration notebook (13) says that this server serves
only 1.2.0-20221215 and reports its 1.1.0 side skipped, as other notebooks skip what needs the
control plane; nothing is unexplained or failed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kit import regress
from tests.sandbox.conftest import assert_every_notebook_passed, regress_on
from tests.support.launcher import Served, serve_process

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
ONLY = "1.2.0-20221215"
MIGRATION = "13_migrating_to_1_2_0.ipynb"

pytestmark = [pytest.mark.papermill, pytest.mark.slow]


@pytest.fixture(scope="module")
def one_version_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    folder = tmp_path_factory.mktemp("one-version")
    overlay = folder / "only-1.2.0.toml"
    overlay.write_text(f'[A27]\nversions = ["{ONLY}"]\n', encoding="utf-8")
    fixtures = folder / "fixtures.toml"
    with serve_process(
        "--no-control", "--choices", str(overlay), "--sandbox-fixtures", str(fixtures)
    ) as served:
        yield served, fixtures


@pytest.fixture(scope="module")
def report(
    one_version_server: tuple[Served, Path], tmp_path_factory: pytest.TempPathFactory
) -> regress.RegressReport:
    served, fixtures = one_version_server
    return regress_on(served.base_url, fixtures, tmp_path_factory.mktemp("one-version-out") / "out")


def test_every_notebook_passes_on_a_server_serving_one_version(report: regress.RegressReport) -> None:
    assert_every_notebook_passed(report, len(NOTEBOOKS))


def test_the_migration_notebook_says_so_and_skips_the_1_1_0_side(report: regress.RegressReport) -> None:
    (result,) = [r for r in report.results if r.notebook == MIGRATION]
    skipped = [c for c in result.checks if c.outcome == "skipped"]
    assert skipped and all(f"serves only {ONLY}" in c.reason for c in skipped), skipped
    executed = json.loads((report.out_dir / MIGRATION).read_text(encoding="utf-8"))
    printed = "".join(
        "".join(o.get("text", "")) for cell in executed["cells"] for o in cell.get("outputs", [])
    )
    assert f"This server serves only {ONLY} of 1.1.0 and {ONLY}: the 1.1.0 side is skipped." in printed
