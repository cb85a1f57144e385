"""The README and the documentation site's pages: what a newcomer reads first, checked.

The README's first screen (its first 60 lines) says what the kit is, the three things a reader
keeps apart (the spec, the simulator's choices, your sandbox), where to start (``make lab``, then
``00_quickstart``), the short example and where to go next; the whole README stays short (the
rest is on the site). Every command in it and in the site's guides exists: its code blocks run
(Python) or parse (``make`` targets of the Makefile, ``kit`` commands through the CLI's own
parser), and every relative link reaches a file of the repository.
"""

from __future__ import annotations

import doctest
import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from kit import cli

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: The guides of the site that show commands (the generated contract shows none).
GUIDES = sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "contract.md")
FIRST_SCREEN = 60
MAX_LINES = 250

_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.DOTALL)


def _commands(block: str, program: str) -> list[str]:
    """Every ``program …`` command line of a shell block (continuations joined, comments cut)."""
    joined = block.replace("\\\n", " ")
    lines = [line.split(" #", 1)[0].strip() for line in joined.splitlines()]
    return [line for line in lines if re.match(rf"(\S*/)?{program}(\s|$)", line)]


def _makefile_targets() -> set[str]:
    return set(re.findall(r"^([A-Za-z][\w-]*):", _text(ROOT / "Makefile"), re.MULTILINE))


def test_the_readme_stays_short() -> None:
    assert len(_text(README).splitlines()) <= MAX_LINES


def test_the_first_screen_holds_what_a_newcomer_needs_first() -> None:
    first = "\n".join(_text(README).splitlines()[:FIRST_SCREEN])
    # what the kit is
    assert "client" in first and "simulator" in first and "notebooks" in first
    # the three things kept apart, each with where it lives
    three = [line for line in first.splitlines() if line.startswith("- **")]
    assert len(three) == 3, three
    spec, choices, sandbox = three
    assert "the spec" in spec and "data/seed.txt" in spec and "rule.3" in spec
    assert "not shown" in choices and "A01" in choices and "docs/contract.md" in choices
    assert "sandbox" in sandbox and "otherwise" in sandbox
    # where to start, the short example, where to go next for three kinds of reader
    assert "make lab" in first and "00_quickstart" in first
    assert "```python\nimport kit\n" in first
    rows = [line for line in first.splitlines() if line.startswith("| ") and "](docs/" in line]
    assert len(rows) >= 3, "a row per kind of reader, each with its pages"


@pytest.mark.parametrize("page", [README, ROOT / "docs" / "index.md"], ids=lambda p: p.name)
def test_the_first_screen_says_what_the_api_does_and_the_order_of_calls(page: Path) -> None:
    """The API before the kit: what the service does, the order a partner calls it in, who starts
    where; the README's first screen keeps the two-command quickstart and not the seed's aside."""
    first = " ".join(_text(page).splitlines()[:FIRST_SCREEN]).lower()
    for what in ("accounts", "cards", "persons", "kyc", "p2p transfers", "webhooks", "inbound events"):
        assert what in first, what
    at = first.index("in this order")
    for step in ["partner token", "session initialization data", "anonymous", "promotion", "person"]:
        at = first.index(step, at)  # each step after the one before it (ValueError: missing)
    assert "analyst" in first and "back-end engineer" in first
    if page == README:
        assert "make run" in first and "make test" in first
        assert "seed = 7" not in first and "docs/contributing.md" in _text(page)
        assert "make slow" not in _text(page) and "make bench" not in _text(page)


def test_the_client_in_five_lines_has_five() -> None:
    text = _text(README)
    heading = re.search(r"\*\*The client in (\w+) lines\*\*", text)
    assert heading is not None and heading.group(1) == "five"
    block = _blocks(text[heading.end() :], "python")[0]
    assert len(block.strip().splitlines()) == 5, block


@pytest.mark.parametrize("number", range(len(_blocks(_text(README), "python"))))
def test_every_python_block_of_the_readme_runs(number: int, tmp_path: Path) -> None:
    code = _blocks(_text(README), "python")[number]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("page", [README, *GUIDES], ids=lambda p: p.name)
