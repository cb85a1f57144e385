"""The project's declared dependencies (pyproject.toml), what its code imports, and the
constraints file that pins what CI installs.

``python -m tests.support.deps > constraints.txt`` writes the constraints file from the
environment it runs in (``make constraints`` does, from ``.venv``): every distribution that
``partner-api-kit[all,test]`` needs there, directly or through another, at the version installed,
the project itself left out — what ``pip freeze`` lists of that closure. ``make`` installs with it
(``pip install -c constraints.txt -e '.[all,test]'``), so a fresh clone gets what CI tested.

    >>> declared()["sim"] >= {"fastapi", "uvicorn"}   # doctest: +SKIP
    True
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

from packaging.markers import UndefinedEnvironmentName
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "partner-api-kit"
#: The extras ``make`` installs into .venv (the Makefile's install rule).
INSTALLED_EXTRAS = ("all", "test")
CONSTRAINTS = ROOT / "constraints.txt"
HEADER = (
    "# What CI installs: every distribution partner-api-kit[all,test] needs, at the version CI tested.\n"
    "# make installs with it (pip install -c constraints.txt -e '.[all,test]'); after a change of\n"
    "# dependencies, `make constraints` writes it again from .venv (python -m tests.support.deps).\n"
)


def requirements() -> dict[str, list[Requirement]]:
    """The project's requirements: ``""`` for the dependencies, then one entry per extra."""
    table = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    groups = {"": table["dependencies"], **table["optional-dependencies"]}
    return {name: [Requirement(text) for text in texts] for name, texts in groups.items()}


def _expanded(extra: str, groups: dict[str, list[Requirement]]) -> list[Requirement]:
    """The requirements of ``extra``, the project's own extras it names replaced by theirs."""
    out: list[Requirement] = []
    for req in groups[extra]:
        if canonicalize_name(req.name) == PROJECT:
            for inner in sorted(req.extras):
                out += _expanded(inner, groups)
        else:
            out.append(req)
    return out


def declared() -> dict[str, set[str]]:
    """Each extra (``""``: the dependencies) → the distributions it declares, canonical names,
    whatever their markers (a marker says on which platform, not whether)."""
    groups = requirements()
    return {extra: {canonicalize_name(r.name) for r in _expanded(extra, groups)} for extra in groups}


def third_party_imports(path: Path) -> Iterator[tuple[str, int]]:
    """Every absolute import of ``path`` (module level, in functions, under ``TYPE_CHECKING``)
    naming neither the standard library nor this repository: (top-level module, line)."""
    ours = {"kit", "tests", "benchmarks", "docs"}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            top = name.partition(".")[0]
            if top not in sys.stdlib_module_names and top not in ours:
                yield top, node.lineno


def _dist(name: str) -> metadata.Distribution | None:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def _applies(req: Requirement, extras: set[str]) -> bool:
    if req.marker is None:
        return True
    try:
        return any(req.marker.evaluate({"extra": extra}) for extra in extras or {""})
    except UndefinedEnvironmentName:
        return False


def closure(extras: tuple[str, ...] = INSTALLED_EXTRAS) -> dict[str, metadata.Distribution]:
    """The distributions installed here that the project with ``extras`` needs, directly or
    through another (markers evaluated for this interpreter), by canonical name; a requirement
    not installed here (another platform's, or an extra not installed) is left out."""
    groups = requirements()
    todo = [(r, set(r.extras)) for extra in ("", *extras) for r in _expanded(extra, groups)]
    todo = [(r, x) for r, x in todo if r.marker is None or r.marker.evaluate({"extra": ""})]
    found: dict[str, metadata.Distribution] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        req, wanted = todo.pop()
        name = canonicalize_name(req.name)
        if (name, frozenset(wanted)) in seen:
            continue
        seen.add((name, frozenset(wanted)))
        dist = _dist(req.name)
        if dist is None:
            continue
        found[name] = dist
        for text in dist.requires or []:
            inner = Requirement(text)
            if _applies(inner, wanted):
                todo.append((inner, set(inner.extras)))
    return found


def constraints_text() -> str:
    """The constraints file for this environment: ``Name==version``, one a line, by name."""
    pins = sorted(closure().items())
    return HEADER + "".join(f"{d.metadata['Name']}=={d.version}\n" for _, d in pins)


def pinned() -> dict[str, str]:
    """constraints.txt: canonical name → version."""
    out = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            out[canonicalize_name(name)] = version.strip()
    return out


if __name__ == "__main__":
    sys.stdout.write(constraints_text())
