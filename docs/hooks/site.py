"""MkDocs hook: the notebooks and the spec's text join the site from where they live.

The notebooks stay in ``notebooks/`` (JupyterLab, nbval and the wheel read them there); this
hook adds them to the site's files as ``notebooks/NN_name.ipynb`` (mkdocs-jupyter renders them
with their stored outputs) and ``data/seed.txt`` as a plain file. The CLI reference,
``cli.md``, is generated from the ``kit`` command's own parser (:mod:`kit._clihelp`), so it is
never behind ``kit COMMAND --help``. A notebook's links are written
for JupyterLab in the repository (``01_partner_token.ipynb``, ``../docs/contract.md#a15``,
``../data/seed.txt``, a stored screenshot ``images/11_explorer-….png``); on its rendered page
they are rewritten to the site's addresses.
A notebook's cells tagged ``checks`` (its regression checks, after the story:
``kit/notebook/tags.py``) render folded, each in a ``<details>`` the reader may open.
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
#: Files of the repository outside docs/ that the site carries, as ``(folder, pattern)``.
CARRIED = (("notebooks", "[0-9][0-9]_*.ipynb"), ("notebooks/images", "*.png"), ("data", "seed.txt"))

_HREF = re.compile(r'href="([^"#]*)(#[^"]*)?"')
#: An image a notebook shows (its stored screenshots, ``notebooks/images/``).
_SRC = re.compile(r'<img([^>]*?) src="(images/[^"]*)"')
#: An inline code span holding ``<!`` (a regular expression's look-behind in the contract): MkDocs
#: scans a page's raw HTML before Markdown does, and Python's HTML parser fails on ``<![``.
_DECLARATION_IN_CODE = re.compile(r"(`+)([^`\n]*<![^`\n]*)\1")
#: A rendered cell tagged ``checks`` (mkdocs-jupyter marks each cell's tags as ``celltag_<tag>``).
_CHECKS_CELL = re.compile(r'<div class="jp-Cell [^"]*\bcelltag_checks\b[^"]*">')
_DIV = re.compile(r"<div\b|</div>")
#: The summary line of a folded cell of checks.
CHECKS_SUMMARY = "Checks: what <code>kit regress</code> verifies here (open to read)"


def code_as_html(markdown: str) -> str:
    """Inline code spans holding ``<!`` written as ``<code>`` elements, their text escaped.

    >>> code_as_html("a `(?<![0-9])_x*` b")
    'a <code>(?&lt;!&#91;0-9])&#95;x&#42;</code> b'
    """

    def escaped(match: re.Match[str]) -> str:
        text = html.escape(match.group(2), quote=False)
        for char, entity in (("[", "&#91;"), ("_", "&#95;"), ("*", "&#42;"), ("\\", "&#92;")):
            text = text.replace(char, entity)
        return f"<code>{text}</code>"

    return _DECLARATION_IN_CODE.sub(escaped, markdown)


def fold_checks(page: str) -> str:
    """Each cell tagged ``checks`` wrapped in a closed ``<details class="kit-checks">``.

    >>> folded = fold_checks('<p>a</p><div class="jp-Cell celltag_checks"><div>c</div></div><p>b</p>')
    >>> folded.startswith('<p>a</p><details class="kit-checks"><summary>'), folded[-24:]
    (True, '</div></details><p>b</p>')
    """
    out, at = [], 0
    for start in [m.start() for m in _CHECKS_CELL.finditer(page)]:
        if start < at:  # nested in a cell already folded
            continue
        depth, end = 0, len(page)
        for tag in _DIV.finditer(page, start):
            depth += 1 if tag.group() == "<div" else -1
            if depth == 0:
                end = tag.end()
                break
        out += [page[at:start], f'<details class="kit-checks"><summary>{CHECKS_SUMMARY}</summary>']
        out += [page[start:end], "</details>"]
        at = end
    return "".join(out) + page[at:]


def cli_reference() -> str:
    """The CLI reference page, from the ``kit`` of this repository (not another one installed)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from kit._clihelp import reference
    from kit.cli import build_parser

    return reference(build_parser())


@event_priority(100)  # before mkdocs-jupyter turns .ipynb files into pages
def on_files(files: Files, config: Any) -> Files:
    for folder, pattern in CARRIED:
        for path in sorted((ROOT / folder).glob(pattern)):
            uri = f"{folder}/{path.name}"
            if files.get_file_from_path(uri) is None:
                files.append(File(uri, str(ROOT), config["site_dir"], config["use_directory_urls"]))
    if files.get_file_from_path("cli.md") is None:
        files.append(File.generated(config, "cli.md", content=cli_reference()))
    return files


def site_href(href: str, fragment: str = "") -> str:
    """A notebook's link, relative to its rendered page ``notebooks/NN_name/``.

    >>> site_href("01_partner_token.ipynb")
    '../01_partner_token/'
    >>> site_href("../docs/contract.md", "#a15")
    '../../contract/#a15'
    >>> site_href("../data/seed.txt")
    '../../data/seed.txt'
    >>> site_href("images/11_explorer-mid-journey.png")
    '../images/11_explorer-mid-journey.png'
    >>> site_href("https://www.rfc-editor.org/rfc/rfc9457")
    'https://www.rfc-editor.org/rfc/rfc9457'
    """
    if "://" in href or href.startswith(("/", "mailto:")) or not href:
        return href + fragment
    if href.endswith(".ipynb") and "/" not in href:
        return f"../{href[: -len('.ipynb')]}/{fragment}"
    if href.startswith("../docs/") and href.endswith(".md"):
        page = href[len("../docs/") : -len(".md")]
        return f"../../{'' if page == 'index' else page + '/'}{fragment}"
    if href.startswith(("../data/", "images/")):
        return "../" + href + fragment
    return href + fragment


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    return code_as_html(markdown)


def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    if not page.file.src_uri.startswith("notebooks/"):
        return html
    html = _SRC.sub(lambda m: f'<img{m.group(1)} src="{site_href(m.group(2))}"', html)
    return fold_checks(_HREF.sub(lambda m: f'href="{site_href(m.group(1), m.group(2) or "")}"', html))
