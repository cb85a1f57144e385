"""Every notebook as a person meets it in JupyterLab: opened, read, Run All, and for the explorer
and the population the interactive parts used.

Per notebook: the page loads with an idle kernel; every Mermaid block renders as an SVG (no
error box); no stored output shows an error or a warning, no table shows ``NaN`` for nothing;
the notebook does not open "unsaved"; Run All executes every code cell in order with no error or
warning output; the browser console stays free of errors. ``11_explorer``: after Run All the
widget answers every click of the whole journey with the right state chip and message, its
labels are not cut and its call table's headers sit over their columns.
``12_population_simulation``: a progress bar widget and the plots are shown. Screenshots (as
opened, after the run, the explorer mid-journey) go to ``out/e2e/``. Every finding of a notebook
is reported together.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.lab import ENABLED, NOTEBOOKS, SKIP_REASON, Lab

if not ENABLED:
    pytest.skip(SKIP_REASON, allow_module_level=True)

# Playwright is the optional .[e2e] extra: imported only when the suite runs
from playwright.sync_api import Page

from tests.e2e.diagrams import mermaid_sources
from tests.e2e.explorer_page import MID_JOURNEY, ExplorerWidget, walk
from tests.e2e.notebook_page import NotebookPage

RUN_ALL_TIMEOUT_MS = 120_000
#: Two populations of 200 customers, one of them through a single worker under faults.
SLOW_RUN_ALL_TIMEOUT_MS = {"12_population_simulation": 300_000}
PLOTS_EXPECTED = 3  # 12 builds the funnels, the error mix and the latencies


def explorer_findings(nb: NotebookPage, artifacts: Path) -> list[str]:
    """After Run All, the explorer answers the whole journey (``explorer_page.JOURNEY``)."""
    explorer = ExplorerWidget(nb.page)
    if not explorer.present():
        return ["after Run All no explorer widget is shown (only its text summary?)"]

    def after_step(number: int) -> None:
        if number == MID_JOURNEY:
            nb.screenshot(artifacts / "11_explorer-mid-journey.png", explorer.root.first)

    findings = explorer.layout_findings() + walk(explorer, after_step)
    nb.screenshot(artifacts / "11_explorer-journey-end.png", explorer.root.first)
    return findings


def population_findings(nb: NotebookPage, artifacts: Path) -> list[str]:
    """After Run All, a progress bar widget and the plots are on the page."""
    findings = []
    if nb.page.locator(".jp-OutputArea-output .jupyter-widgets .progress-bar").count() == 0:
        findings.append("no progress bar widget is shown while the populations run")
    images = nb.page.locator('.jp-OutputArea-output[data-mime-type="image/png"] img')
    painted = sum(1 for i in range(images.count()) if images.nth(i).evaluate("e => e.naturalWidth > 0"))
    if painted < PLOTS_EXPECTED:
        findings.append(f"{painted} plots shown after Run All, {PLOTS_EXPECTED} expected")
    return findings


EXTRA_CHECKS: dict[str, Callable[[NotebookPage, Path], list[str]]] = {
    "11_explorer": explorer_findings,
    "12_population_simulation": population_findings,
}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_in_jupyterlab(path: Path, page: Page, lab: Lab, artifacts: Path) -> None:
    nb = NotebookPage(page, lab, path.name)
    nb.open()
    findings = nb.diagram_findings(expected=len(mermaid_sources(path)))
    findings += nb.output_findings("as stored") + nb.table_findings("as stored")
    if nb.is_dirty():
        findings.append("the notebook opens with unsaved changes (JupyterLab rewrote its stored metadata)")
    nb.screenshot(artifacts / f"{path.stem}.png")

    findings += nb.run_all(SLOW_RUN_ALL_TIMEOUT_MS.get(path.stem, RUN_ALL_TIMEOUT_MS))
    findings += nb.output_findings("after Run All") + nb.table_findings("after Run All")
    extra = EXTRA_CHECKS.get(path.stem)
    if extra is not None:
        findings += extra(nb, artifacts)
    nb.screenshot(artifacts / f"{path.stem}-run.png")
    findings += nb.console.findings()
    assert not findings, f"{path.name} in JupyterLab:\n- " + "\n- ".join(findings)
