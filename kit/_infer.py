"""What ``kit choices infer`` shares between an OpenAPI document (:mod:`kit._infer_openapi`)
and recorded traffic (:mod:`kit._infer_har`): operations seen as their method, path parameters
and member trees, matched to A67's keys against the simulator's own document — never by an
operation id, summary, tag or order; A68's case and single renames; header names by where they
are declared or seen; and the dialect file written from it all, each line with its evidence and
how sure it is, a tie listed and left commented, the rest commented with the simulator's values
by the writer ``kit regress --write-choices`` uses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kit import _choices, register
from kit._dialect import HEADERS, STANDARD_NAMES, camel
from kit._tomltext import key as toml_key
from kit._tomltext import value as toml_value
from kit.regress.conformance import unobserved_lines

__all__ = [
    "Inference",
    "Op",
    "Tree",
    "case_of",
    "fixed_keys",
    "flat",
    "infer_renames",
    "keyed",
    "match_headers",
    "match_paths",
    "params_of",
    "renames",
    "text",
]

_PARAM = re.compile(r"\{([^{}]+)\}")


def params_of(template: str) -> frozenset[str]:
    """The parameter names of a path template."""
    return frozenset(_PARAM.findall(template))


#: A member tree: each member name → the tree of its value's members.
Tree = dict[str, "Tree"]


def flat(tree: Tree, spell: Any = str, prefix: str = "") -> set[str]:
    """Every member of ``tree`` as a path of names (``/a/b``), each name through ``spell``."""
    out: set[str] = set()
    for name, sub in tree.items():
        here = f"{prefix}/{spell(name)}"
        out.add(here)
        out |= flat(sub, spell, here)
    return out


@dataclass
class Op:
    """An operation as inference sees it: method, path template, its parameters, the members
    of its request and answer, and (for a document) its node."""

    method: str
    path: str
    params: frozenset[str]
    request: Tree
    answer: Tree
    node: dict[str, Any]


@dataclass
class Inference:
    """What a document or traffic showed: values by (entry, key), each with its evidence; and ties."""

    found: dict[str, dict[str, Any]] = field(default_factory=dict)
    why: dict[tuple[str, str], str] = field(default_factory=dict)
    unsure: list[str] = field(default_factory=list)

    def put(self, entry: str, key: str, value: Any, why: str) -> None:
        """Infer ``entry``'s ``key`` as ``value`` for the reason ``why``."""
        self.found.setdefault(entry, {})[key] = value
        self.why[(entry, key)] = why


def case_of(names: list[str]) -> tuple[str, str]:
    """A68's field case by the member names seen (the standard ones aside), and its evidence."""
    names = [n for n in names if n not in STANDARD_NAMES]
    humps = sum(1 for n in names if re.search(r"[a-z0-9][A-Z]", n))
    under = sum(1 for n in names if "_" in n)
    case = "camel" if humps > under else "snake"
    sure = "sure" if min(humps, under) == 0 else "likely"
    return case, f"{humps} camelCase and {under} snake_case member names of {len(names)} ({sure})"


def _score(ref: Op, op: Op, spell: Any) -> float:
    total = 0.0
    for mine, theirs in ((ref.request, op.request), (ref.answer, op.answer)):
        a, b = flat(mine), flat(theirs, spell)
        total += len(a & b) / len(a | b) if a | b else 1.0
    return total / 2


def match_paths(inf: Inference, ref_ops: list[Op], ops: list[Op], spell: Any) -> dict[str, Op]:
    """A67: each key to the one operation of its method and parameters whose members fit best."""
    a67 = register.value("A67")
    fixed = {(o.method, o.path) for o in ref_ops} - {(a67["methods"][k], p) for k, p in a67["paths"].items()}
    free = [o for o in ops if (o.method, o.path) not in fixed]
    by_ref = {(o.method, o.path): o for o in ref_ops}
    scored: list[tuple[float, str, Op]] = []
    for key, path in a67["paths"].items():
        ref = by_ref[(a67["methods"][key], path)]
        for op in free:
            if op.method == ref.method and op.params == ref.params:
                scored.append((_score(ref, op, spell), key, op))
    matched: dict[str, Op] = {}
    taken: set[tuple[str, str]] = set()
    for score, key, op in sorted(scored, key=lambda s: -s[0]):
        if key in matched or (op.method, op.path) in taken:
            continue
        rivals = [
            o.path
            for s, k, o in scored
            if k == key and o is not op and s == score and (o.method, o.path) not in taken
        ]
        if rivals:
            inf.unsure.append(
                f"A67 {key}: a tie between {', '.join(sorted([op.path, *rivals]))} (score {score:.2f})"
            )
            matched[key] = op  # claimed, not written
            taken.update((op.method, r) for r in [op.path, *rivals])
            continue
        matched[key] = op
        taken.add((op.method, op.path))
        count = sum(1 for o in free if o.method == op.method and o.params == op.params)
        sure = "sure" if score >= 0.9 else "likely" if score >= 0.5 else "unsure"
        params = ", ".join(sorted(op.params)) or "no path parameters"
        inf.put(
            "A67",
            f"paths.{key}",
            op.path,
            f"{op.method}, {params}; members fit {score:.0%}, best of {count} ({sure})",
        )
    return {k: o for k, o in matched.items() if ("A67", f"paths.{k}") in inf.why}


