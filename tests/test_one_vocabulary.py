"""One vocabulary: no path of the wire is spelled outside the table of operations
(``kit/_operations.py``), which derives each from the spec and the register (issue 60, item 1).

Every string constant of ``kit/**/*.py`` is read with :mod:`ast` (docstrings aside, and the
control plane's own paths, under ``/_sim``) and none may hold one of the table's path
templates as a word: a path elsewhere would not follow the spec's rows, the register or a
dialect that moves an operation."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from kit._operations import OPERATIONS
from tests.support.source import constants

KIT = Path(__file__).resolve().parents[1] / "kit"
HOME = KIT / "_operations.py"
#: A template as a word of a constant: not inside a longer path (``/v2/accounts``, ``/_sim/…``).
TEMPLATES = re.compile(
    r"(?<![\w/{}])(?:"
    + "|".join(re.escape(p) for p in sorted({op.path for op in OPERATIONS}, key=len, reverse=True))
    + r")(?![\w/{}])"
)


def _control_plane_paths(tree: ast.Module) -> set[int]:
    """The ids of the paths a ``/_sim`` router declares (``router.get("/faults")``): they are
    the control plane's, under its prefix, not the partner API's."""
    prefixed = any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "APIRouter"
        and any(
            k.arg == "prefix" and isinstance(k.value, ast.Constant) and str(k.value.value).startswith("/_sim")
            for k in node.keywords
        )
        for node in ast.walk(tree)
    )
    if not prefixed:
        return set()
    return {
        id(node.args[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "router"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }


def spelled(root: Path) -> Iterator[str]:
    """``module:line: constant`` for each constant under ``root`` holding a path of the wire."""
    for path in sorted(root.rglob("*.py")):
        if path.name == HOME.name and path.parent.name == "kit":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, text in constants(tree, skip=_control_plane_paths(tree)):
            if TEMPLATES.search(text):
                yield f"{path.relative_to(root.parent)}:{line}: {text[:80]!r}"


def test_no_path_of_the_wire_is_spelled_outside_the_table() -> None:
    found = list(spelled(KIT))
    assert not found, "read the path from kit._operations (request_line, BY_KEY):\n" + "\n".join(found)


def test_the_scan_finds_a_path_as_a_word_and_leaves_longer_paths_alone(tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    kit.mkdir()
    (kit / "a.py").write_text(
        '"""A docstring may say POST /sessions."""\n'
        'router = APIRouter(prefix="/_sim")\n'
        'router.get("/accounts")\n'
        'MOVED = "/v2/accounts"\n'
        'HINT = "fetch GET /webhooks/jwks again"\n'
        'PATH = "/cards/{card_id}/close"\n'
    )
    found = list(spelled(kit))
    assert [line.split(":")[1] for line in found] == ["5", "6"], found
