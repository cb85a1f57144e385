"""A wire view as a person sees it in a browser: ``api.wire()``'s HTML, in headless Chromium.

A recording client makes a call the simulator fails once with an injected 503 and the client
retries; the view of that call (``api.wire(status=503)``) is rendered as a page, and the request
line, the 503 and the replayed 201 must be visible: both attempts of the call, grouped. The
screenshot goes to ``out/e2e/wire_view.png`` beside the notebooks' screenshots. No JupyterLab
is needed: the HTML is the one Jupyter shows (``_repr_html_``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.e2e.lab import ENABLED, SKIP_REASON

if not ENABLED:
    pytest.skip(SKIP_REASON, allow_module_level=True)

import kit
from tests.e2e.conftest import chromium

if TYPE_CHECKING:
    from playwright.sync_api import Page, Playwright


@pytest.fixture(scope="module")
def chromium_page(playwright: Playwright, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    """A tab of headless Chromium with a fresh profile (no JupyterLab behind it)."""
    with chromium(playwright, tmp_path_factory.mktemp("chromium-wire")) as context:
        yield context.new_page()


def test_a_retried_call_renders_with_both_attempts(chromium_page: Page, artifacts: Path) -> None:
    with kit.connect("sim", seed=7, record=True) as api:
        api.sim.reset(7)
        api.sessions.create("anonymous")
        api.sim.add_fault(method="POST", path="/accounts", when="after_commit", times=1, status=503)
        account = api.accounts.create()
        view = api.wire(path="/accounts", status=503)
        page_html = f"<!doctype html><html><body>{view._repr_html_()}</body></html>"

    chromium_page.set_content(page_html)
    request_line = chromium_page.get_by_text("POST http://127.0.0.1:<port>/accounts HTTP/1.1")
    assert request_line.count() == 2  # the first attempt and its retry
    for locator in (
        request_line.first,
        request_line.last,
        chromium_page.get_by_text("HTTP/1.1 503 Service Unavailable"),
        chromium_page.get_by_text("HTTP/1.1 201 Created"),
        chromium_page.get_by_text("attempt 2 of 2"),
    ):
        assert locator.is_visible(), locator
    assert account.account_id in chromium_page.content()
    for hidden in ("Bearer ey", "svc-session-id: ses_"):  # redacted when recorded: markers only
        assert hidden not in chromium_page.content()
    chromium_page.screenshot(path=str(artifacts / "wire_view.png"), full_page=True)
    assert (artifacts / "wire_view.png").stat().st_size > 0
