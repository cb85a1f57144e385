"""A notebook is a story with its checks after it (issue 61; the tags: ``kit/notebook/tags.py``).

Read from each notebook's cell sources with ``ast``:

- checks (``with check(…)``, ``@check(…)``) only in cells tagged ``checks``, and each such cell
  opens collapsed in JupyterLab (``metadata.jupyter.source_hidden``, its outputs shown);
- a check reads what the story computed: no client call inside it (``api.<resource>.<verb>(…)``,
  ``kit.connect``);
- a story cell (not tagged ``checks``) calls no test helper, register lookup or dialect
  function (``chosen(``, ``refused(``, ``problem_code(``, ``register.value(``, ``…dialect…``);
- the checks of a ``needs-…`` cell can be found in its source (names as string literals), so
  that ``kit regress`` can report them skipped;
- no ``if`` on the control plane or the receiver anywhere (``if control:``, ``if receiver:``,
  ``if hook:``, ``….control_plane``): such code is a cell tagged ``needs-control`` or
  ``needs-receiver``, which ``kit regress`` skips where it cannot run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from kit.notebook.tags import CHECKS, checks_in, section_of

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
TEMPLATE = ROOT / "notebooks" / "_template.ipynb"

#: Test helpers and register lookups a story cell does not call (by the called name).
HELPERS = {"chosen", "refused", "problem_code", "id_format", "expect", "expect_in", "expect_true", "skip"}
#: Names an ``if`` may not test: the old guards on the control plane and the receiver.
GUARDS = {"control", "receiver", "hook"}


def _code(source: str) -> ast.Module:
    """A cell's source parsed, IPython magics and shell lines left out."""
    lines = source.splitlines()
    return ast.parse("\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in lines))


def _chain(node: ast.AST) -> list[str]:
    """``api.cards.close`` → ``["api", "cards", "close"]`` (empty when not a dotted name)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else []


def _is_check(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (_chain(node.func)[-1:] == ["check"])


def _check_bodies(tree: ast.Module) -> Iterator[tuple[int, list[ast.stmt]]]:
    for node in ast.walk(tree):
        opened = isinstance(node, ast.With) and any(_is_check(i.context_expr) for i in node.items)
        decorated = isinstance(node, ast.FunctionDef) and any(map(_is_check, node.decorator_list))
        if opened or decorated:
            yield node.lineno, node.body  # type: ignore[attr-defined]


def _client_call(call: ast.Call) -> bool:
    chain = _chain(call.func)
    return (chain[:1] == ["api"] and len(chain) >= 3) or chain[-1:] == ["connect"]


def violations(path: Path) -> list[str]:
    """What in the notebook at ``path`` breaks the rules (see the module docstring)."""
    found: list[str] = []
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type != "code":
            continue
        where = f"{path.stem} [{index}]"
        tagged = CHECKS in cell.metadata.get("tags", [])
        tree = _code(cell.source)
        try:  # a section kit regress may skip: its checks must be found, to be reported skipped
            if section_of(cell.metadata.get("tags", [])):
                checks_in(cell.source)
        except ValueError as exc:
            found.append(f"{where}: {exc}")
        if tagged and cell.metadata.get("jupyter") != {"source_hidden": True, "outputs_hidden": False}:
            found.append(f"{where}: a checks cell opens collapsed (metadata.jupyter.source_hidden)")
        for line, body in _check_bodies(tree):
            if not tagged:
                found.append(f"{where} line {line}: a check outside the cells tagged {CHECKS!r}")
            calls = [n for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Call)]
            for call in filter(_client_call, calls):
                found.append(
                    f"{where} line {call.lineno}: a client call inside a check: {ast.unparse(call.func)}"
                )
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and not tagged:
                chain = _chain(node.func)
                if (
                    (chain[-1:] and chain[-1] in HELPERS)
                    or "register" in chain[:-1]
                    or any("dialect" in p for p in chain)
                ):
                    found.append(f"{where} line {node.lineno}: {ast.unparse(node.func)}( in a story cell")
            if isinstance(node, ast.If | ast.IfExp | ast.While):
                tested = [n for n in ast.walk(node.test) if isinstance(n, ast.Name | ast.Attribute)]
                if any(
                    getattr(n, "id", None) in GUARDS or getattr(n, "attr", None) == "control_plane"
                    for n in tested
                ):
                    found.append(
                        f"{where} line {node.lineno}: an if on {ast.unparse(node.test)}: tag a section"
                    )
    return found


def _stem(path: Path) -> str:
    return path.stem


@pytest.mark.parametrize("path", [*NOTEBOOKS, TEMPLATE], ids=_stem)
def test_every_notebook_is_a_story_with_its_checks_after_it(path: Path) -> None:
    assert violations(path) == []
    cells: list[Any] = nbformat.read(path, as_version=4).cells
    assert any(CHECKS in c.metadata.get("tags", []) for c in cells), "no cell tagged checks"


def test_the_rules_catch_each_kind_of_violation(tmp_path: Path) -> None:
    cell = nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        cell('with check("a", spec="x") as c:\n    c.expect(1, 1, what="one")'),
        cell("if control:\n    api.sim.advance(60)"),
        cell("x = chosen('A15', 'reasons')\ny = api.config.dialect.name_to_wire('a')"),
        cell('@check("b")\ndef _():\n    api.cards.close("c")', metadata={"tags": [CHECKS]}),
        cell("with check(name) as c:\n    pass", metadata={"tags": ["needs-control"]}),
    ]
    path = tmp_path / "99_bad.ipynb"
    nbformat.write(nb, path)
    found = "\n".join(violations(path))
    for what in (
        "[0] line 1: a check outside",
        "[1] line 1: an if on control",
        "[2] line 1: chosen( in a story cell",
        "[2] line 2: api.config.dialect.name_to_wire( in a story cell",
        "[3]: a checks cell opens collapsed",
        "[3] line 3: a client call inside a check: api.cards.close",
        "[4]: line 1: a check's name must be a string literal",
    ):
        assert what in found, found
