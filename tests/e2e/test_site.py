"""The documentation site in a real browser (``make e2e``): a notebook rendered with its stored
outputs, its links rewritten to the site's pages, and its closing table of the register entries
it relied on. The site is built into a temporary folder (``mkdocs build --strict``) and served
on loopback; the page is saved as ``out/e2e/site-00_quickstart.png``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.e2e.lab import ENABLED, ROOT, SKIP_REASON

if not ENABLED:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from tests.e2e.conftest import chromium

if TYPE_CHECKING:
    from playwright.sync_api import Playwright


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    out = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        check=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, name="site", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_quickstart_page_renders_its_stored_outputs_with_site_links(
    playwright: Playwright, site: str, artifacts: Path, tmp_path: Path
) -> None:
    with chromium(playwright, tmp_path / "profile") as context:
        page = context.new_page()
        page.goto(f"{site}/notebooks/00_quickstart/")
        page.wait_for_load_state("load")
        text = page.locator("body").inner_text()
        findings = [
            f"the page lacks {wanted!r}"
            for wanted in (
                "Quickstart: the whole journey",
                "Who is who",
                "register entries this notebook relied on",
            )
            if wanted not in text
        ]
        # the checks render folded: their results show once the reader opens them
        folded = page.locator("details.kit-checks")
        if folded.count() == 0 or "check passed: the journey ends in a person session" in text:
            findings.append("the checks are not folded on the page")
        else:
            folded.first.locator("summary").click()
            if "check passed: the journey ends in a person session" not in folded.first.inner_text():
                findings.append("the opened checks lack 'check passed: the journey ends in a person session'")
        hrefs = [h for h in page.locator("a").evaluate_all("a => a.map(x => x.getAttribute('href'))") if h]
        if "../01_partner_token/" not in hrefs:
            findings.append("the link to 01 is not the site's page")
        left = [h for h in hrefs if h.endswith(".ipynb") or "/docs/" in h]
        if left:
            findings.append(f"links written for JupyterLab left on the site: {left[:5]}")
        page.screenshot(path=str(artifacts / "site-00_quickstart.png"), full_page=False)
        contract = page.request.get(f"{site}/contract/")
        if contract.status != 200 or 'id="a15"' not in contract.text():
            findings.append("the contract page has no anchor for register entry A15")
    assert not findings, "\n".join(findings)
