"""The rules a dialect file keeps (:mod:`kit._choices` applies them to every overlay).

A re-chosen path (A67) is a path of plain segments whose parameters are exactly ``{name}``, keeps
its operation's parameters, reaches neither the control plane (``/_sim``) nor the simulator's
documents, and collides with no route of the spec, of A66 or of another operation; field names
(A68) are snake or camel case and never rename a name a standard or the spec fixes; header
names are RFC 9110 tokens, distinct, none the spec's ``svc-session-id`` and none that frames,
routes or authenticates a message (:data:`RESERVED_HEADERS`); the client authentication (A01)
and the signature algorithm (A24) are ones the kit speaks; session values (A05, A06) keep their
meaning.

What only the simulator adds (a route table that can take every path) is
:func:`kit.sim.personality.resolve`'s, which ``kit choices check`` and ``kit serve`` apply too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from kit import register
from kit._dialect import _PARAM, HEADERS, OPERATIONS, STANDARD_NAMES, _shape
from kit._headers import CONTROL_TOKEN

__all__ = ["ALGORITHMS", "CLIENT_AUTH", "CONTROL_PREFIX", "DOCUMENTS", "RESERVED_HEADERS", "problems"]

#: What the simulator serves itself behind its route table: the control plane, under this
#: prefix, and FastAPI's documents (``kit.sim.app.DOCUMENTS``). An operation's path reaches none.
CONTROL_PREFIX = "/_sim"
DOCUMENTS = ("/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc")
#: A path: ``/`` then segments of RFC 3986's path characters (no ``%``: the simulator routes
#: the decoded path) and parameters ``{name}``; a final ``/`` may end it.
_SEGMENT = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|\{[a-z_]+\})+"
_PATH = re.compile(rf"(?:/{_SEGMENT})+/?")


def _seed_routes() -> list[tuple[str, str, str]]:
    """(method, template, what) of every route the spec or A66 fixes; ``*`` for any method (a
    removed endpoint answers every method)."""
    spec = register.spec()
    removed = {e["path"] for e in spec["removed_endpoints"] if e["path"]}
    routes = [
        ("*" if e["path"] in removed else e["method"], e["path"], f"the spec's {e['method']} {e['path']}")
        for e in spec["endpoint"]
    ]
    routes += [("*", p, f"A66's {p}") for p in register.value("A66")["paths"]]
    return routes


def _matcher(template: str) -> re.Pattern[str]:
    """What ``template`` matches: each ``{name}`` any one segment's text, the rest itself."""
    parts = _PARAM.split(template)  # literal, name, literal, name, … literal
    return re.compile("".join("[^/]+" if i % 2 else re.escape(part) for i, part in enumerate(parts)))


def _path_fault(path: str) -> str | None:
    """Why ``path`` cannot be an operation's path (its form, and what it would reach), or None."""
    if "{" in _PARAM.sub("", path) or "}" in _PARAM.sub("", path):
        return (
            f"{path!r}: a parameter is {{name}} and nothing else "
            "(no format spec, conversion, attribute, index or lone brace)"
        )
    if not _PATH.fullmatch(path):
        return (
            f"{path!r} is not a path: / then segments of letters, digits and -._~!$&'()*+,;=:@ "
            "(no %, space, ? or #, no empty segment)"
        )
    if {".", ".."} & set(path.split("/")):
        return f"{path!r} is not a path: a . or .. segment"
    first = _matcher("/" + path.split("/")[1])
    if first.fullmatch(CONTROL_PREFIX):
        return f"{path!r} reaches the control plane: its first segment can be {CONTROL_PREFIX[1:]}"
    reached = [doc for doc in DOCUMENTS if _matcher(path).fullmatch(doc)]
    if reached:
        return f"{path!r} reaches {reached[0]}, one of the simulator's documents"
    return None


def problems(values: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str, str]]:
    """What is wrong with an overlay's A67 paths and A68 names (already type-checked by
    :func:`kit._choices.parse`): a path that is not one (see :func:`_path_fault`) or misses or
    adds a parameter, two operations or an operation and a route of the spec on one method and
    template, a field case other than snake or camel, a standard name renamed, two names renamed
    to one; and the rest of the wire (:func:`_wire_problems`): (entry, key, why) each."""
    found: list[tuple[str, str, str]] = []
    base = register.value("A67")
    paths = {**base["paths"], **values.get("A67", {}).get("paths", {})}
    taken = {(m, _shape(t)): what for m, t, what in _seed_routes()}
    for op in OPERATIONS:
        path, method = paths[op], base["methods"][op]
        want, got = set(_PARAM.findall(base["paths"][op])), set(_PARAM.findall(path))
        fault = _path_fault(path)
        if fault:
            found.append(("A67", f"paths.{op}", fault))
        elif want != got:
            need = ", ".join(f"{{{p}}}" for p in sorted(want))
            keep = f"must keep the parameters {need}" if need else "must have no parameters"
            found.append(("A67", f"paths.{op}", f"{path!r} {keep} (the operation's)"))
        else:
            clash = taken.get((method, _shape(path))) or taken.get(("*", _shape(path)))
            if clash:
                found.append(("A67", f"paths.{op}", f"{method} {path} collides with {clash}"))
            taken[(method, _shape(path))] = f"{method} {path} (paths.{op})"
    found += _wire_problems(values)
    names = values.get("A68", {})
    case = names.get("field_case", "snake")
    if case not in ("snake", "camel"):
        found.append(("A68", "field_case", f'{case!r}: expected "snake" or "camel"'))
    seen: dict[str, str] = {}
    for kit_name, wire_name in names.get("renames", {}).items():
        if not isinstance(wire_name, str) or not wire_name:
            found.append(("A68", f"renames.{kit_name}", "expected a non-empty string"))
        elif kit_name in STANDARD_NAMES:
            found.append(("A68", f"renames.{kit_name}", "a standard or the spec fixes this name"))
        elif wire_name in seen:
            found.append(("A68", f"renames.{kit_name}", f"{wire_name!r} is also {seen[wire_name]}'s"))
        seen[wire_name] = kit_name
    return found


