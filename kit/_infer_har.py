"""``kit choices infer --har FILE…``: a dialect file from recorded exchanges (HAR 1.2).

A HAR of a partner's back end talking to the sandbox, one ``kit regress --har`` wrote or one a
proxy recorded. Paths come from the calls' methods and the ids that flow from one answer into a
later call's path: a path segment that an answer gave as the value of a member ``accountId`` is
the parameter ``{account_id}`` (read through the case the bodies show); each template is then
matched to A67's keys by its method, parameters and the members its bodies carry, against the
simulator's own document (:mod:`kit._infer`). Names and case come from the bodies, header names
from where they were sent and answered, A02's header and scheme from the partner calls, A01 from
the token request, problem codes from the problems answered.

Secrets never reach the file: it holds only names (members, headers), path templates, counts
and problem codes of a code's shape. Header and body values are read to classify, never
written; query strings are dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from kit import _codes, register
from kit._dialect import OPAQUE, snake
from kit._headers import HEADERS
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
    text,
)
from kit._infer_openapi import footprints, operations, reference
from kit._jose import b64decode

__all__ = ["Exchange", "infer", "infer_text", "load"]

#: Headers of HTTP itself: never a dialect's.
_GENERIC = frozenset(
    {
        "host", "accept", "accept-encoding", "accept-language", "connection", "user-agent", "content-length",
        "content-type", "content-encoding", "date", "server", "cookie", "set-cookie", "transfer-encoding",
        "www-authenticate", "location", "cache-control", "vary", "etag", "keep-alive", "allow", "retry-after",
    }
)  # fmt: skip
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9_-]{0,19}) \S")
_CODE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


@dataclass
class Exchange:
    """One recorded call: method, path (no query), bodies as JSON data, headers as sent."""

    method: str
    path: str
    request: Any
    status: int
    answer: Any
    sent: dict[str, str] = field(repr=False)
    answered: dict[str, str] = field(repr=False)
    names: dict[str, str] = field(default_factory=dict)  # header name, lower case → as written


def _json(text: Any, mime: str) -> Any:
    if not isinstance(text, str) or not text or "json" not in mime:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def load(paths: Sequence[str]) -> list[Exchange]:
    """The exchanges of the HAR files at ``paths``, in order.

    Raises:
        OSError: a file could not be read.
        ValueError: a file is not a HAR (no ``log.entries``).
    """
    found = []
    for path in paths:
        har = json.loads(Path(path).read_text(encoding="utf-8"))
        entries = har.get("log", {}).get("entries") if isinstance(har, dict) else None
        if not isinstance(entries, list):
            raise ValueError(f"{path}: not a HAR file (no log.entries)")
        for entry in entries:
            found.append(_exchange(entry))
    return found


def _exchange(entry: Mapping[str, Any]) -> Exchange:
    rq, rs = entry.get("request", {}), entry.get("response", {})
    post = rq.get("postData") or {}
    mime = str(post.get("mimeType", ""))
    request = _json(post.get("text"), mime)
    if request is None and "form" in mime:
        request = dict(parse_qsl(str(post.get("text", "")))) or {
            p["name"]: "" for p in post.get("params", ())
        }
    content = rs.get("content") or {}
    names: dict[str, str] = {}
    sent, answered = {}, {}
    for h in rq.get("headers", ()):
        names[h["name"].lower()] = names.get(h["name"].lower(), h["name"])
        sent[h["name"].lower()] = str(h.get("value", ""))
    for h in rs.get("headers", ()):
        names.setdefault(h["name"].lower(), h["name"])
        answered[h["name"].lower()] = str(h.get("value", ""))
    return Exchange(
        method=str(rq.get("method", "GET")).upper(),
        path=urlsplit(str(rq.get("url", ""))).path or "/",
        request=request,
        status=int(rs.get("status", 0)),
        answer=_json(content.get("text"), str(content.get("mimeType", ""))),
        sent=sent,
        answered=answered,
        names=names,
    )


def _members(data: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(data, dict):
        for k, v in data.items():
            yield str(k), v
            if k not in OPAQUE:
                yield from _members(v)
    elif isinstance(data, list):
        for v in data:
            yield from _members(v)


def _tree(data: Any, into: Tree | None = None) -> Tree:
    into = {} if into is None else into
    if isinstance(data, list):
        for v in data:
            _tree(v, into)
    elif isinstance(data, dict):
        for k, v in data.items():
            sub = into.setdefault(str(k), {})
            if k not in OPAQUE:
                _tree(v, sub)
    return into


def _templates(exchanges: Sequence[Exchange], kit_name: Any) -> list[str]:
    """Each exchange's path template: a segment an earlier answer gave as a member's value is
    that member's parameter (``accountId`` → ``{account_id}``)."""
    given: dict[str, str] = {}
    out = []
    for ex in exchanges:
        parts = []
        for segment in ex.path.split("/"):
            name = given.get(segment)
            parts.append(f"{{{name}}}" if name else segment)
        out.append("/".join(parts))
        if 200 <= ex.status < 300:
            for member, value in _members(ex.answer):
                if isinstance(value, str) and len(value) >= 4 and "/" not in value:
                    name = kit_name(member)
                    if name.endswith("_id"):
                        given.setdefault(value, name)
    return out