def renames(ref: Tree, theirs: Tree, case: str, where: str, out: dict[str, set[tuple[str, str]]]) -> None:
    """Add to ``out`` each member of ``ref`` (the kit's names) found in ``theirs`` only under
    another name: the one member left on each side at one place, ``where``, and below it."""
    spell = camel if case == "camel" else str
    wire = {n: (n if n in STANDARD_NAMES else spell(n)) for n in ref}
    left_ref = [n for n in ref if wire[n] not in theirs]
    left_theirs = [n for n in theirs if n not in wire.values()]
    pairs = [(n, wire[n]) for n in ref if wire[n] in theirs]
    if len(left_ref) == 1 and len(left_theirs) == 1 and left_ref[0] not in STANDARD_NAMES:
        out.setdefault(left_ref[0], set()).add((left_theirs[0], where))
        pairs.append((left_ref[0], left_theirs[0]))
    for mine, their in pairs:
        renames(ref[mine], theirs[their], case, f"{where}/{their}", out)


def match_headers(
    inf: Inference, ref_fp: dict[str, set[str]], fp: dict[str, set[str]], spelled: dict[str, str]
) -> None:
    """Each header of :data:`kit._dialect.HEADERS` to the one name declared (or seen) in the
    places the reference declares it: a tie between names, or one name fitting several
    headers, is listed and nothing written."""
    chosen: dict[str, list[tuple[str, str, float]]] = {}
    for entry, key in HEADERS:
        ours = register.value(entry)[key].lower()
        mine = ref_fp.get(ours)
        if not mine:
            continue
        best = sorted(((len(mine & f) / len(mine | f), n) for n, f in fp.items()), reverse=True)
        if not best or best[0][0] < 0.5:
            continue
        top = [n for s, n in best if s == best[0][0]]
        if len(top) > 1:
            inf.unsure.append(f"{entry} {key}: a tie between {', '.join(spelled[n] for n in sorted(top))}")
            continue
        chosen.setdefault(best[0][1], []).append((entry, key, best[0][0]))
    for name, fits in chosen.items():
        if len(fits) > 1:
            for entry, key, _ in fits:
                inf.unsure.append(f"{entry} {key}: a tie between {spelled[name]} and other headers' places")
            continue
        ((entry, key, score),) = fits
        ours = register.value(entry)[key].lower()
        sure = "sure" if score >= 0.9 else "likely"
        inf.put(entry, key, spelled[name], f"declared where {ours} is, {score:.0%} of its places ({sure})")


def fixed_keys() -> dict[tuple[str, str], str]:
    """(method, path) → key of every operation whose path the spec shows (not A67's)."""
    from kit.sim.routes import OPERATIONS

    a67 = set(register.value("A67")["paths"])
    return {(m, o.path): o.key for o in OPERATIONS for m in o.methods if not o.rest and o.key not in a67}


def keyed(ref_ops: list[Op]) -> dict[str, Op]:
    """The reference document's operations by key (A67's at their default paths)."""
    a67 = register.value("A67")
    keys = {(a67["methods"][k], p): k for k, p in a67["paths"].items()}
    keys.update(fixed_keys())
    return {keys[(o.method, o.path)]: o for o in ref_ops if (o.method, o.path) in keys}


def infer_renames(inf: Inference, both: Mapping[str, tuple[Op, Op]], case: str) -> None:
    """A68's renames from each operation's (reference, theirs) pair: a name found at more than
    one place under different names is a tie, listed."""
    seen: dict[str, set[tuple[str, str]]] = {}
    for key, (r, t) in both.items():
        renames(r.request, t.request, case, f"{key} request", seen)
        renames(r.answer, t.answer, case, f"{key} answer", seen)
    chosen: dict[str, str] = {}
    for name, places in sorted(seen.items()):
        wires = {w for w, _ in places}
        if len(wires) > 1:
            inf.unsure.append(f"A68 renames {name}: {', '.join(sorted(wires))}")
            continue
        chosen[name] = wires.pop()
    if chosen:
        where = "; ".join(f"{n} → {w} ({sorted(w2 for _, w2 in seen[n])[0]})" for n, w in chosen.items())
        inf.put("A68", "renames", chosen, f"the only member left unmatched at its place: {where} (likely)")


def text(inf: Inference, source: str) -> str:
    """The dialect file of ``inf``, inferred from ``source``: each line with its evidence, the
    ties listed, the rest commented with the simulator's values (the writer of
    ``--write-choices``).

    Raises:
        ValueError: the text would not be a valid overlay (a bug).
    """
    lines = [
        f"# Inferred by kit choices infer from {source}: each line says its",
        "# evidence and how sure it is; what it did not show stays commented with the",
        "# simulator's value. Check it: kit choices check FILE",
        f"description = {toml_value('inferred from ' + source)}",
    ]
    data: dict[str, dict[str, Any]] = {}
    a67 = {k.split(".", 1)[1]: v for k, v in inf.found.get("A67", {}).items()}
    if a67:
        data["A67"] = {"paths": a67}
        lines += ["", "[A67.paths]  # matched by method, path parameters and members, never by names"]
        for key, path in register.value("A67")["paths"].items():
            if key in a67:
                lines.append(
                    f"{toml_key(key)} = {toml_value(a67[key])}  # {inf.why[('A67', 'paths.' + key)]}"
                )
            else:
                lines.append(f"# {toml_key(key)} = {toml_value(path)}  # not matched: the simulator's path")
    for entry in [e for e in inf.found if e != "A67"]:
        data[entry] = dict(inf.found[entry])
        lines += ["", f"[{entry}]"]
        for key, value in inf.found[entry].items():
            lines.append(f"{toml_key(key)} = {toml_value(value)}  # {inf.why[(entry, key)]}")
    if inf.unsure:
        lines += ["", "# Unsure, not written (choose and uncomment above or below):"]
        lines += [f"#   {text}" for text in inf.unsure]
    lines += unobserved_lines(data)
    _choices.parse(data)
    return "\n".join(lines) + "\n"
