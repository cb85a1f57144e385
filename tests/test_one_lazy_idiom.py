"""One lazy idiom: only ``kit/_lazy.py`` defines a module ``__getattr__`` or changes
``sys.modules``; every other lazy module binds the helper's, every import trick goes through it."""

from __future__ import annotations

import ast
import pickle
import sys
import types
from pathlib import Path

import pytest

from kit import _lazy

KIT = Path(__file__).resolve().parents[1] / "kit"

#: Modules whose tricks the simulator's own change removes. The lead removes this list when that
#: branch (w9-sim) merges; the test then checks all of kit/ with no exception.
CHANGES = {"pop", "update", "setdefault", "clear", "popitem"}


def _is_sys_modules(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "modules"
        and (getattr(node.value, "id", "") == "sys")
    )


def _offences(tree: ast.Module) -> list[str]:
    found = []
    for node in tree.body:  # a module-level __getattr__ (PEP 562), defined by the module itself
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            found.append(f"line {node.lineno}: def __getattr__")
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in targets:
            if isinstance(target, ast.Subscript) and _is_sys_modules(target.value):
                found.append(f"line {node.lineno}: sys.modules[...] changed")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if _is_sys_modules(owner) and node.func.attr in CHANGES:
                found.append(f"line {node.lineno}: sys.modules.{node.func.attr}()")
    return found


def test_no_module_but_lazy_defines_getattr_or_changes_sys_modules() -> None:
    offences = {}
    for path in sorted(KIT.rglob("*.py")):
        rel = path.relative_to(KIT.parent).as_posix()
        if rel == "kit/_lazy.py":
            continue
        found = _offences(ast.parse(path.read_text(encoding="utf-8")))
        if found:
            offences[rel] = found
    assert offences == {}


def test_the_scan_sees_each_kind_of_trick() -> None:
    source = (
        "import sys\n"
        "def __getattr__(name): ...\n"
        "sys.modules['a'] = None\n"
        "del sys.modules['a']\n"
        "sys.modules.pop('b', None)\n"
    )
    assert len(_offences(ast.parse(source))) == 4


def test_imported_past_hides_a_module_for_the_block_only() -> None:
    name = "kit_test_not_imported_yet"
    sys.modules.pop(name, None)
    with _lazy.imported_past(name), pytest.raises(ImportError):
        __import__(name)
    assert name not in sys.modules  # a later import works as usual


def test_imported_past_leaves_an_imported_module_alone() -> None:
    with _lazy.imported_past("json"):
        import json
    assert json is sys.modules["json"]


def test_a_stand_in_takes_a_modules_place_and_the_module_comes_back() -> None:
    before = sys.modules["__main__"]
    blank = types.ModuleType("__main__")
    with _lazy.imported_past("__main__", stand_in=blank):
        assert sys.modules["__main__"] is blank
    assert sys.modules["__main__"] is before


def test_resolved_names_map_to_their_modules_and_nothing_else_resolves() -> None:
    namespace: dict[str, object] = {"__name__": "pkg", "__doc__": None, "helper": 1}
    getattr_, dir_ = _lazy.resolved_from(
        {"dumps": "json", "json": "json"}, ["dumps", "json"], namespace, listed=["dumps", "json"]
    )
    import json

    assert getattr_("dumps") is json.dumps and getattr_("json") is json
    assert namespace["dumps"] is json.dumps  # kept: not asked again
    with pytest.raises(AttributeError, match="'pkg' has no attribute 'loads'"):
        getattr_("loads")
    assert dir_() == ["__doc__", "__name__", "dumps", "json"]  # not "helper"


def test_kit_resolves_through_the_helper() -> None:
    import kit

    assert kit.__getattr__.__module__ == "kit._lazy"
    assert kit.Sensitive is sys.modules["kit._sensitive"].Sensitive


def test_a_result_resolved_on_first_use_pickles_without_a_rewritten_module() -> None:
    import kit.models

    card = kit.models.Card.from_wire({"card_id": "c1", "status": "active"})
    assert pickle.loads(pickle.dumps(card)) == card
    assert type(card).__module__ == "kit._results"


def _stand_in_calls() -> set[tuple[str, str]]:
    """Each ``imported_past(…)`` call in ``kit/`` as (the module it names, its file)."""
    calls = set()
    for path in sorted(KIT.rglob("*.py")):
        rel = path.relative_to(KIT.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name == "imported_past":
                first = node.args[0] if node.args else None
                assert isinstance(first, ast.Constant) and isinstance(first.value, str), (
                    f"{rel}:{node.lineno}: name the module as a literal"
                )
                calls.add((first.value, rel))
    return calls


def _stand_ins_listed() -> set[tuple[str, str]]:
    """The rows of ARCHITECTURE.md's "Import stand-ins" table as (module, file)."""
    text = (KIT.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("\n## Import stand-ins\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:3] for line in section.splitlines() if line.startswith("| `")]
    return {(module.strip().strip("`"), where.strip().strip("`")) for module, where in rows}


def test_architecture_lists_each_stand_in_that_stays_and_no_other() -> None:
    assert _stand_in_calls() == _stand_ins_listed()
