"""The rooms of ``kit/`` (ARCHITECTURE.md): who may import whom, no circles, modules of one job.

The import graph is read from the source with :mod:`ast` — every ``import`` and ``from …
import`` of a ``kit`` module counts, inside functions and under ``TYPE_CHECKING`` too, so a
type-only import cannot hide a circle.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KIT = ROOT / "kit"

#: The rooms, in the order of the layers (a room may import the rooms before it, see ROOM_MAY_IMPORT).
BASE = {
    "kit._env",
    "kit._cache",
    "kit._files",
    "kit._lazy",
    "kit.register",
    "kit._choices",
    "kit._codes",
    "kit._headers",
    "kit._operations",
    "kit._dialect",
    "kit._dialect_rules",
    "kit._pii",
    "kit._tomltext",
    "kit._jose",
    "kit._http",
    "kit._plural",
}
ENTRY = {
    "kit.cli",
    "kit.__main__",
    "kit._choicetool",
    "kit._infer",
    "kit._infer_har",
    "kit._infer_openapi",
    "kit._clihelp",
    "kit._serveopts",
    "kit._health",
    "kit._proxy",
    "kit._proxylog",
}
#: The lab's two rooms (never importing each other) and their public names, ordinary modules.
LAB_ROOMS = {"populations": "kit.lab.populations", "explorer": "kit.lab.explorer"}
PUBLIC_NAMES = {"kit.simulate": "kit.lab.populations.simulate", "kit.widgets": "kit.lab.explorer.widgets"}
#: The one place the client reaches the simulator: starting the embedded server for ``sim``.
EMBEDDED_BRIDGE = ("kit._embedded", "kit.sim.server")

ROOM_MAY_IMPORT = {
    "base": {"base"},
    "core": {"base", "core"},
    "notebook": {"base", "core", "notebook"},
    "sim": {"base", "sim"},
    "lab": {"base", "core", "notebook", "sim", "lab"},  # what both lab rooms use: journeys, display, walk
    "populations": {"base", "core", "notebook", "sim", "lab", "populations"},
    "explorer": {"base", "core", "notebook", "sim", "lab", "explorer"},
    "regress": {"base", "core", "notebook", "regress"},
    "entry": {"base", "core", "notebook", "sim", "lab", "populations", "explorer", "regress", "entry"},
}
#: Modules allowed past the size bound, each a declarative catalogue: the error classes, one per
#: problem code, each with its docstring (``kit.errors``).
SIZE_EXEMPT = ("kit.errors",)
MAX_LINES = 600


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(KIT.rglob("*.py"))}


def room(name: str) -> str:
    if name in BASE:
        return "base"
    if name in ENTRY:
        return "entry"
    for lab_room, package in LAB_ROOMS.items():
        if (
            name == package
            or name.startswith(f"{package}.")
            or PUBLIC_NAMES.get(name, "").startswith(package)
        ):
            return lab_room
    for wing in ("notebook", "sim", "lab", "regress"):
        if name == f"kit.{wing}" or name.startswith(f"kit.{wing}."):
            return wing
    return "core"


def _resolve(known: dict[str, Path], name: str) -> str | None:
    """The kit module ``name`` refers to (a name imported from a package may be a module)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [f"{base}.{alias.name}" for alias in node.names] or [base]
        for target in targets:
            if target == "kit" or target.startswith("kit."):
                resolved = _resolve(known, target)
                if resolved is not None and resolved != name:
                    yield resolved


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: set(imports_of(name, path, known)) for name, path in known.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle (as a path that returns to its start), or ``None``."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_the_cycle_finder_finds_a_planted_circle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_import_graph_reads_type_only_and_relative_imports(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from kit._client import Client\n"
        "def f():\n    import kit.sim.server\n"
    )
    path = KIT / "resources" / "cards.py"
    known = {"kit._client": path, "kit.sim.server": path, "kit._resources.cards": path}
    fake = tmp_path / "cards.py"
    fake.write_text(source)
    assert set(imports_of("kit._resources.cards", fake, known)) == {"kit._client", "kit.sim.server"}


