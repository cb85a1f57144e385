"""A run's ``report.html`` in a real browser (``make e2e``): a small ``kit regress`` on the embedded
simulator (one notebook passes, one fails), its page opened from a ``file://`` URL. The headline
and the notebooks' rows are visible, the failed notebook's fold is open and the passed one's
closed, and the browser asks for nothing but the page itself. Saved as
``out/e2e/report-html.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.e2e.lab import ENABLED, SKIP_REASON

if not ENABLED:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from kit import regress
from tests.e2e.conftest import chromium
from tests.notebooks.helpers import FIXTURES

if TYPE_CHECKING:
    from playwright.sync_api import Playwright


def test_a_runs_report_opens_from_a_file_and_fetches_nothing(
    playwright: Playwright, artifacts: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    report = regress.run(
        ["01", "02"], notebooks_dir=FIXTURES, out_dir=out, parameters={"expected_total": 7}, jobs=1
    )
    assert [r.status for r in report.results] == ["passed", "failed"]
    page_url = (out / "report.html").resolve().as_uri()
    asked: list[str] = []
    with chromium(playwright, tmp_path / "profile") as context:
        page = context.new_page()
        page.on("request", lambda request: asked.append(request.url))
        page.goto(page_url)
        page.wait_for_load_state("load")
        headline = page.locator("h1")
        assert headline.is_visible()
        assert headline.inner_text() == "kit regress: 1 of 2 notebooks failed"
        row = page.locator("#notebooks tbody tr", has_text="02_param.ipynb")
        assert row.is_visible() and "failed" in row.inner_text()
        assert page.locator("#fact-server").inner_text() == "the simulator embedded in each kernel"
        failed, passed = page.locator("#nb-2"), page.locator("#nb-1")
        assert failed.get_attribute("open") is not None and passed.get_attribute("open") is None
        assert page.locator("#nb-2 p", has_text="AssertionError").first.is_visible()
        assert not page.locator("#nb-1 p").first.is_visible()  # folded: only its summary shows
        page.screenshot(path=str(artifacts / "report-html.png"), full_page=True)
    assert asked == [page_url], asked
