"""``kit choices infer --openapi URL|FILE``: a dialect file from a sandbox's OpenAPI document.

Each operation the spec does not show (A67's keys) is matched to the document's operation by
what it is, never by its operation id, summary, tags or order: its method, its path parameters
(a re-chosen path keeps the parameters of the simulator's, :mod:`kit._dialect_rules`), and the
members of its request and answer schemas, read through the field case the document's property
names show (A68). Those are compared with the simulator's own document (the reference). A
member found only under another name at the same place is a single rename; header names are
matched by the operations and answers that declare them (A18, A20, A27, A28); A02 and A01 are
read from the security schemes where they say it. :mod:`kit._infer` holds what this shares with
the inference from traffic, and writes the file.

Example::

    >>> text = infer_text(load("sandbox-openapi.yaml"), source="sandbox-openapi.yaml")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from kit._dialect import snake
from kit._infer import (
    Inference,
    Op,
    Tree,
    case_of,
    fixed_keys,
    infer_renames,
    keyed,
    match_headers,
    match_paths,
    params_of,
    text,
)

__all__ = ["footprints", "infer", "infer_text", "load", "operations", "reference"]

_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


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


def _body(content: Any, doc: Mapping[str, Any]) -> Tree:
    content = content if isinstance(content, dict) else {}
    for media, item in content.items():
        if "json" in media or "form" in media:
            return _tree((item or {}).get("schema"), doc)
    return {}


def operations(doc: Mapping[str, Any]) -> list[Op]:
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
            params = params_of(path)
            ops.append(Op(method.upper(), path, params, request, answer, node))
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

    yield from walk(doc)


def footprints(ops: Mapping[str, Op], doc: Mapping[str, Any]) -> dict[str, set[str]]:
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


def _security(inf: Inference, doc: Mapping[str, Any], matched: Mapping[str, Op]) -> None:
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
            challenged = _challenge_schemes(doc, matched.values())
            if len(challenged) == 1:
                inf.put(
                    "A02",
                    "scheme",
                    challenged.pop(),
                    "the scheme a 401's WWW-Authenticate pattern names (likely)",
                )


_CHALLENGE = re.compile(r"^\^([A-Za-z][\w.+-]*)")


def _challenge_schemes(doc: Mapping[str, Any], ops: Iterable[Op]) -> set[str]:
    """The schemes the 401 answers' ``WWW-Authenticate`` patterns begin with (``^Token( |$)``)."""
    found = set()
    for op in ops:
        answer = _deref((op.node.get("responses") or {}).get("401"), doc) or {}
        for name, header in (answer.get("headers") or {}).items():
            pattern = ((_deref(header, doc) or {}).get("schema") or {}).get("pattern")
            match = (
                _CHALLENGE.match(pattern)
                if str(name).lower() == "www-authenticate" and isinstance(pattern, str)
                else None
            )
            if match:
                found.add(match.group(1))
    return found


def _client_auth(inf: Inference, doc: Mapping[str, Any], token: Op | None) -> None:
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


def _codes_listed(inf: Inference, doc: Mapping[str, Any]) -> None:
    """A64: the codes a problem schema lists (an enum on its ``code``) that the kit does not
    know, listed to be mapped by hand; which of the kit's each stands for a list cannot say."""
    from kit._codes import KNOWN

    listed: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict) and {"status", "title"} <= set(props):
                code = _deref(props.get("code"), doc)
                if isinstance(code, dict):
                    listed.update(str(v) for v in code.get("enum") or () if isinstance(v, str))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(doc)
    unknown = sorted(listed - KNOWN)
    if unknown:
        inf.unsure.append(f"A64 codes the document lists that the kit does not know: {', '.join(unknown)}")


def infer(doc: Mapping[str, Any], ref: Mapping[str, Any] | None = None) -> Inference:
    """What ``doc`` shows of the dialect, against ``ref`` (the simulator's document by default)."""
    ref = ref if ref is not None else reference()
    inf = Inference()
    case, why = case_of(list(_names(doc)))
    inf.put("A68", "field_case", case, why)
    spell = snake if case == "camel" else str
    ref_ops, ops = operations(ref), operations(doc)
    matched = match_paths(inf, ref_ops, ops, spell)
    fixed = fixed_keys()
    mine = keyed(ref_ops)
    theirs = dict(matched)
    theirs.update({fixed[(o.method, o.path)]: o for o in ops if (o.method, o.path) in fixed})
    both = {k: (mine[k], theirs[k]) for k in theirs if k in mine and k is not None}
    infer_renames(inf, both, case)
    fp = footprints({k: t for k, (_, t) in both.items()}, doc)
    spelled = {n: n for n in fp}
    for op in ops:
        for p in op.node.get("parameters") or ():
            p = _deref(p, doc)
            if isinstance(p, dict) and p.get("in") == "header":
                spelled[str(p["name"]).lower()] = str(p["name"])
        for resp in (op.node.get("responses") or {}).values():
            spelled.update({str(n).lower(): str(n) for n in _deref(resp, doc).get("headers") or {}})
    match_headers(inf, footprints({k: r for k, (r, _) in both.items()}, ref), fp, spelled)
    _security(inf, doc, {k: t for k, (_, t) in both.items() if k != "access_token"})
    _client_auth(inf, doc, theirs.get("access_token"))
    _codes_listed(inf, doc)
    return inf


def infer_text(doc: Mapping[str, Any], *, source: str = "") -> str:
    """The dialect file :func:`infer` gives for ``doc`` (see the module docstring).

    Raises:
        ValueError: the text would not be a valid overlay (a bug).
    """
    return text(infer(doc), source or "an OpenAPI document")
