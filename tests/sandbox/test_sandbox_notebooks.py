"""Every notebook on the sandbox profile, as a partner's nightly run would do it.

``kit regress -p profile=sandbox`` against ``kit serve --no-control --sandbox-fixtures F`` with
only what a partner has (``PARTNER_API_*`` credentials and the fixtures file): every notebook
passes, what needs the control plane is reported skipped with its reason, the signed webhook
deliveries of 08 reach the client's receiver, nothing drifts and no fixture value reaches an
output or a report.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kit import _fixtures as fixtures
from kit import regress
from kit.notebook import NEEDS
from tests.notebooks.junit_check import valid_junit, valid_results

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # every notebook against a sandbox: ≈27 s
@pytest.mark.papermill
def test_every_notebook_passes_on_the_sandbox_with_honest_skips(
    sandbox_env: dict[str, str], fixtures_path: Path, tmp_path: Path
) -> None:
    report = regress.run(
        notebooks_dir=ROOT / "notebooks",
        out_dir=tmp_path / "out",
        parameters={"profile": "sandbox"},
        jobs=2,
        progress=False,
    )
    failed = {r.notebook: r.message for r in report.failed}
    assert not failed, failed
    valid_junit(report.junit)  # a partner's nightly reports follow their schemas
    statuses = [n["status"] for n in valid_results(report.out_dir)["notebooks"]]
    assert statuses == ["passed"] * len(report.results)
    assert len(report.results) == len(list((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")))
    assert not report.drift and not report.findings

    skipped = [c for r in report.results for c in r.checks if c.outcome == "skipped"]
    assert skipped, "a sandbox has no control plane: some checks must be reported skipped"
    assert all(c.reason for c in skipped), "every skip says why"
    unchecked = [r.notebook for r in report.results if r.count("passed") == 0]
    assert not unchecked, f"these notebooks checked nothing on the sandbox: {unchecked}"
    assert "skipped" in report.summary.lower()
    # The sandbox stand-in is on loopback: the client's receiver gets its signed deliveries
    # (verified against the machine's clock, A46), so no receiver check is skipped.
    receiver = NEEDS["webhook receiver"].reason
    assert not [c.name for c in skipped if c.reason == receiver]
    webhooks = next(r for r in report.results if r.notebook.startswith("08_"))
    passed = {c.name for c in webhooks.checks if c.outcome == "passed"}
    assert {
        "the loopback receiver subscribes to every current event",
        "a card.closed event arrives under that name",
        "closing a card sends card.closed",
        "the card.closed delivery is signed and verifies",
        "every delivery received verified, none twice",
    } <= passed, passed

    # Independent of the run's own leak scan: the file's PII-sized values (names, dates of birth,
    # national ids; a KYC answer such as "01" alone is no PII), as whole words, in no file written.
    values = [v for v in fixtures.load(fixtures_path).values() if len(v) >= 6]
    assert values
    pattern = re.compile("|".join(rf"(?<![\w-]){re.escape(v)}(?![\w-])" for v in values))
    for path in (p for p in (tmp_path / "out").rglob("*") if p.is_file()):
        found = pattern.search(path.read_text(encoding="utf-8", errors="replace"))
        assert found is None, f"a fixture value in {path.name}"
