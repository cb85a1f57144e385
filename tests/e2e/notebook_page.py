"""One notebook open in JupyterLab (single-document mode), as a person sees it.

Each ``*_findings`` method returns what a reader would see wrong, as sentences; the tests collect
them all before asserting, so one run reports every defect of a notebook, not only the first.

Example::

    >>> nb = NotebookPage(page, lab, "04_onboarding_and_kyc.ipynb")   # doctest: +SKIP
    >>> nb.open()                                                       # doctest: +SKIP
    >>> nb.diagram_findings(expected=1)                                 # doctest: +SKIP
    ['diagram 1 of 1 shows the Mermaid error box: Error: Parse error on line 15: ...']
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from playwright.sync_api import ConsoleMessage, Error, Locator, Page

from tests.e2e.lab import ROOT, VIEWPORT, Lab

NOTEBOOKS_DIR = ROOT / "notebooks"

#: Chromium cannot paint a taller page in one screenshot; longer notebooks are cut there.
MAX_SCREENSHOT_HEIGHT = 16000
LOAD_TIMEOUT_MS = 60_000
DIAGRAM_TIMEOUT_MS = 30_000
DIRTY_WAIT_MS = 1_500

#: Output areas a reader takes for a failure: a traceback or a warning (both are rendered with
#: the stderr MIME type) and the widget manager's own error boxes.
ERROR_OUTPUTS = (
    '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]',
    '.jp-OutputArea-output:has-text("Error displaying widget")',
    '.jp-OutputArea-output:has-text("Error rendering output item")',
)

_DIAGRAMS_JS = """() => Array.from(document.querySelectorAll('.jp-RenderedMermaid')).map(d => {
    const img = d.querySelector('figure img');
    const details = d.querySelectorAll('details pre');
    return {
        warning: d.classList.contains('jp-mod-warning'),
        svg: !!img && img.getAttribute('src').startsWith('data:image/svg+xml'),
        painted: !!img && img.complete && img.naturalWidth > 0,
        error: details.length ? details[details.length - 1].textContent : '',
    };
})"""

_MISSING_CELLS_JS = """() => Array.from(document.querySelectorAll('.jp-OutputArea-output table td'))
    .filter(td => ['NaN', '<NA>', 'NaT', 'None'].includes(td.innerText.trim()))
    .map(td => {
        const row = td.parentElement, table = td.closest('table');
        const head = table.querySelector('thead tr:last-child');
        const index = Array.from(row.children).indexOf(td);
        const label = head && head.children[index] ? head.children[index] : row.querySelector('th');
        return `${label ? label.innerText.trim() : '?'}=${td.innerText.trim()}`;
    })"""

_PROMPTS_JS = """() => Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputPrompt'))
    .map(e => e.innerText.trim())"""

_SCROLL_TOP_JS = """() => {
    const outer = document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer');
    if (outer) outer.scrollTop = 0;
}"""

_SCROLL_HEIGHT_JS = """() => {
    const outer = document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer');
    const top = outer ? outer.getBoundingClientRect().top : 0;
    return Math.ceil(top + (outer ? outer.scrollHeight : document.body.scrollHeight)) + 40;
}"""


class Console:
    """Browser console errors and uncaught page errors, as they arrive."""

    def __init__(self, page: Page) -> None:
        self.errors: list[str] = []
        page.on("console", self._on_console)
        page.on("pageerror", lambda exc: self.errors.append(f"uncaught: {exc}"))

    def _on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(f"console.error: {message.text}")

    def findings(self) -> list[str]:
        return [f"browser {e[:400]}" for e in self.errors]


class NotebookPage:
    """A notebook in JupyterLab's single-document view (``/doc/tree/NAME``)."""

    def __init__(self, page: Page, lab: Lab, name: str) -> None:
        self.page, self.lab, self.name = page, lab, name
        self.console = Console(page)

    # -- loading ------------------------------------------------------------------------------

    def open(self) -> None:
        """Open the notebook and wait for its cells and an idle kernel.

        Raises:
            playwright.sync_api.TimeoutError: no notebook or no idle kernel within a minute.
        """
        self.page.goto(self.lab.url(f"doc/tree/{self.name}"), timeout=LOAD_TIMEOUT_MS)
        self.page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=LOAD_TIMEOUT_MS)
        self.wait_idle(LOAD_TIMEOUT_MS)
        # the kernel's name in the toolbar: JupyterLab has read the kernel's spec (and compared it
        # with the notebook's stored kernelspec)
        self.page.wait_for_function(
            "name => (document.querySelector('.jp-Toolbar-kernelName') || {}).innerText === name",
            arg=self.lab.kernel_display_name(),
            timeout=LOAD_TIMEOUT_MS,
        )

    def wait_idle(self, timeout_ms: float) -> None:
        self.page.wait_for_selector(
            '.jp-Notebook-ExecutionIndicator[data-status="idle"]', state="attached", timeout=timeout_ms
        )

    def is_dirty(self) -> bool:
        """Whether JupyterLab holds changes the file does not (the notebook shows "unsaved");
        waits :data:`DIRTY_WAIT_MS` for the metadata updates that follow the kernel's start."""
        try:
            self.page.wait_for_selector(".jp-mod-dirty", state="attached", timeout=DIRTY_WAIT_MS)
        except Error:
            return False
        return True

    # -- what a reader sees ---------------------------------------------------------------------

    def diagram_findings(self, expected: int) -> list[str]:
        """Every Mermaid block rendered as an SVG image (no error box), ``expected`` of them."""
        try:
            self.page.wait_for_function(
                "n => document.querySelectorAll('.jp-RenderedMermaid').length >= n",
                arg=expected,
                timeout=DIAGRAM_TIMEOUT_MS,
            )
            self.page.wait_for_function(
                "() => Array.from(document.querySelectorAll('.jp-RenderedMermaid figure img'))"
                ".every(i => i.complete)",
                timeout=DIAGRAM_TIMEOUT_MS,
            )
        except Error:
            pass  # the count below says what is missing
        diagrams: list[dict[str, Any]] = self.page.evaluate(_DIAGRAMS_JS)
        findings = []
        if len(diagrams) != expected:
            findings.append(f"{expected} mermaid blocks in the notebook, {len(diagrams)} rendered blocks")
        for i, d in enumerate(diagrams, 1):
            if d["warning"] or not d["svg"]:
                error = " ".join(d["error"].split())[:300]
                findings.append(f"diagram {i} of {len(diagrams)} shows the Mermaid error box: {error}")
            elif not d["painted"]:
                findings.append(f"diagram {i} of {len(diagrams)}: the SVG image is empty")
        return findings

    def output_findings(self, when: str) -> list[str]:
        """Outputs a reader takes for a failure (a traceback, a warning, a widget error box)."""
        findings = []
        for selector in ERROR_OUTPUTS:
            for text in self.page.locator(selector).all_inner_texts():
                first = " ".join(text.split())[:300]
                findings.append(f"{when}: an output shows an error or warning: {first}")
        return findings

    def table_findings(self, when: str) -> list[str]:
        """Table cells that show a missing value as ``NaN`` (or ``<NA>``, ``NaT``, ``None``):
        the notebooks show nothing as ``-``. Names the columns (or the rows of a model's table)."""
        cells: list[str] = self.page.evaluate(_MISSING_CELLS_JS)
        if not cells:
            return []
        counts = ", ".join(f"{name} ×{n}" for name, n in Counter(cells).items())
        return [f"{when}: {len(cells)} table cells show nothing as NaN/<NA>/NaT/None, not as -: {counts}"]

    def prompts(self) -> list[str]:
        return list(self.page.evaluate(_PROMPTS_JS))

    # -- acting -------------------------------------------------------------------------------

    def menu(self, menu: str, item: str) -> None:
        """Click a main-menu entry (``Run`` → ``Run All Cells``), as a person does."""
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{re.escape(menu)}$")).click()
        self.page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{re.escape(item)}$")).click()

    def run_all(self, timeout_ms: float) -> list[str]:
        """Run → Run All Cells, and wait until no cell is queued or running.

        Returns findings: the run did not end in time, or a code cell was left unexecuted.
        """
        self.menu("Run", "Run All Cells")
        with contextlib.suppress(Error):  # every cell may have run before the first poll
            self.page.wait_for_function(
                f"() => ({_PROMPTS_JS})().some(p => p === '[*]:')", timeout=10_000, polling=50
            )
        try:
            self.page.wait_for_function(
                f"() => !({_PROMPTS_JS})().some(p => p === '[*]:')", timeout=timeout_ms, polling=250
            )
            self.wait_idle(timeout_ms)
        except Error:
            return [f"Run All did not finish within {timeout_ms / 1000:.0f} s; prompts: {self.prompts()}"]
        prompts = self.prompts()
        expected = [f"[{n}]:" for n in range(1, len(prompts) + 1)]
        # a cell of checks opens with its input collapsed (source_hidden) and shows no prompt:
        # that it ran is told by the numbers of the cells after it
        hidden = self.hidden_inputs() + [False] * len(prompts)
        pairs = enumerate(zip(prompts, expected, strict=True))
        if any(got != want and not (hidden[i] and got == "") for i, (got, want) in pairs):
            return [f"after Run All the code cells show {prompts}, not {expected}"]
        return []

    def hidden_inputs(self) -> list[bool]:
        """Per code cell of the notebook file, whether its input opens collapsed (source_hidden)."""
        cells = json.loads((NOTEBOOKS_DIR / self.name).read_text(encoding="utf-8"))["cells"]
        return [
            bool(c.get("metadata", {}).get("jupyter", {}).get("source_hidden"))
            for c in cells
            if c["cell_type"] == "code"
        ]

    # -- artifacts ------------------------------------------------------------------------------

    def screenshot(self, path: Path, element: Locator | None = None) -> None:
        """The whole notebook (or one ``element`` of it) in one picture: the viewport grows to
        the notebook's height first, so nothing is scrolled under the toolbar."""
        height = min(int(self.page.evaluate(_SCROLL_HEIGHT_JS)), MAX_SCREENSHOT_HEIGHT)
        self.page.set_viewport_size({"width": VIEWPORT["width"], "height": max(height, VIEWPORT["height"])})
        self.page.evaluate(_SCROLL_TOP_JS)  # Run All leaves the notebook scrolled to its end
        self.page.wait_for_timeout(300)
        path.parent.mkdir(parents=True, exist_ok=True)
        if element is None:
            self.page.screenshot(path=str(path))
        else:
            element.screenshot(path=str(path))
        self.page.set_viewport_size(VIEWPORT)
