"""The README, the site and the notebooks agree where they say the same thing.

- The notebook list: one table, on the site's home page (``docs/index.md``, "The notebooks"), whose
  rows are exactly ``notebooks/[0-9][0-9]_*.ipynb`` with each notebook's title (its first heading),
  in the same order as the site's navigation; the README and the other pages link to it.
- Which session a card call needs: the register says card and inbound-event routes need only the
  partner token and a session sent with them is checked (A31, A43, A63's value). No page, and no
  notebook's prose or code comment, says a card needs a session.
- Who may add a person: an account or person session of the account, or the anonymous session of
  the device that created it (A42). A sentence that names only the account session is wrong.
- The getting-started page's code runs, as a reader would paste it, block after block.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kit import register

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "contract.md")]

#: Notebooks whose words still contradict the register, each with where: strict, so that a fix
#: makes the list shrink (none today).
CARD_SESSION_KNOWN: dict[str, str] = {}
ADD_PERSON_KNOWN: dict[str, str] = {}
TABLE_KNOWN: dict[str, str] = {}

#: A claim that a card (or a card route) needs or requires a session.
CARD_NEEDS_SESSION = re.compile(
    r"\bcards?\b(?: routes?)?(?: and (?:inbound )?events)?(?: calls?)? (?:needs?|requires?) "
    r"(?:an? )?(?:account |person |bound )?session",
    re.IGNORECASE,
)
#: A claim about the session that adds a person.
ADDS_PERSON = re.compile(
    r"\bpersons? (?:is|are) added under|\badding a person (?:needs|takes|requires)", re.IGNORECASE
)


def _title(notebook: Path) -> str:
    """A notebook's title: the first heading of its first Markdown cell that has one."""
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            heading = re.search(r"^#+ (.+)$", "".join(cell["source"]), re.MULTILINE)
            if heading:
                return heading.group(1).strip()
    raise AssertionError(f"{notebook.name} has no heading")


def _prose(notebook: Path) -> str:
    """What a reader reads in a notebook: its Markdown, and the comments of its code."""
    parts = []
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            parts.append(source)
        elif cell["cell_type"] == "code":
            parts += [line.split("#", 1)[1] for line in source.splitlines() if "#" in line]
    return "\n".join(parts)


def _sentences(text: str) -> list[str]:
    return re.split(r"(?<=[.;!?])\s+|\n\s*\n|\n- ", re.sub(r"[ \t]*\n[ \t]*(?![-\n])", " ", text))


def _home_table() -> list[tuple[str, str]]:
    home = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    section = home.split("\n## The notebooks\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| \[\d\d\]\(notebooks/(\d\d_\w+)\.ipynb\) \| (.+?) \|$", section, re.MULTILINE)


def _with_known(known: dict[str, str]) -> list[object]:
    return [
        pytest.param(nb, marks=pytest.mark.xfail(strict=True, reason=known[nb.stem]))
        if nb.stem in known
        else nb
        for nb in NOTEBOOKS
    ]


# --- the notebook list ----------------------------------------------------------------------------


def test_the_home_table_lists_every_notebook_with_its_title() -> None:
    assert len(NOTEBOOKS) >= 10
    assert _home_table() == [(nb.stem, _title(nb)) for nb in NOTEBOOKS]


def test_the_site_navigation_lists_the_same_notebooks() -> None:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    section = next(item["Notebooks"] for item in config["nav"] if "Notebooks" in item)
    listed = [next(iter(entry.values())) for entry in section]
    assert listed == [f"notebooks/{nb.name}" for nb in NOTEBOOKS]


@pytest.mark.parametrize("page", [p for p in PAGES if p.name != "index.md"], ids=lambda p: p.name)
def test_the_notebook_table_is_kept_once(page: Path) -> None:
    """Only the home page tabulates the notebooks; the others link to it."""
    text = page.read_text(encoding="utf-8")
    # a table of notebooks and what they show (a run's summary, notebook by status, is not one)
    headers = re.findall(r"^\| notebooks? \| (?!status)", text, re.MULTILINE)
    rows = headers + re.findall(r"^\| \[[^]]*\]\((?:\.\./)?notebooks/\d\d_", text, re.MULTILINE)
    assert not rows, f"{page.name} keeps its own notebook table: link to index.md#the-notebooks"
    if page.name == "README.md":
        assert "docs/index.md#the-notebooks" in text


@pytest.mark.parametrize("notebook", _with_known(TABLE_KNOWN), ids=lambda p: p.stem)
def test_no_notebook_keeps_its_own_notebook_table(notebook: Path) -> None:
    rows = re.findall(r"^\| \[[^]]*\]\(\d\d_\w+\.ipynb\)", _prose(notebook), re.MULTILINE)
    assert not rows, f"{notebook.name}: link to ../docs/index.md#the-notebooks instead"


# --- which session a card call needs -----------------------------------------------------------


def test_the_register_says_card_routes_need_only_the_partner_token() -> None:
    assert register.value("A63") == {"cards_and_events_require_session": False}
    assert "Card and inbound event routes need only the partner token" in register.assumption("A31")["choice"]
    home = " ".join((ROOT / "docs" / "index.md").read_text(encoding="utf-8").split())
    assert "Card and inbound-event routes need only the partner token" in home


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_page_says_a_card_needs_a_session(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    claims = [s for s in _sentences(text) if CARD_NEEDS_SESSION.search(s) and "dialect file" not in s]
    assert not claims, claims


@pytest.mark.parametrize("notebook", _with_known(CARD_SESSION_KNOWN), ids=lambda p: p.stem)
def test_no_notebook_says_a_card_needs_a_session(notebook: Path) -> None:
    claims = [s for s in _sentences(_prose(notebook)) if CARD_NEEDS_SESSION.search(s)]
    assert not claims, claims


# --- who may add a person --------------------------------------------------------------------------


def _only_the_account_session(text: str) -> list[str]:
    return [
        s for s in _sentences(text) if ADDS_PERSON.search(s) and not re.search(r"anonymous session|A42", s)
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_page_forgets_the_creating_devices_anonymous_session(page: Path) -> None:
    assert not _only_the_account_session(page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("notebook", _with_known(ADD_PERSON_KNOWN), ids=lambda p: p.stem)
def test_no_notebook_forgets_the_creating_devices_anonymous_session(notebook: Path) -> None:
    assert not _only_the_account_session(_prose(notebook))


def test_the_simulator_page_says_who_may_add_a_person() -> None:
    assert "A42" in register.assumption("A43")["choice"]
    page = (ROOT / "docs" / "simulator.md").read_text(encoding="utf-8")
    row = next(line for line in page.splitlines() if "/persons`" in line and "onboarding" in line)
    assert "anonymous session of the device that created the account" in row and "#a42" in row


# --- the getting-started page runs ---------------------------------------------------------------


def test_the_getting_started_code_runs_as_pasted(tmp_path: Path) -> None:
    page = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, re.DOTALL)
    assert len(blocks) >= 3
    done = subprocess.run(
        [sys.executable, "-c", "\n".join(blocks)], cwd=tmp_path, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "established" in done.stdout and "card-already-closed" in done.stdout
