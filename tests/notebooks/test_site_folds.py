"""On the site, a notebook's cells tagged ``checks`` render folded (``docs/hooks/site.py``):
06 rendered as mkdocs-jupyter renders it, then through the hook's page step."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import nbformat

from kit.notebook.tags import CHECKS

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "06_inbound_events.ipynb"


def _hook() -> object:
    spec = importlib.util.spec_from_file_location("site_hook_folds", ROOT / "docs" / "hooks" / "site.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_checks_of_a_notebook_render_folded_after_its_story() -> None:
    from mkdocs_jupyter.nbconvert2 import nb2html

    hook = _hook()
    page = SimpleNamespace(file=SimpleNamespace(src_uri="notebooks/06_inbound_events.ipynb"))
    rendered = hook.on_page_content(nb2html(str(NOTEBOOK)), page, None, None)  # type: ignore[attr-defined]

    tagged = [c for c in nbformat.read(NOTEBOOK, as_version=4).cells if CHECKS in c.metadata.get("tags", [])]
    assert rendered.count('<details class="kit-checks">') == len(tagged) == 1
    story, _, folded = rendered.partition('<details class="kit-checks">')
    inside, _, after = folded.partition("</details>")
    assert "allowed_types" in story and "celltag_checks" not in story + after
    assert inside.startswith(f"<summary>{hook.CHECKS_SUMMARY}</summary>")  # type: ignore[attr-defined]
    assert "celltag_checks" in inside and "the eight event types are accepted" in inside
    assert "entries_used" in after  # the closing table stays open


def test_the_closing_tables_links_to_the_contract_become_the_sites(tmp_path: Path) -> None:
    """The table a notebook ends with links each entry to the contract as the notebooks' Markdown
    does (``../docs/contract.md#a15``, which JupyterLab opens); on the site that link is the
    contract's page, in the HTML output as in the prose."""
    from mkdocs_jupyter.nbconvert2 import nb2html

    from kit.notebook.relied import used_table

    table = used_table({"A15": {"checks"}, "A13": {"answers"}})
    cell = nbformat.v4.new_code_cell("kit.notebook.entries_used()")
    shown = {"text/html": table._repr_html_(), "text/plain": repr(table)}
    cell.outputs = [nbformat.v4.new_output("execute_result", data=shown, execution_count=1)]
    path = tmp_path / "99_closing.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    page = SimpleNamespace(file=SimpleNamespace(src_uri="notebooks/99_closing.ipynb"))
    rendered = _hook().on_page_content(nb2html(str(path)), page, None, None)  # type: ignore[attr-defined]
    assert rendered.count('<a href="../../contract/#a15">the contract, entry A15</a>') == 1
    assert rendered.count('<a href="../../contract/#a13">the contract, entry A13</a>') == 1
    assert "../docs/contract.md" not in rendered