#: An operation seen, and its exchanges.
_Seen = tuple[Op, list["Exchange"]]


def _shape(template: str) -> str:
    return re.sub(r"\{[^{}]*\}", "{}", template)


def _ops(
    exchanges: Sequence[Exchange], templates: Sequence[str]
) -> dict[tuple[str, str], tuple[Op, list[Exchange]]]:
    from kit._infer import params_of

    out: dict[tuple[str, str], _Seen] = {}
    for ex, template in zip(exchanges, templates, strict=True):
        op, seen = out.setdefault(
            (ex.method, template), (Op(ex.method, template, params_of(template), {}, {}, {}), [])
        )
        seen.append(ex)
        if 200 <= ex.status < 300:
            _tree(ex.request, op.request)
            _tree(ex.answer, op.answer)
    return out


def _har_footprints(keyed_ops: Mapping[str, list[Exchange]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for key, exchanges in keyed_ops.items():
        for ex in exchanges:
            for name in ex.sent:
                if name not in _GENERIC:
                    out.setdefault(name, set()).add(f"{key} request")
            for name in ex.answered:
                if name not in _GENERIC:
                    out.setdefault(name, set()).add(f"{key} answer")
    return out


def _coarse(prints: Mapping[str, set[str]], keys: Iterable[str]) -> dict[str, set[str]]:
    """A document's footprints as traffic can show them: request or answer, of ``keys`` only."""
    wanted = set(keys)
    out: dict[str, set[str]] = {}
    for name, places in prints.items():
        coarse = {f"{p.split()[0]} {'request' if p.endswith('request') else 'answer'}" for p in places}
        coarse = {p for p in coarse if p.split()[0] in wanted}
        if coarse:
            out[name] = coarse
    return out


def _values_break_ties(inf: Inference, exchanges: Sequence[Exchange], names: Mapping[str, str]) -> None:
    """A27's and A28's answer headers ride on the same answers: their values tell them apart
    (read, never written): a version, a list of register entries, a time, an id new on every
    answer (a recorded retry may repeat one). A header only one test fits settles a tie, or a
    key its places could not."""
    values: dict[str, list[str]] = {}
    for ex in exchanges:
        for name, value in ex.answered.items():
            if name not in _GENERIC:
                values.setdefault(name, []).append(value)
    versions = {*register.value("A27")["versions"], register.value("A27")["version"]}
    tests = (
        ("A27", "header", lambda vs: all(v in versions for v in vs)),
        ("A28", "assumptions", lambda vs: all(re.fullmatch(r"A\d\d(\s*,\s*A\d\d)*", v) for v in vs)),
        ("A28", "session_expires_at", lambda vs: all(re.match(r"\d{4}-\d\d-\d\dT\d\d:", v) for v in vs)),
        ("A28", "request_id", lambda vs: len(vs) > 1 and len(set(vs)) >= 0.9 * len(vs)),
    )
    taken = {str(v).lower() for e in inf.found.values() for v in e.values() if isinstance(v, str)}
    for entry, key, test in tests:
        if key in inf.found.get(entry, {}):
            continue
        fits = [n for n, vs in values.items() if n not in taken and test(vs)]
        if len(fits) != 1:
            continue
        inf.unsure[:] = [u for u in inf.unsure if not u.startswith(f"{entry} {key}: a tie")]
        inf.put(entry, key, names.get(fits[0], fits[0]), "the only header whose values fit it (likely)")
        taken.add(fits[0])


def _auth(inf: Inference, partner: Sequence[Exchange], token: Sequence[Exchange], session: str) -> None:
    counts: dict[tuple[str, str], int] = {}
    for ex in partner:
        for name, value in ex.sent.items():
            found = _SCHEME.match(value)
            if found and name not in _GENERIC - {"authorization"} and name != session:
                counts[(name, found.group(1))] = counts.get((name, found.group(1)), 0) + 1
    if counts and partner:
        (name, scheme), n = max(counts.items(), key=lambda item: item[1])
        if n >= 0.8 * len(partner):
            names = partner[0].names
            inf.put(
                "A02", "header", names.get(name, name), f"sent on {n} of {len(partner)} partner calls (sure)"
            )
            inf.put("A02", "scheme", scheme, f"the word before the token on {n} calls (sure)")
    for ex in token:
        basic = ex.sent.get("authorization", "").lower().startswith("basic ")
        form = isinstance(ex.request, dict) and {"client_id", "client_secret"} <= set(ex.request)
        if basic != form:
            auth = "basic" if basic else "post"
            inf.put("A01", "client_auth", auth, "the token request's client credentials (likely)")
            return


def _codes_seen(inf: Inference, exchanges: Sequence[Exchange], key_of: Mapping[int, str]) -> None:
    known = _codes.KNOWN
    unknown: dict[str, set[str]] = {}
    for i, ex in enumerate(exchanges):
        code = ex.answer.get("code") if isinstance(ex.answer, dict) and ex.status >= 400 else None
        if isinstance(code, str) and _CODE.fullmatch(code) and code not in known:
            unknown.setdefault(code, set()).add(f"{key_of.get(i, ex.method)} {ex.status}")
    for code, where in sorted(unknown.items()):
        inf.unsure.append(f"A64 a code the kit does not know: {code!r} ({', '.join(sorted(where))})")


_JWS = re.compile(r"([A-Za-z0-9_-]+)\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+")
_JWS_SHOWN = re.compile(r"<JWS alg=([A-Za-z0-9]+)\b")


def _alg(value: str) -> str | None:
    """The ``alg`` of a JWS (compact, or as the kit's recorder shows one), else ``None``."""
    shown = _JWS_SHOWN.match(value)
    if shown:
        return shown.group(1)
    compact = _JWS.fullmatch(value.strip())
    if not compact:
        return None
    try:
        head = json.loads(b64decode(compact.group(1)))
    except ValueError:
        return None
    alg = head.get("alg") if isinstance(head, dict) else None
    return alg if isinstance(alg, str) and re.fullmatch(r"[A-Za-z0-9]{2,16}", alg) else None


def _delivery(ex: Exchange) -> bool:
    """Whether ``ex`` is a webhook delivery (the sandbox calling the partner: a POST of an event,
    an ``id`` and a dotted ``type``), not a call to the API."""
    body = ex.request if isinstance(ex.request, dict) else {}
    return ex.method == "POST" and "id" in body and "." in str(body.get("type", ""))


def _signature(inf: Inference, exchanges: Sequence[Exchange]) -> None:
    """A24: the header carrying a JWS on the webhook deliveries recorded (a POST of an event:
    an ``id`` and a dotted ``type``), and its algorithm; the signature itself is never written."""
    found: dict[tuple[str, str], int] = {}
    deliveries = 0
    for ex in filter(_delivery, exchanges):
        deliveries += 1
        for name, value in ex.sent.items():
            alg = _alg(value) if name not in _GENERIC else None
            if alg:
                found[(ex.names.get(name, name), alg)] = found.get((ex.names.get(name, name), alg), 0) + 1
    if len(found) == 1:
        ((name, alg), n) = next(iter(found.items()))
        inf.put("A24", "header", name, f"a JWS on {n} of {deliveries} webhook deliveries recorded (sure)")
        inf.put("A24", "algorithm", alg, "the JWS header's alg (sure)")
    elif found:
        inf.unsure.append(f"A24 header: a tie between {', '.join(sorted({n for n, _ in found}))}")


def infer(exchanges: Sequence[Exchange], ref: Mapping[str, Any] | None = None) -> Inference:
    """What ``exchanges`` show of the dialect, against the simulator's document ``ref``."""
    ref = ref if ref is not None else reference()
    inf = Inference()
    every, exchanges = exchanges, [ex for ex in exchanges if not _delivery(ex)]
    names = [m for ex in exchanges for body in (ex.request, ex.answer) for m, _ in _members(body)]
    case, why = case_of(names)
    inf.put("A68", "field_case", case, f"in the bodies: {why}")
    spell = snake if case == "camel" else str
    templates = _templates(exchanges, spell)
    grouped = _ops(exchanges, templates)
    fixed = {(m, _shape(p)): k for (m, p), k in fixed_keys().items()}
    ours = {(m, _shape(p)) for m, p in fixed_keys()}
    free = [op for (m, t), (op, _) in grouped.items() if (m, _shape(t)) not in ours]
    ref_ops = operations(ref)
    matched = match_paths(inf, ref_ops, free, spell)
    by_op = {id(op): key for key, op in matched.items()}
    keyed_ex: dict[str, list[Exchange]] = {}
    theirs: dict[str, Op] = dict(matched)
    for (m, t), (op, seen) in grouped.items():
        key = by_op.get(id(op)) or fixed.get((m, _shape(t)))
        if key:
            keyed_ex.setdefault(key, []).extend(seen)
            theirs.setdefault(key, op)
    mine = keyed(ref_ops)
    both = {k: (mine[k], theirs[k]) for k in theirs if k in mine}
    infer_renames(inf, both, case)
    header_names = {n: w for ex in exchanges for n, w in ex.names.items()}
    ref_prints = _coarse(footprints({k: r for k, (r, _) in both.items()}, ref), keyed_ex)
    match_headers(inf, ref_prints, _har_footprints(keyed_ex), header_names)
    _values_break_ties(inf, exchanges, header_names)
    partner = [
        ex for k, seen in keyed_ex.items() if k not in ("access_token", "legacy_access_token") for ex in seen
    ]
    session = HEADERS.session_id.lower()
    _auth(inf, partner, keyed_ex.get("access_token", []), session)
    key_of = {i: k for k, seen in keyed_ex.items() for ex in seen for i, e in enumerate(exchanges) if e is ex}
    _codes_seen(inf, exchanges, key_of)
    _signature(inf, every)
    return inf


def infer_text(paths: Sequence[str]) -> str:
    """The dialect file the HAR files at ``paths`` give (see the module docstring).

    Raises:
        OSError, ValueError: a file could not be read or is not a HAR.
    """
    source = ", ".join(Path(p).name for p in paths)
    return text(infer(load(paths)), f"recorded exchanges ({source})")