def test_every_make_target_named_exists(page: Path) -> None:
    targets = _makefile_targets()
    named = set(re.findall(r"`make (\w[\w-]*)", _text(page)))
    for block in _blocks(_text(page), "sh"):
        named |= {shlex.split(c)[1] for c in _commands(block, "make") if len(shlex.split(c)) > 1}
    assert named - targets == set(), f"{page.name} names make targets the Makefile lacks"


@pytest.mark.parametrize("page", [README, *GUIDES], ids=lambda p: p.name)
def test_every_kit_command_shown_parses(page: Path) -> None:
    parser = cli.build_parser()
    commands = [c for block in _blocks(_text(page), "sh") for c in _commands(block, "kit")]
    for command in commands:
        argv = shlex.split(command)
        parsed = parser.parse_args(argv[1:])  # an unknown command or option: SystemExit
        assert (parsed.command, callable(parsed.func)) == (argv[1], True), command


@pytest.mark.parametrize("page", [README, *GUIDES], ids=lambda p: p.name)
def test_every_file_a_command_reads_exists(page: Path) -> None:
    """A file a shown command reads (a matrix, a choice overlay) is in the repository, or shown
    on the same page (a block headed ``# NAME``), or written by a command there (``--write-choices``)."""
    text = _text(page)
    for block in _blocks(text, "sh"):
        for command in _commands(block, "kit"):
            argv = shlex.split(command)
            for option in ("--matrix", "--choices"):
                if option in argv:
                    name = argv[argv.index(option) + 1]
                    known = f"# {name}" in text or f"--write-choices {name}" in text
                    assert (ROOT / name).is_file() or known, f"{page.name}: {command}"


def test_every_relative_link_of_the_readme_reaches_a_file() -> None:
    broken = []
    for target in _LINK.findall(_text(README)):
        if "://" in target or target.startswith("#"):
            continue
        path, _, anchor = target.partition("#")
        if not (ROOT / path).exists():
            broken.append(target)
        elif anchor and path.endswith(".md"):
            headings = re.findall(r"^#+ (.+)$", _text(ROOT / path), re.MULTILINE)
            slugs = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}
            slugs |= set(re.findall(r'<a id="([^"]+)"></a>', _text(ROOT / path)))  # explicit anchors
            if anchor not in slugs:
                broken.append(target)
    assert not broken, broken


def test_the_sandbox_guide_goes_in_the_order_a_newcomer_needs() -> None:
    """Credentials, then personas, then a first run (which says to run once without a dialect
    file), then the dialect file, then the conformance report: from nothing to a nightly run."""
    headings = re.findall(r"^## (.+)$", _text(ROOT / "docs" / "sandbox.md"), re.MULTILINE)
    order = [
        "Credentials",
        "Test personas",
        "Your first run",
        "Write your dialect file",
        "What your sandbox chose",
    ]
    found = [next(i for i, h in enumerate(headings) if h.startswith(step)) for step in order]
    assert found == sorted(found) and found[0] == 0, headings


def test_the_sandbox_guide_writes_the_dialect_file_from_the_template(tmp_path: Path) -> None:
    text = _text(ROOT / "docs" / "sandbox.md")
    first = next(s for s in text.split("\n## ")[1:] if s.startswith("Write your dialect file"))
    assert "kit choices template > my-sandbox.toml" in first and "kit choices check my-sandbox.toml" in first
    # the starting point the guide shows is a file kit choices check accepts, as printed
    choices = [sys.executable, "-m", "kit", "choices"]
    printed = subprocess.run([*choices, "template"], capture_output=True, text=True)
    start = tmp_path / "my-sandbox.toml"
    start.write_text(printed.stdout, encoding="utf-8")
    checked = subprocess.run([*choices, "check", str(start)], capture_output=True)
    assert printed.returncode == checked.returncode == 0, checked.stderr
    # and its example, uncommented, is one too
    example = first.split("```toml\n", 1)[1].split("```", 1)[0]
    start.write_text(example, encoding="utf-8")
    checked = subprocess.run([*choices, "check", str(start)], capture_output=True)
    assert checked.returncode == 0, checked.stderr


def test_the_site_hook_rewrites_notebook_links_for_the_site() -> None:
    spec = importlib.util.spec_from_file_location("site_hook", ROOT / "docs" / "hooks" / "site.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    failed, tried = doctest.testmod(module)
    assert tried >= 4 and failed == 0
