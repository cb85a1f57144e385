"""Cell tags: a notebook's story apart from its checks, and the sections a server may lack.

A notebook is a story a partner would retell (client calls, tables of what came back) with its
checks after it. Three Jupyter cell tags (``metadata.tags``) say what a cell is:

- :data:`CHECKS` (``checks``): a cell of named checks (:func:`kit.notebook.check`), after the
  story, reading what the story computed. It opens collapsed in JupyterLab
  (``metadata.jupyter.source_hidden``) and renders folded on the site (``docs/hooks/site.py``).
- :data:`NEEDS_CONTROL` (``needs-control``): a cell that needs the simulator's control plane
  (``/_sim``: clock, faults, funding, deliveries log).
- :data:`NEEDS_RECEIVER` (``needs-receiver``): a cell that needs the client's local webhook
  receiver (the API must reach this machine).

A ``needs-…`` cell holds no ``if control:`` guard: ``kit regress`` asks the kernel, just before
the cell, whether it can run (:func:`can_run`, the same question a check's ``needs=`` asks the
profile, :data:`kit.notebook.checks.NEEDS`). Where it cannot, the cell is not executed: the
kernel runs :func:`skipped_section` in its place, which reports every check the cell defines
(found in its source by :func:`checks_in`) skipped with the section's reason, exactly as a
check whose ``needs=`` is missing — no check is lost from the counts. A cell may carry both
``checks`` and a ``needs-…`` tag: checks reading what a control-plane section computed.

Example (what ``kit regress`` runs in place of a ``needs-control`` cell on a sandbox)::

    >>> skipped_section("needs-control", [{"name": "clock travel moves the clock", "choice": "A45"}])
    ... # doctest: +SKIP
    ⊘ section skipped (needs-control): needs the simulator's control plane …
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

from kit.notebook.basis import Basis
from kit.notebook.checks import NEEDS, _emit
from kit.notebook.companion import COMPANION
from kit.notebook.outcome import CheckOutcome

__all__ = [
    "CHECKS",
    "NEEDS_CONTROL",
    "NEEDS_RECEIVER",
    "SECTIONS",
    "can_run",
    "checks_in",
    "section_of",
    "skip_source",
    "skipped_section",
]

#: A cell of named checks, after the story.
CHECKS = "checks"
#: A cell that needs the simulator's control plane.
NEEDS_CONTROL = "needs-control"
#: A cell that needs the client's local webhook receiver.
NEEDS_RECEIVER = "needs-receiver"
#: Each section tag and the ``needs=`` it stands for (its reason is that need's).
SECTIONS: Mapping[str, str] = {NEEDS_CONTROL: "control plane", NEEDS_RECEIVER: "webhook receiver"}


def reason(tag: str) -> str:
    """Why a section tagged ``tag`` is skipped where it cannot run (the ``needs=`` reason)."""
    return NEEDS[SECTIONS[tag]].reason


def section_of(tags: Sequence[str]) -> str | None:
    """The section tag among a cell's ``tags`` (``None``: the cell runs everywhere).

    Raises:
        ValueError: a cell tagged with both sections (split it).
    """
    found = [t for t in tags if t in SECTIONS]
    if len(found) > 1:
        raise ValueError(f"a cell tagged {found}: one section tag per cell")
    return found[0] if found else None


def can_run(tag: str) -> bool:
    """Whether a cell tagged ``tag`` can run here: asked of the profile checks are judged
    against (the latest client's, :meth:`kit.notebook.companion.Companion.judged`)."""
    profile, base_url = COMPANION.judged()
    return NEEDS[SECTIONS[tag]].has(profile, base_url)


def _check_call(node: ast.AST) -> ast.Call | None:
    """``check("name", …)`` (a ``with`` item or a decorator), else ``None``."""
    if isinstance(node, ast.Call):
        fn = node.func
        named = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
        if named == "check":
            return node
    return None


def checks_in(source: str) -> list[dict[str, Any]]:
    """Every named check a cell's source defines (``with check("name", …)`` and
    ``@check("name", …)``), in order: ``name`` and, when given as literals, ``spec`` and
    ``choice``. IPython magics and shell lines are left out before parsing.

    Raises:
        ValueError: a check whose name is not a string literal (it could not be reported).
    """
    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    found: list[tuple[int, int, dict[str, Any]]] = []
    for node in ast.walk(ast.parse(code)):
        calls: list[ast.AST] = []
        if isinstance(node, ast.With | ast.AsyncWith):
            calls = [item.context_expr for item in node.items]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            calls = list(node.decorator_list)
        for call in filter(None, map(_check_call, calls)):
            first = call.args[0] if call.args else None
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                raise ValueError(f"line {call.lineno}: a check's name must be a string literal")
            entry: dict[str, Any] = {"name": first.value}
            for keyword in call.keywords:
                if keyword.arg in ("spec", "choice") and isinstance(keyword.value, ast.Constant):
                    entry[keyword.arg] = keyword.value.value
            found.append((call.lineno, call.col_offset, entry))
    return [entry for *_, entry in sorted(found, key=lambda f: f[:2])]


def skip_source(tag: str, source: str) -> str:
    """The code run in place of a section tagged ``tag`` that cannot run here."""
    return f"from kit.notebook.tags import skipped_section\nskipped_section({tag!r}, {checks_in(source)!r})"


def skipped_section(tag: str, checks: Sequence[Mapping[str, Any]] = ()) -> list[CheckOutcome]:
    """Report a section tagged ``tag`` not run here: one line, then each of its ``checks``
    (``name``, optional ``spec``/``choice``) skipped with the section's reason and need."""
    need, why = SECTIONS[tag], reason(tag)
    print(f"⊘ section skipped ({tag}): {why}")
    outcomes = []
    for found in checks:
        basis = Basis.of(spec=found.get("spec"), choice=found.get("choice"))
        outcome = CheckOutcome(str(found["name"]), "skipped", why, (need,), basis.kind, basis.id)
        _emit(outcome)
        outcomes.append(outcome)
    return outcomes
