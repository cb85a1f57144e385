"""What a newcomer sees first: 00_quickstart's opening in JupyterLab.

The title cell keeps three things apart (the spec, the simulator's choices, your sandbox) and
links the spec's text and the table of every notebook; the who-is-who diagram, after the
journey, renders as an SVG image naming the partner app, the partner back end and the service;
the table of the entries the notebook relied on, at its end, is folded (one line per entry, an
entry opens on a click), not a wall of text. Saved as ``out/e2e/00_quickstart-title.png`` (the three
things), ``00_quickstart-opening.png`` (who is who) and ``00_quickstart-register.png``.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

import pytest

from tests.e2e.lab import ENABLED, SKIP_REASON, Lab

if not ENABLED:
    pytest.skip(SKIP_REASON, allow_module_level=True)

# Playwright is the optional .[e2e] extra: imported only when the suite runs
from playwright.sync_api import Page

from tests.e2e.notebook_page import NotebookPage

QUICKSTART = "00_quickstart.ipynb"
PARTIES = ("Partner app", "Partner back end", "Partner API")


def test_00_says_who_is_who_and_links_the_map(page: Page, lab: Lab, artifacts: Path) -> None:
    nb = NotebookPage(page, lab, QUICKSTART)
    nb.open()
    findings = nb.diagram_findings(expected=2)
    title = page.locator(".jp-MarkdownCell").first
    title_text = title.inner_text()
    for wanted in ("the spec", "the simulator's choices", "your sandbox", "data/seed.txt"):
        if wanted not in title_text:
            findings.append(f"the title cell does not say {wanted!r}")
    nb.screenshot(artifacts / "00_quickstart-title.png", title)
    # the journey's diagram comes first, before the first call; who is who follows the journey
    cell = page.locator(".jp-MarkdownCell", has=page.locator("h2", has_text="Who is who")).first
    source = cell.locator(".jp-RenderedMermaid figure img").first.get_attribute("src") or ""
    assert source.startswith("data:image/svg+xml"), "the who-is-who diagram is not an SVG image"
    svg = unquote(source.split(",", 1)[1])
    missing = [party for party in PARTIES if party not in svg]
    if missing:
        findings.append(f"the who-is-who diagram does not name {missing}")
    nb.screenshot(artifacts / "00_quickstart-opening.png", cell)
    nb.screenshot(artifacts / "00_quickstart-top.png")  # the viewport grows to the whole notebook

    # the one table of every notebook is the site's home: 00 links it (JupyterLab resolves a
    # relative link to the server's /files/ URL, with a query and the fragment kept)
    links = page.locator(".jp-MarkdownCell a").evaluate_all(
        "links => links.map(a => { const u = new URL(a.href); "
        "return u.pathname.split('/').slice(-2).join('/') + u.hash; })"
    )
    if "docs/index.md#the-notebooks" not in links:
        findings.append(f"no link to the table of every notebook (docs/index.md#the-notebooks): {links[:8]}")

    register = page.locator("details.kit-register").first
    if register.count() == 0:
        findings.append("the register is not shown as a folded table")
    else:
        entries = register.locator("tbody tr")
        closed = register.locator("tbody details:not([open])").count()
        if entries.count() < 10 or closed != entries.count():
            findings.append(
                f"{entries.count()} register rows, {closed} of them folded: expected every row folded"
            )
        entries.first.locator("summary").click()
        if "the simulator:" not in entries.first.inner_text():
            findings.append("a register entry does not open to the simulator's choice on a click")
        nb.screenshot(artifacts / "00_quickstart-register.png", register)
    assert not findings, "\n".join(findings)
