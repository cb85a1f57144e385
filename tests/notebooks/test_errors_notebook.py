"""``14_errors`` holds on a server that chose other problem codes (issue 34, item 5).

The notebook runs through ``kit regress -p profile=sandbox`` against ``kit serve --no-control
--choices data/choices/other.toml``, a conforming server whose refusals carry other codes
(``card-closed`` for the simulator's ``card-already-closed``, ``invalid-close-reason`` for
``unknown-close-reason``). It passes; the checks of the renamed codes are reported as
differences from A64, never failures; the families a back end catches (A21) and the seed's
statement (card.1) still pass; the reset is skipped for want of a control plane.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from kit import regress
from tests.sandbox.conftest import point_at
from tests.support.launcher import serve_process

ROOT = Path(__file__).resolve().parents[2]
OTHER = ROOT / "data" / "choices" / "other.toml"


@pytest.mark.slow  # a notebook on a kit serve with other codes: ≈13 s
@pytest.mark.papermill
def test_14_errors_holds_on_a_server_with_other_codes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renamed = tomllib.loads(OTHER.read_text(encoding="utf-8"))["A64"]["codes"]
    assert {"card-already-closed", "unknown-close-reason"} <= set(renamed)
    assert "unknown-product" not in renamed
    fixtures = tmp_path / "fixtures.toml"
    with serve_process(
        "--no-control", "--choices", str(OTHER), "--sandbox-fixtures", str(fixtures)
    ) as served:
        point_at(monkeypatch, served.base_url, fixtures)
        report = regress.run(
            ["14"],
            notebooks_dir=ROOT / "notebooks",
            out_dir=tmp_path / "out",
            parameters={"profile": "sandbox"},
            jobs=1,
            progress=False,
        )
    (result,) = report.results
    assert result.status == "passed", result.message
    outcomes = {c.name: (c.outcome, c.basis) for c in result.checks}
    assert outcomes["refused with card-already-closed"] == ("differs", "A64")
    assert outcomes["refused with unknown-product"] == ("passed", "A64")
    families = "each refusal raised its family: ValidationError, ValidationError, Conflict"
    assert outcomes[families] == ("passed", "A21")
    assert outcomes["a card closes with a reason in the body"] == ("passed", "card.1")
    assert outcomes["the simulator starts from its seeded state"][0] == "skipped"
    assert not [name for name, (outcome, _) in outcomes.items() if outcome == "failed"], outcomes
    reasons = [c.reason for c in result.checks if c.name == "refused with card-already-closed"]
    assert renamed["card-already-closed"] in reasons[0]
