"""The screenshots a notebook shows (``notebooks/images/``, taken by ``make screenshots`` in
JupyterLab): each one shown exists, each one kept is shown, they travel with
``kit notebooks copy`` and the site, and the Makefile keeps the ones the browser suite takes."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from kit.regress import discovery
from tests.notebooks.helpers import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
IMAGES = ROOT / "notebooks" / discovery.IMAGES
SHOWN = re.compile(r"!\[[^\]]+\]\((images/[^)\s]+\.png)\)")
PNG = b"\x89PNG\r\n\x1a\n"


def _shown(path: Path) -> list[str]:
    cells = nbformat.read(path, as_version=4).cells
    return [m for c in cells if c.cell_type == "markdown" for m in SHOWN.findall(c.source)]


def test_the_explorer_shows_its_widget_as_clicked_in_jupyterlab() -> None:
    shown = _shown(ROOT / "notebooks" / "11_explorer.ipynb")
    assert "images/11_explorer-mid-journey.png" in shown and "images/11_explorer-journey-end.png" in shown


def test_every_screenshot_shown_is_kept_and_every_one_kept_is_shown() -> None:
    shown = {name for path in NOTEBOOKS for name in _shown(path)}
    kept = {f"images/{p.name}" for p in IMAGES.glob("*.png")}
    assert shown == kept
    for name in kept:
        data = (ROOT / "notebooks" / name).read_bytes()
        assert data.startswith(PNG) and 10_000 < len(data) < 1_500_000, name


def test_make_screenshots_keeps_what_the_browser_suite_takes() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    kept = re.search(r"^SCREENSHOTS := (.+)$", makefile, re.M)
    assert kept is not None
    suite = (ROOT / "tests" / "e2e" / "test_lab_notebooks.py").read_text(encoding="utf-8")
    for name in kept.group(1).split():
        assert f'"{name}"' in suite, f"the browser suite does not take {name}"
        assert (IMAGES / name).is_file(), f"{name} is not kept in notebooks/images"


def test_a_copy_of_the_notebooks_shows_its_screenshots(tmp_path: Path) -> None:
    written = discovery.copy(tmp_path / "mine")
    copied = {p.relative_to(tmp_path / "mine").as_posix() for p in written}
    for path in NOTEBOOKS:
        for name in _shown(path):
            assert name in copied and (tmp_path / "mine" / name).read_bytes().startswith(PNG)
