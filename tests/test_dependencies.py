"""Every import is declared in the extra that needs it, constraints.txt pins what CI installs, and
the project's metadata is what an index reads.

Each third-party import of ``kit/`` (read with :mod:`ast`: module level, in functions, type-only)
names a module; ``importlib.metadata.packages_distributions()`` says which distribution provides
it, and that distribution must be declared in pyproject.toml where the importing module runs:
:data:`WHERE` (the client core and the base: the dependencies alone; each other room: its extra,
``require``'d where it starts). ``kit._extras.EXTRAS``, what ``require`` checks, must hold only
modules of its extra. ``tests/`` and ``benchmarks/`` may import what ``all`` and ``test`` declare
(the browser suite, ``e2e`` too), the site's hooks what ``docs`` declares.
"""

from __future__ import annotations

import importlib.metadata as metadata
import re
import tomllib
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import pytest
from packaging.licenses import canonicalize_license_expression
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from kit._extras import EXTRAS
from tests.support import deps

ROOT = deps.ROOT

#: Where a file runs → the extras whose distributions it may import beside the dependencies (the
#: first prefix that matches). Dask is an extra of its own, asked for by the lab's and kit
#: regress's clusters (``cluster=``, ``--scheduler``).
WHERE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("kit/sim/", ("sim",)),
    ("kit/lab/", ("lab", "dask")),
    ("kit/simulate.py", ("lab",)),
    ("kit/widgets.py", ("lab",)),
    ("kit/notebook/", ("lab",)),  # the notebooks' companion: the notebooks need the lab
    ("kit/regress/", ("regress", "dask")),
    ("kit/cli.py", ("all",)),  # each command requires its extra before it imports from it
    ("kit/_serveopts.py", ("sim",)),  # kit serve's options: read after serve requires the sim extra
    ("kit/_proxy", ("sim",)),  # kit proxy: _proxy and _proxylog, after the proxy requires the sim extra
    ("kit/", ()),
    ("tests/e2e/", ("all", "test", "e2e")),
    ("tests/", ("all", "test")),
    ("benchmarks/", ("all", "test")),
    ("docs/hooks/", ("docs",)),
)


def _extras_of(relative: str) -> tuple[str, ...]:
    return next(extras for prefix, extras in WHERE if relative.startswith(prefix))


@cache
def _providers() -> dict[str, list[str]]:
    return {top: list(dists) for top, dists in metadata.packages_distributions().items()}


def _distributions(module: str) -> set[str]:
    """The distributions that provide the top-level ``module`` here (its own name when none is
    installed: the browser suite's playwright, outside ``make e2e``)."""
    return {canonicalize_name(d) for d in _providers().get(module, [module])}


def _undeclared(files: Iterable[Path], extras: tuple[str, ...] | None = None) -> list[str]:
    """``path:line: module … is not declared`` for each import not declared where its file runs
    (or in ``extras``, when given)."""
    declared = deps.declared()
    found = []
    for path in files:
        relative = path.relative_to(ROOT).as_posix()
        runs_with = _extras_of(relative) if extras is None else extras
        allowed = set().union(declared[""], *(declared[e] for e in runs_with))
        for module, line in deps.third_party_imports(path):
            if not _distributions(module) & allowed:
                where = " or ".join(repr(e) for e in runs_with) or "the dependencies"
                found.append(
                    f"{relative}:{line}: {module} ({', '.join(sorted(_distributions(module)))}) "
                    f"is not declared in {where}"
                )
    return found


def test_every_import_of_the_kit_is_declared_where_it_runs() -> None:
    assert _undeclared(sorted((ROOT / "kit").rglob("*.py"))) == []
    # and the check can fail: the simulator's app, read as if it were the client core's
    assert _undeclared([ROOT / "kit" / "sim" / "app.py"], extras=()) != []


def test_every_import_of_the_tests_benchmarks_and_site_hooks_is_declared() -> None:
    files = [
        p for folder in ("tests", "benchmarks", "docs/hooks") for p in sorted((ROOT / folder).rglob("*.py"))
    ]
    assert _undeclared(files) == []


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_what_require_checks_is_declared_in_its_extra(extra: str) -> None:
    declared = deps.declared()
    assert [m for m in EXTRAS[extra] if not _distributions(m) & declared[extra]] == []


def test_the_extras_hold_what_their_part_uses_and_nothing_it_does_not() -> None:
    declared = deps.declared()
    assert {"numpy", "ipython", "matplotlib", "pyarrow"} <= declared["lab"]
    assert {"jupyter-client", "traitlets", "ipython", "papermill"} <= declared["regress"]
    assert {"starlette", "cryptography", "uvloop", "httptools", "uvicorn"} <= declared["sim"]
    assert "nbval" not in declared["regress"] and "nbval" in declared["test"]  # kit regress never runs nbval
    assert declared["dask"] <= declared["all"]
    requirements = deps.requirements()
    assert [str(r) for r in requirements["sim"] if r.name == "uvicorn"] == ["uvicorn>=0.36"]  # no [standard]


def test_constraints_pin_every_distribution_installed_for_all_and_test_at_its_version() -> None:
    """constraints.txt is what this environment has of the closure of ``.[all,test]``: CI installs
    from it, so there they are equal; ``make constraints`` writes it again after a change."""
    closure = deps.closure()
    installed = {name: dist.version for name, dist in closure.items()}
    pinned = deps.pinned()
    assert deps.PROJECT not in pinned
    assert {n: v for n, v in installed.items() if pinned.get(n) != v} == {}
    assert sorted(set(pinned) - set(installed)) == []


def test_the_metadata_an_index_reads() -> None:
    """A licence expression (PEP 639: no licence classifier beside it), classifiers that agree
    with requires-python, the project's addresses."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert canonicalize_license_expression(project["license"]) == "LicenseRef-Proprietary"
    classifiers = project["classifiers"]
    assert not [c for c in classifiers if c.startswith("License ::")]
    versions = [
        m[1] for c in classifiers if (m := re.fullmatch(r"Programming Language :: Python :: (3\.\d+)", c))
    ]
    assert versions and all(f"{v}.0" in SpecifierSet(project["requires-python"]) for v in versions)
    assert "Typing :: Typed" in classifiers and (ROOT / "kit" / "py.typed").exists()
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(project["urls"])
