"""Notebooks hold with a dialect file inferred from a stranger's OpenAPI document: ``kit serve
--choices OWN`` (other paths, camel case with other renames, other headers), its
``/openapi.json`` made a stranger's, ``kit choices infer`` over it, then ``kit regress -p
profile=sandbox --choices INFERRED`` on three notebooks that walk the moved paths and renamed
members (sessions, onboarding, P2P)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kit import _infer_openapi as _infer
from kit._choicetool import check
from tests.sandbox.conftest import CLIENT_ID, point_at
from tests.support.launcher import serve_process
from tests.support.stranger import OWN, stranger

ROOT = Path(__file__).resolve().parents[2]
SELECTION = ("03", "04", "07")

pytestmark = [pytest.mark.papermill, pytest.mark.slow]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, Path]]:
    from kit import regress

    folder = tmp_path_factory.mktemp("inferred")
    own, inferred, fixtures = folder / "own.toml", folder / "inferred.toml", folder / "fixtures.toml"
    own.write_text(OWN, encoding="utf-8")
    with serve_process("--no-control", "--choices", str(own), "--sandbox-fixtures", str(fixtures)) as served:
        document = httpx.get(served.base_url + "/openapi.json", timeout=30).json()
        inferred.write_text(_infer.infer_text(stranger(document), source="a stranger's document"))
        assert check(str(inferred)) == []
        with pytest.MonkeyPatch.context() as patch:
            point_at(patch, served.base_url, fixtures)
            yield (
                regress.run(
                    list(SELECTION),
                    notebooks_dir=ROOT / "notebooks",
                    out_dir=folder / "out",
                    parameters={"profile": "sandbox"},
                    jobs=2,
                    progress=False,
                    expect_choices=inferred,
                ),
                inferred,
            )


def test_the_notebooks_hold_with_the_inferred_file(run: tuple[object, Path]) -> None:
    report, _ = run
    assert CLIENT_ID
    assert [r.notebook[:2] for r in report.results] == list(SELECTION)  # type: ignore[attr-defined]
    failed = {r.notebook: r.message for r in report.failed}  # type: ignore[attr-defined]
    assert not failed, failed
    violated = [
        (r.notebook, c.name, c.reason)
        for r in report.results  # type: ignore[attr-defined]
        for c in r.checks
        if c.outcome == "failed"
    ]
    assert not violated, violated
    assert not report.drift, report.drift  # type: ignore[attr-defined]
