"""The project's declared dependencies (pyproject.toml) and what its code imports.

    >>> declared()["sim"] >= {"fastapi", "uvicorn"}   # doctest: +SKIP
    True
"""

from __future__ import annotations

import ast
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "partner-api-kit"


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
