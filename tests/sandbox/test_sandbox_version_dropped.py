"""Notebook 13 behind a sandbox that selects no version by the kit's header.

The spec does not say how a version is selected on a request (version.2; the kit's choice is
A27's header). A stand-in that drops ``svc-api-version`` from every request before it reaches
``kit serve --no-control`` answers everything under its default, 1.2.0-20221215: a request for
1.1.0 is neither refused nor served. ``kit regress -p profile=sandbox`` of notebook 13 says so in
one sentence, reports its 1.1.0 side skipped with that reason and passes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kit import register, regress
from kit.regress import migration
from tests.notebooks.junit_check import valid_results
from tests.sandbox.conftest import point_at
from tests.sandbox.proxy import DriftingProxy
from tests.support.launcher import Served

ROOT = Path(__file__).resolve().parents[2]
MIGRATION = "13_migrating_to_1_2_0.ipynb"
OLD, NEW = "1.1.0", str(register.value("A27")["version"])
WHY = (
    f"this server answered a {OLD} request under {NEW}: it serves one version, "
    "or selects versions in a way the kit does not know; A27"
)


@pytest.fixture(scope="module")
def deaf(sandbox: Served) -> Iterator[DriftingProxy]:
    """The sandbox behind a stand-in that drops the version header of every request."""
    with DriftingProxy(sandbox.base_url, [], drop_request=[register.value("A27")["header"]]) as proxy:
        yield proxy


def test_a_request_for_another_version_answered_under_the_default_is_not_served(
    deaf: DriftingProxy, sandbox: Served
) -> None:
    probed = migration.probe(deaf.base_url, OLD)
    assert (probed.served, probed.answered, probed.why()) == (False, NEW, WHY)
    assert migration.probe(deaf.base_url, NEW).served
    assert migration.probe(sandbox.base_url, OLD).served  # the same server, the header reaching it


def test_an_answer_naming_no_version_serves_none(sandbox: Served) -> None:
    header = register.value("A27")["header"]
    with DriftingProxy(sandbox.base_url, [], drop_request=[header], drop_answer=[header]) as mute:
        probed = [migration.probe(mute.base_url, v) for v in (OLD, NEW)]
    assert [(p.served, p.answered) for p in probed] == [(False, None), (False, None)]
    assert probed[0].why() == WHY.replace(f"under {NEW}", "naming no version")


@pytest.mark.slow  # a notebook against a sandbox: ≈8 s
@pytest.mark.papermill
def test_notebook_13_skips_its_1_1_0_side_behind_a_server_ignoring_the_version(
    deaf: DriftingProxy, fixtures_path: Path, tmp_path: Path
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        point_at(patch, deaf.base_url, fixtures_path)
        report = regress.run(
            [MIGRATION],
            notebooks_dir=ROOT / "notebooks",
            out_dir=tmp_path / "out",
            parameters={"profile": "sandbox"},
            jobs=1,
            progress=False,
        )
    assert not report.failed, {r.notebook: r.message for r in report.failed}
    results = valid_results(report.out_dir)
    assert [(n["notebook"], n["status"]) for n in results["notebooks"]] == [(MIGRATION, "passed")]
    outcomes = {c["title"]: (c["outcome"], c["message"]) for c in results["checks"]}
    assert outcomes["every difference on the wire belongs to a change of 1.2.0"] == ("skipped", WHY), outcomes
    assert outcomes["each version's run made its calls"][0] == "passed", outcomes
    assert not [t for t, (outcome, _) in outcomes.items() if outcome == "failed"], outcomes

    executed = json.loads((report.out_dir / MIGRATION).read_text(encoding="utf-8"))
    printed = "".join(
        "".join(o.get("text", "")) for cell in executed["cells"] for o in cell.get("outputs", [])
    )
    assert f"{WHY[0].upper()}{WHY[1:]}." in printed
