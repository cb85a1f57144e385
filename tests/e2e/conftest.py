"""The browser suite: the notebooks in a real JupyterLab, in headless Chromium (Playwright).

``make e2e`` installs what it needs (Debian's Chromium, Playwright, the Mermaid parser) and runs
this folder with ``KIT_E2E=1``. Without it (``make test``, a bare ``pytest tests``) each module
here skips itself with that reason before importing Playwright (an optional extra, ``.[e2e]``):
the suite starts a JupyterLab and a browser, it is not a unit test.

Playwright drives Debian's ``/usr/bin/chromium`` (``executable_path``); it never downloads a
browser. The network is closed, so Chromium's background networking is off.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.e2e.lab import ROOT, VIEWPORT, Lab, lab_server

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page, Playwright

CHROMIUM = Path(os.environ.get("KIT_E2E_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = ROOT / "out" / "e2e"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DEFAULT_TIMEOUT_MS = 30_000


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """``out/e2e``: screenshots of this run (the previous run's are removed first)."""
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with lab_server(tmp_path_factory.mktemp("jupyterlab")) as server:
        yield server


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    """One Playwright driver for the whole run: its sync API allows one per thread."""
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: `make e2e` installs Debian's chromium package")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        yield driver


@contextmanager
def chromium(playwright: Playwright, profile: Path, **options: Any) -> Iterator[BrowserContext]:
    """Headless Chromium (Debian's, never downloaded) with a fresh profile in ``profile``;
    ``options`` go to Playwright's ``launch_persistent_context`` (headers, ...)."""
    context = playwright.chromium.launch_persistent_context(
        str(profile),
        executable_path=str(CHROMIUM),
        headless=True,
        args=CHROMIUM_ARGS,
        viewport=VIEWPORT,
        timeout=60_000,
        **options,
    )
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture(scope="session")
def browser(
    playwright: Playwright, tmp_path_factory: pytest.TempPathFactory, lab: Lab
) -> Iterator[BrowserContext]:
    """Headless Chromium with a fresh profile; every request carries the lab's token header."""
    folder = tmp_path_factory.mktemp("chromium-profile")
    with chromium(playwright, folder, extra_http_headers=lab.headers) as context:
        yield context


@pytest.fixture
def page(browser: BrowserContext, lab: Lab) -> Iterator[Page]:
    """A new tab; afterwards the tab is closed and every kernel stopped."""
    tab = browser.new_page()
    try:
        yield tab
    finally:
        tab.close()
        lab.shutdown_kernels()
