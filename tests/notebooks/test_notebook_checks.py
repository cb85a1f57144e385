"""The flow notebooks' checks check the API, not the simulator (issue 31, items 1-6).

Read from the stored notebooks 00-11 (no kernel): every check names its basis, a seed statement
or a register entry, and each entry a check rests on is cited in the notebook's prose; no bare
``assert`` is left (a failure says what was expected and what came); no check spells out the
simulator's id prefixes; and three fixture personas are enough.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from kit import register
from kit.notebook.basis import statement_ids

ROOT = Path(__file__).resolve().parents[2]
FLOWS = sorted(p for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb") if int(p.name[:2]) <= 11)
TEMPLATE = ROOT / "notebooks" / "_template.ipynb"
#: Personas a sandbox publishes by default (``kit serve --sandbox-fixtures``): the flows need no more.
FIXTURE_PERSONAS = 3


def _code(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def _prose(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def _trees(path: Path) -> list[ast.Module]:
    return [ast.parse(source) for source in _code(path)]


def _checks(path: Path) -> list[ast.Call]:
    """Every ``check(…)`` call (``with check(…)``, ``@check(…)``) of the notebook's code."""
    return [
        node
        for tree in _trees(path)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "check"
    ]


def _basis(call: ast.Call) -> dict[str, str]:
    return {
        k.arg: k.value.value
        for k in call.keywords
        if k.arg in ("spec", "choice")
        and isinstance(k.value, ast.Constant)
        and isinstance(k.value.value, str)
    }


def test_the_flow_notebooks_are_00_to_11() -> None:
    assert [p.name[:2] for p in FLOWS] == [f"{n:02d}" for n in range(12)]


@pytest.mark.parametrize("path", [*FLOWS, TEMPLATE], ids=lambda p: p.stem)
def test_every_check_names_one_known_basis(path: Path) -> None:
    calls = _checks(path)
    assert calls, f"{path.name}: no named check"
    entries = {a["id"] for a in register.assumptions()}
    for call in calls:
        basis = _basis(call)
        name = ast.unparse(call.args[0]) if call.args else "?"
        assert len(basis) == 1, (
            f"{path.name}: check {name} names {basis or 'no basis'}: one of spec= or choice="
        )
        ((kind, ident),) = basis.items()
        known = statement_ids() if kind == "spec" else entries
        assert ident in known, (
            f"{path.name}: check {name}: {kind}={ident!r} is not a seed statement or register entry"
        )


@pytest.mark.parametrize("path", FLOWS, ids=lambda p: p.stem)
def test_every_entry_a_check_rests_on_is_cited_in_the_prose(path: Path) -> None:
    chosen = {b["choice"] for b in map(_basis, _checks(path)) if "choice" in b}
    cited = set(re.findall(r"\bA\d\d\b", _prose(path)))
    assert not chosen - cited, (
        f"{path.name}: choice checks on {sorted(chosen - cited)}, not cited in its markdown"
    )


@pytest.mark.parametrize("path", [*FLOWS, TEMPLATE], ids=lambda p: p.stem)
def test_no_bare_assert_is_left(path: Path) -> None:
    """A bare ``assert`` fails with no word of what was expected: checks compare with
    ``expect`` / ``expect_in`` / ``expect_true``, which say what was expected and what came."""
    bare = [ast.unparse(n)[:80] for tree in _trees(path) for n in ast.walk(tree) if isinstance(n, ast.Assert)]
    assert not bare, f"{path.name}: {bare}"


@pytest.mark.parametrize("path", FLOWS, ids=lambda p: p.stem)
def test_no_check_spells_out_the_simulators_id_prefixes(path: Path) -> None:
    """Id formats are the simulator's choice (A41): compared with ``chosen("A41", "id_prefixes")``."""
    prefixes = [*sorted(register.value("A41")["id_prefixes"].values()), "flt_"]
    literal = re.compile(r"""["']({})["']""".format("|".join(map(re.escape, prefixes))))
    found = [m.group(0) for source in _code(path) for m in literal.finditer(source)]
    assert not found, f"{path.name} spells out {found}"


@pytest.mark.parametrize("path", FLOWS, ids=lambda p: p.stem)
def test_three_fixture_personas_are_enough(path: Path) -> None:
    """A sandbox may publish only three test customers: no flow names a fourth."""
    text = "\n".join(_code(path))
    named = [int(n) for n in re.findall(r"persona-(\d+)", text)]
    assert all(n <= FIXTURE_PERSONAS for n in named), f"{path.name} uses persona-{max(named)}"
    by_index = [
        node.args[1].value
        for tree in _trees(path)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "persona"
        and len(node.args) > 1
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, int)
    ]
    assert all(i < FIXTURE_PERSONAS for i in by_index), f"{path.name} uses persona index {max(by_index)}"


def test_kit_serve_publishes_as_many_personas_as_the_flows_need() -> None:
    from kit.cli import FIXTURE_PERSONAS as written

    assert written == FIXTURE_PERSONAS
