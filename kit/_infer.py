"""``kit choices infer --openapi URL|FILE``: a dialect file from a sandbox's OpenAPI document.

Each operation the spec does not show (A67's keys) is matched to the document's operation by
what it is, never by its operation id, summary, tags or order: its method, its path parameters
(a re-chosen path keeps the parameters of the simulator's, :mod:`kit._dialect_rules`), and the
members of its request and answer schemas, read through the field case the document's property
names show (A68). Those are compared with the simulator's own document (the reference). A
member found only under another name at the same place is a single rename; header names are
matched by the operations and answers that carry them (A18, A20, A27, A28); A02 and A01 are read
from the security schemes where they say it. Each line written says its evidence and how sure
it is; a tie lists its candidates on a commented line, never guessed.

Example::

    >>> text = infer_text(load("sandbox-openapi.yaml"), source="sandbox-openapi.yaml")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kit import _choices, register
from kit._dialect import HEADERS, STANDARD_NAMES, camel, snake
from kit._tomltext import key as toml_key
from kit._tomltext import value as toml_value
from kit.regress.conformance import unobserved_lines

__all__ = ["Inference", "infer", "infer_text", "load", "reference"]

_PARAM = re.compile(r"\{([^{}]+)\}")
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
#: A member tree: each member name → the tree of its value's members.
Tree = dict[str, "Tree"]


def load(source: str) -> dict[str, Any]:
    """The OpenAPI document at ``source``: an http(s) URL (fetched through the kit's one client
    factory) or a file, JSON or YAML.

    Raises:
        ValueError: not a mapping with ``paths``.
        OSError, httpx.HTTPError: it could not be read.
    """
    if source.startswith(("http://", "https://")):
        from kit._http import http_client

        with http_client() as client:
            answer = client.get(source)
            answer.raise_for_status()
            text = answer.text
    else:
        text = Path(source).read_text(encoding="utf-8")
    doc = json.loads(text) if text.lstrip().startswith("{") else yaml.safe_load(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("paths"), dict):
        raise ValueError(f"{source}: not an OpenAPI document (no paths)")
    return doc


def reference() -> dict[str, Any]:
    """The simulator's own OpenAPI document (the register's dialect)."""
    from kit.sim import create_app
    from kit.sim.settings import Settings

    return create_app(Settings()).openapi()


def _deref(node: Any, doc: Mapping[str, Any]) -> Any:
    seen = 0
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and seen < 32:
        target: Any = doc
        for part in node["$ref"].lstrip("#/").split("/"):
            target = (
                target.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(target, dict) else {}
            )
        node, seen = target, seen + 1
    return node


def _tree(schema: Any, doc: Mapping[str, Any], depth: int = 0) -> Tree:
    """The members of ``schema`` (through ``$ref``, ``allOf``/``anyOf``/``oneOf`` and arrays)."""
    schema = _deref(schema, doc)
    if not isinstance(schema, dict) or depth > 6:
        return {}
    out: Tree = {}
    for branch in (*schema.get("allOf", ()), *schema.get("anyOf", ()), *schema.get("oneOf", ())):
        out.update(_tree(branch, doc, depth + 1))
    if isinstance(schema.get("items"), dict):
        out.update(_tree(schema["items"], doc, depth + 1))
    for name, sub in (schema.get("properties") or {}).items():
        out[str(name)] = _tree(sub, doc, depth + 1)
    return out


def _flat(tree: Tree, spell: Any = str, prefix: str = "") -> set[str]:
    out: set[str] = set()
    for name, sub in tree.items():
        here = f"{prefix}/{spell(name)}"
        out.add(here)
        out |= _flat(sub, spell, here)
    return out


@dataclass
class _Op:
    method: str
    path: str
    params: frozenset[str]
    request: Tree
    answer: Tree
    node: dict[str, Any]


def _body(content: Any, doc: Mapping[str, Any]) -> Tree:
    content = content if isinstance(content, dict) else {}
    for media, item in content.items():
        if "json" in media or "form" in media:
            return _tree((item or {}).get("schema"), doc)
    return {}


def _operations(doc: Mapping[str, Any]) -> list[_Op]:
    ops = []
    for path, item in doc.get("paths", {}).items():
        for method in _METHODS:
            node = _deref((item or {}).get(method), doc)
            if not isinstance(node, dict):
                continue
            request = _body(
                _deref(node.get("requestBody"), doc).get("content") if node.get("requestBody") else {}, doc
            )
            answer: Tree = {}
            for status, resp in sorted((node.get("responses") or {}).items()):
                if str(status).startswith("2"):
                    answer = _body(_deref(resp, doc).get("content"), doc)
                    break
            params = frozenset(_PARAM.findall(path))
            ops.append(_Op(method.upper(), path, params, request, answer, node))
    return ops


def _names(doc: Mapping[str, Any]) -> Iterator[str]:
    def walk(node: Any) -> Iterator[str]:
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "properties" and isinstance(v, dict):
                    yield from (str(n) for n in v)
                yield from walk(v)
        elif isinstance(node, list):
            for v in node:
                yield from walk(v)

    yield from (n for n in walk(doc) if n not in STANDARD_NAMES)


@dataclass
class Inference:
    """What a document showed: values by (entry, key), each with its evidence; and ties."""

    found: dict[str, dict[str, Any]] = field(default_factory=dict)
    why: dict[tuple[str, str], str] = field(default_factory=dict)
    unsure: list[str] = field(default_factory=list)

    def put(self, entry: str, key: str, value: Any, why: str) -> None:
        self.found.setdefault(entry, {})[key] = value
        self.why[(entry, key)] = why


def _case(doc: Mapping[str, Any]) -> tuple[str, str]:
    names = list(_names(doc))
    humps = sum(1 for n in names if re.search(r"[a-z0-9][A-Z]", n))
    under = sum(1 for n in names if "_" in n)
    case = "camel" if humps > under else "snake"
    sure = "sure" if min(humps, under) == 0 else "likely"
    return case, f"{humps} camelCase and {under} snake_case member names of {len(names)} ({sure})"


def _score(ref: _Op, op: _Op, spell: Any) -> float:
    total = 0.0
    for mine, theirs in ((ref.request, op.request), (ref.answer, op.answer)):
        a, b = _flat(mine), _flat(theirs, spell)
        total += len(a & b) / len(a | b) if a | b else 1.0
    return total / 2


def _match_paths(inf: Inference, ref_ops: list[_Op], ops: list[_Op], spell: Any) -> dict[str, _Op]:
    """A67: each key to the one operation of its method and parameters whose members fit best."""
    a67 = register.value("A67")
    fixed = {(o.method, o.path) for o in ref_ops} - {(a67["methods"][k], p) for k, p in a67["paths"].items()}
    free = [o for o in ops if (o.method, o.path) not in fixed]
    by_ref = {(o.method, o.path): o for o in ref_ops}
    scored: list[tuple[float, str, _Op]] = []
    for key, path in a67["paths"].items():
        ref = by_ref[(a67["methods"][key], path)]
        for op in free:
            if op.method == ref.method and op.params == ref.params:
                scored.append((_score(ref, op, spell), key, op))
    matched: dict[str, _Op] = {}
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


def _renames(ref: Tree, theirs: Tree, case: str, where: str, out: dict[str, set[tuple[str, str]]]) -> None:
    spell = camel if case == "camel" else str
    wire = {n: (n if n in STANDARD_NAMES else spell(n)) for n in ref}
    left_ref = [n for n in ref if wire[n] not in theirs]
    left_theirs = [n for n in theirs if n not in wire.values()]
    pairs = [(n, wire[n]) for n in ref if wire[n] in theirs]
    if len(left_ref) == 1 and len(left_theirs) == 1 and left_ref[0] not in STANDARD_NAMES:
        out.setdefault(left_ref[0], set()).add((left_theirs[0], where))
        pairs.append((left_ref[0], left_theirs[0]))
    for mine, their in pairs:
        _renames(ref[mine], theirs[their], case, f"{where}/{their}", out)


def _footprints(ops: Mapping[str, _Op], doc: Mapping[str, Any]) -> dict[str, set[str]]:
    """Header name (lower case) → where it is declared: operation key and request, or status."""
    out: dict[str, set[str]] = {}
    for key, op in ops.items():
        for p in op.node.get("parameters") or ():
            p = _deref(p, doc)
            if isinstance(p, dict) and p.get("in") == "header":
                out.setdefault(str(p["name"]).lower(), set()).add(f"{key} request")
        for status, resp in (op.node.get("responses") or {}).items():
            for name, header in (_deref(resp, doc).get("headers") or {}).items():
                required = "required" if (_deref(header, doc) or {}).get("required") else "optional"
                out.setdefault(str(name).lower(), set()).add(f"{key} {status} {required}")
    return out


def _headers(
    inf: Inference, ref_fp: dict[str, set[str]], fp: dict[str, set[str]], spelled: dict[str, str]
) -> None:
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
        score, name = best[0]
        sure = "sure" if score >= 0.9 else "likely"
        inf.put(entry, key, spelled[name], f"declared where {ours} is, {score:.0%} of its places ({sure})")


def _security(inf: Inference, doc: Mapping[str, Any], matched: Mapping[str, _Op]) -> None:
    schemes = (doc.get("components") or {}).get("securitySchemes") or {}
    used = [n for op in matched.values() for req in op.node.get("security") or () for n in req]
    if used:
        name = max(set(used), key=used.count)
        scheme = _deref(schemes.get(name), doc) or {}
        if scheme.get("type") == "http" and scheme.get("scheme"):
            inf.put("A02", "header", "Authorization", "security scheme of type http (sure)")
            inf.put(
                "A02",
                "scheme",
                str(scheme["scheme"]).capitalize(),
                "the http security scheme's scheme (sure)",
            )
        elif scheme.get("type") == "apiKey" and scheme.get("in") == "header":
            inf.put("A02", "header", str(scheme["name"]), "an apiKey security scheme in a header (sure)")


def _client_auth(inf: Inference, doc: Mapping[str, Any], token: _Op | None) -> None:
    if token is None:
        return
    schemes = (doc.get("components") or {}).get("securitySchemes") or {}
    basic = any(
        (_deref(schemes.get(n), doc) or {}).get("scheme", "").lower() == "basic"
        for req in token.node.get("security") or ()
        for n in req
    )
    form = {"client_id", "client_secret"} <= set(token.request)
    auth = "either" if basic and form else "basic" if basic else "post" if form else None
    if auth:
        inf.put(
            "A01",
            "client_auth",
            auth,
            f"token operation: HTTP Basic {'declared' if basic else 'not declared'}, "
            f"client_id and client_secret {'in' if form else 'not in'} its form (likely)",
        )


def infer(doc: Mapping[str, Any], ref: Mapping[str, Any] | None = None) -> Inference:
    """What ``doc`` shows of the dialect, against ``ref`` (the simulator's document by default)."""
    ref = ref if ref is not None else reference()
    inf = Inference()
    case, why = _case(doc)
    inf.put("A68", "field_case", case, why)
    spell = snake if case == "camel" else str
    ref_ops, ops = _operations(ref), _operations(doc)
    matched = _match_paths(inf, ref_ops, ops, spell)
    a67 = register.value("A67")
    keys = {(a67["methods"][k], p): k for k, p in a67["paths"].items()}
    from kit.sim.routes import OPERATIONS

    fixed = {(m, o.path): o.key for o in OPERATIONS for m in o.methods if not o.rest}
    mine = {fixed.get((o.method, o.path)) or keys.get((o.method, o.path)): o for o in ref_ops}
    theirs = dict(matched)
    theirs.update({fixed[(o.method, o.path)]: o for o in ops if (o.method, o.path) in fixed})
    both = {k: (mine[k], theirs[k]) for k in theirs if k in mine and k is not None}
    renames: dict[str, set[tuple[str, str]]] = {}
    for key, (r, t) in both.items():
        _renames(r.request, t.request, case, f"{key} request", renames)
        _renames(r.answer, t.answer, case, f"{key} answer", renames)
    chosen = {}
    for name, seen in sorted(renames.items()):
        wires = {w for w, _ in seen}
        if len(wires) > 1:
            inf.unsure.append(f"A68 renames {name}: {', '.join(sorted(wires))}")
            continue
        chosen[name] = wires.pop()
    if chosen:
        places = "; ".join(f"{n} → {w} ({sorted(w2 for _, w2 in renames[n])[0]})" for n, w in chosen.items())
        inf.put("A68", "renames", chosen, f"the only member left unmatched at its place: {places} (likely)")
    fp = _footprints({k: t for k, (_, t) in both.items()}, doc)
    spelled = {n: n for n in fp}
    for op in ops:
        for p in op.node.get("parameters") or ():
            p = _deref(p, doc)
            if isinstance(p, dict) and p.get("in") == "header":
                spelled[str(p["name"]).lower()] = str(p["name"])
        for resp in (op.node.get("responses") or {}).values():
            spelled.update({str(n).lower(): str(n) for n in _deref(resp, doc).get("headers") or {}})
    _headers(inf, _footprints({k: r for k, (r, _) in both.items()}, ref), fp, spelled)
    _security(inf, doc, {k: t for k, (_, t) in both.items() if k != "access_token"})
    _client_auth(inf, doc, theirs.get("access_token"))
    return inf


def infer_text(doc: Mapping[str, Any], *, source: str = "") -> str:
    """The dialect file :func:`infer` gives for ``doc`` (see the module docstring).

    Raises:
        ValueError: the text would not be a valid overlay (a bug).
    """
    inf = infer(doc)
    lines = [
        f"# Inferred by kit choices infer from {source or 'an OpenAPI document'}: each line says its",
        "# evidence and how sure it is; what the document did not show stays commented with the",
        "# simulator's value. Check it: kit choices check FILE",
        f"description = {toml_value('inferred from ' + (source or 'an OpenAPI document'))}",
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
