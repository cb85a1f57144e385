"""The problem codes the simulator can raise, read from its source (no simulator imported).

A code reaches the wire through ``Problem(status, code, …)`` or ``OAuthError(status, error, …)``
(``kit/sim/problems.py``), directly or through a helper that passes its parameter on, maybe
inside an f-string (``not_found("card")`` → ``card-not-found``). The walk finds those helpers
by itself, reads the codes at every call (string literals, module-level tables read with
``.get(key, default)``, parameter defaults), and the enumerated-value tables
``{field: (code, allowed)}`` the routes hand to the pipeline's enum check.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["problem_codes", "sim_problem_codes"]

#: The simulator's problem classes: name → (position, keyword) of the code argument.
CONSTRUCTORS = {"Problem": (1, "code"), "OAuthError": (1, "error")}

Function = ast.FunctionDef | ast.AsyncFunctionDef
#: A problem maker: (position, keyword) of its code argument and how it makes the code of it.
Maker = tuple[int, str, str]


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _params(fn: Function) -> list[str]:
    names = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def _defaults(fn: Function) -> dict[str, ast.expr]:
    positional = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
    found = dict(zip(positional[len(positional) - len(fn.args.defaults) :], fn.args.defaults, strict=True))
    found.update({a.arg: d for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True) if d})
    return found


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    return call.args[position] if len(call.args) > position else None


def _calls(node: ast.AST, fn: Function | None = None) -> Iterator[tuple[ast.Call, Function | None]]:
    """Every call below ``node`` with its innermost enclosing function."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Call):
            yield child, fn
        yield from _calls(child, child if isinstance(child, Function) else fn)


def _enum_table(expr: ast.expr) -> list[str]:
    """The codes of a ``{field: (code, allowed)}`` literal (``[]`` for anything else)."""
    if not isinstance(expr, ast.Dict) or not expr.values:
        return []
    firsts = [v.elts[0] for v in expr.values if isinstance(v, ast.Tuple) and len(v.elts) == 2]
    codes = [f.value for f in firsts if isinstance(f, ast.Constant) and isinstance(f.value, str)]
    return codes if len(codes) == len(expr.values) else []


class _Walk:
    def __init__(self, trees: list[ast.Module]) -> None:
        self.trees = trees
        self.globals: dict[str, list[ast.expr]] = {}
        for tree in trees:
            for node in tree.body:
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            self.globals.setdefault(target.id, []).append(node.value)
        self.makers: dict[str, Maker] = {name: (p, k, "{}") for name, (p, k) in CONSTRUCTORS.items()}
        while self._more_makers():
            pass

    def values(self, expr: ast.expr | None, fn: Function | None) -> set[str]:
        """The strings an expression can be (as far as a table or a literal tells)."""
        if isinstance(expr, ast.Constant):
            return {expr.value} if isinstance(expr.value, str) else set()
        parts: list[ast.expr | None] = []
        if isinstance(expr, ast.Dict):
            parts = list(expr.values)
        elif isinstance(expr, ast.IfExp):
            parts = [expr.body, expr.orelse]
        elif isinstance(expr, ast.BoolOp):
            parts = list(expr.values)
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "get":
            parts = [expr.func.value, *expr.args[1:2]]
        elif isinstance(expr, ast.Name):
            local = [
                node.value
                for node in (ast.walk(fn) if fn is not None else ())
                if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == expr.id for t in node.targets)
            ]
            parts = list(local or self.globals.get(expr.id, []))
        return {value for part in parts for value in self.values(part, fn)}

    def _from_param(self, expr: ast.expr | None, fn: Function | None) -> tuple[str, str] | None:
        """(parameter, template) when ``expr`` is one of ``fn``'s parameters, maybe in an f-string."""
        if fn is None or expr is None:
            return None
        params = _params(fn)
        if isinstance(expr, ast.Name) and expr.id in params:
            return expr.id, "{}"
        if isinstance(expr, ast.JoinedStr):
            holes = [v.value for v in expr.values if isinstance(v, ast.FormattedValue)]
            if len(holes) == 1 and isinstance(holes[0], ast.Name) and holes[0].id in params:
                text = "".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in expr.values)
                return holes[0].id, text
        return None

    def _more_makers(self) -> bool:
        """Add the functions that pass a parameter on as a code; ``True`` if any was new."""
        grown = False
        for tree in self.trees:
            for call, fn in _calls(tree):
                maker = self.makers.get(_callee(call))
                found = self._from_param(_argument(call, *maker[:2]), fn) if maker else None
                if maker is None or found is None or fn is None:
                    continue
                param, inner = found
                entry = (_params(fn).index(param), param, maker[2].replace("{}", inner))
                if self.makers.get(fn.name) != entry:
                    self.makers[fn.name] = entry
                    grown = True
        return grown

    def codes(self) -> set[str]:
        found: set[str] = set()
        for tree in self.trees:
            for maker_fn in (n for n in ast.walk(tree) if isinstance(n, Function) and n.name in self.makers):
                _, param, template = self.makers[maker_fn.name]
                found |= {template.format(v) for v in self.values(_defaults(maker_fn).get(param), None)}
            for call, fn in _calls(tree):
                maker = self.makers.get(_callee(call))
                if maker is not None:
                    found |= {maker[2].format(v) for v in self.values(_argument(call, *maker[:2]), fn)}
                for arg in call.args:
                    found.update(_enum_table(arg))
        return found


def problem_codes(sources: Iterable[str]) -> set[str]:
    """The problem codes the given module sources can raise.

    Example::

        >>> sorted(problem_codes(["def f(kind):\\n    raise Problem(404, f'{kind}-gone', 'd')\\n"
        ...                       "f('card')\\n"]))
        ['card-gone']
    """
    return _Walk([ast.parse(source) for source in sources]).codes()


def sim_problem_codes(sim_dir: Path) -> set[str]:
    """Every problem code the simulator's package (``kit/sim``) can raise."""
    return problem_codes(p.read_text(encoding="utf-8") for p in sorted(sim_dir.rglob("*.py")))