def test_no_import_circle_in_kit() -> None:
    cycle = find_cycle(graph())
    assert cycle is None, "import circle: " + " → ".join(cycle or [])


def test_every_room_imports_only_the_rooms_below_it() -> None:
    wrong = []
    for name, targets in graph().items():
        for target in targets:
            if (name, target) == EMBEDDED_BRIDGE:
                continue
            if room(target) not in ROOM_MAY_IMPORT[room(name)]:
                wrong.append(f"{name} ({room(name)}) imports {target} ({room(target)})")
    assert not wrong, "\n".join(sorted(wrong))


def test_the_core_never_imports_a_wing_even_through_others() -> None:
    edges = graph()
    core = [n for n in edges if room(n) == "core"]
    reached: set[str] = set()
    todo = list(core)
    while todo:
        name = todo.pop()
        for target in edges.get(name, ()):
            if (name, target) != EMBEDDED_BRIDGE and target not in reached:
                reached.add(target)
                todo.append(target)
    wings = {"notebook", "lab", "populations", "explorer", "regress", "entry"}
    assert not {n for n in reached if room(n) in wings}


def test_the_lab_rooms_never_import_each_other_even_through_others() -> None:
    edges = graph()
    for here, there in (("populations", "explorer"), ("explorer", "populations")):
        reached: set[str] = set()
        todo = [n for n in edges if room(n) == here]
        while todo:
            for target in edges.get(todo.pop(), ()):
                if target not in reached:
                    reached.add(target)
                    todo.append(target)
        assert not {n for n in reached if room(n) == there}, f"{here} reaches {there}"
    assert room("kit.simulate") == "populations" and room("kit.lab.explorer.flow") == "explorer"
    assert room("kit.lab.journeys") == "lab"


@pytest.mark.parametrize("public", sorted(PUBLIC_NAMES))
def test_public_names_are_ordinary_modules_re_exporting_their_room(public: str) -> None:
    """``kit.simulate`` and ``kit.widgets`` are modules of their own (no ``sys.modules`` alias),
    with an explicit ``__all__``, each name the room module's own object."""
    code = (
        f"import importlib, {public}, {PUBLIC_NAMES[public]} as room; "
        f"module = importlib.import_module({public!r}); "
        f"assert module is not room and module.__name__ == {public!r}, module; "
        "assert module.__all__ == room.__all__, (module.__all__, room.__all__); "
        "assert all(getattr(module, n) is getattr(room, n) for n in module.__all__)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_modules_have_one_job_and_stay_short() -> None:
    long = {
        name: n
        for name, path in modules().items()
        if not name.startswith(SIZE_EXEMPT)
        and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


@pytest.mark.parametrize("entry", ["kit.sim", "kit.sim.app", "kit._env", "kit.register"])
def test_importing_the_simulator_does_not_load_the_client(entry: str) -> None:
    """A team's ``kit serve`` and the crypto workers carry no client code."""
    code = (
        f"import sys, {entry}; "
        "loaded = sorted(m for m in sys.modules if m.startswith('kit.') and "
        f"not m.startswith('kit.sim') and m not in {tuple(sorted(BASE))!r}); "
        "print(','.join(loaded))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == ""


def test_the_client_still_reads_as_one_package() -> None:
    code = (
        "import kit; api_names = ['connect', 'Client', 'errors', 'webhooks', 'Sensitive', 'Money', "
        "'ApiError', 'KitError']; missing = [n for n in api_names if not hasattr(kit, n)]; "
        "assert not missing, missing; assert set(api_names) <= set(dir(kit)); "
        "assert kit.errors.by_code and callable(kit.webhooks.verify)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_every_module_architecture_names_exists() -> None:
    """ARCHITECTURE.md stays true of the tree: each ``kit/….py`` it names (its drawing too) is
    a file; a module renamed or split without the text following fails here."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = set(re.findall(r"\bkit/[\w/]+\.py\b", text))
    assert len(named) > 40  # the rooms, the simulator's pieces, the drawing
    assert sorted(p for p in named if not (ROOT / p).is_file()) == []