#: The webhook signature algorithms a dialect may choose (A24).
ALGORITHMS = ("ES256", "ES384", "RS256", "PS256", "EdDSA", "Ed25519")
CLIENT_AUTH = ("either", "basic", "post")
#: RFC 9110's token: what a header name (or an auth scheme) may be.
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_FRAMES = "it frames the message (RFC 9110 §6, RFC 9112 §6)"
_HOP = "it is hop-by-hop (RFC 9110 §7.6.1): proxies act on it and drop it"
_CREDENTIALS = "it carries credentials or state"
_PROXIES = "proxies write it about the client"
#: Header names no dialect may choose (lower case), and why: the server, a proxy or a browser
#: acts on each before any dialect is read, so a header renamed to one would reach them, or a
#: request's own would be translated away before the Host and Origin checks. ``Authorization``
#: only as A02's own (the partner token's header).
RESERVED_HEADERS: Mapping[str, str] = MappingProxyType(
    {
        "host": "the server's Host check reads it (and HTTP/1.1 routes by it)",
        "origin": "the server's Origin check reads it",
        "transfer-encoding": _FRAMES,
        "trailer": _FRAMES,
        "te": _HOP,
        "expect": "the server answers it before reading the body (RFC 9110 §10.1.1)",
        "connection": _HOP,
        "keep-alive": _HOP,
        "upgrade": _HOP,
        "authorization": f"{_CREDENTIALS}: only A02's header may be Authorization",
        "www-authenticate": f"{_CREDENTIALS}: the server's challenge (RFC 9110 §11.6.1)",
        "cookie": _CREDENTIALS,
        "set-cookie": _CREDENTIALS,
        CONTROL_TOKEN: f"{_CREDENTIALS}: the control plane's token",
        "forwarded": _PROXIES,
        "via": _PROXIES,
    }
)
#: Prefixes of the same (lower case): every ``Content-*`` frames or describes the body,
#: ``Proxy-*`` are hop-by-hop credentials, ``X-Forwarded-*`` proxies', ``Sec-*`` and
#: ``Access-Control-*`` browsers' (Fetch's forbidden request headers; CORS).
_RESERVED_PREFIXES = {
    "content-": _FRAMES,
    "proxy-": _HOP,
    "x-forwarded-": _PROXIES,
    "sec-": "browsers set it (Fetch)",
    "access-control-": "browsers read it for CORS",
}


def _reserved(entry: str, key: str, name: str) -> str | None:
    """Why ``name`` (of ``entry`` ``key``) is not a dialect's to choose, or None."""
    low = name.lower()
    if (entry, key) == ("A02", "header") and low == "authorization":
        return None
    if low in RESERVED_HEADERS:
        return RESERVED_HEADERS[low]
    return next((why for prefix, why in _RESERVED_PREFIXES.items() if low.startswith(prefix)), None)


def _wire_problems(values: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str, str]]:
    """Header names (tokens, none reserved, distinct, none the spec's svc-session-id), the
    client authentication, the signature algorithm, and session values that keep their meaning."""
    found: list[tuple[str, str, str]] = []

    def chosen(entry: str, key: str) -> Any:
        return values.get(entry, {}).get(key, register.value(entry)[key])

    fixed = {register.value("A28")["session_id"].lower(): "the spec's session header (session.4)"}
    for entry, key in HEADERS:
        name = chosen(entry, key)
        if not _TOKEN.fullmatch(name):
            found.append((entry, key, f"{name!r} is not a header name"))
        elif why := _reserved(entry, key, name):
            found.append((entry, key, f"{name!r} is reserved: {why}"))
        elif key in values.get(entry, {}):  # a name the file chose: one header, one meaning
            low = name.lower()
            others = [
                f"{e} {k}" for e, k in HEADERS if (e, k) != (entry, key) and chosen(e, k).lower() == low
            ]
            if low in fixed or others:
                found.append((entry, key, f"{name!r} is also {fixed.get(low) or others[0]}"))
    if not _TOKEN.fullmatch(chosen("A02", "scheme")):
        found.append(("A02", "scheme", "not an authentication scheme name"))
    if chosen("A01", "client_auth") not in CLIENT_AUTH:
        found.append(("A01", "client_auth", f"expected one of {', '.join(CLIENT_AUTH)}"))
    if chosen("A24", "algorithm") not in ALGORITHMS:
        found.append(("A24", "algorithm", f"expected one of {', '.join(ALGORITHMS)}"))
    if int(chosen("A24", "max_skew_seconds")) <= 0:
        found.append(("A24", "max_skew_seconds", "must be a positive number"))
    ours = register.value("A05")["session_types"]
    if [str(v).lower() for v in chosen("A05", "session_types")] != ours:
        found.append(("A05", "session_types", f"the spec's three in this order, any case: {ours}"))
    strategies = chosen("A06", "strategies")
    if len(strategies) != 2 or len(set(strategies)) != 2 or not all(strategies):
        found.append(("A06", "strategies", "two distinct names: fixed's, then sliding's"))
    return found
