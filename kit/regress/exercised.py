"""Per register entry, what the traffic of a run showed: **confirmed**, **contradicted** or
**never exercised**, and the exchange that showed it.

The conformance report (:mod:`kit.regress.conformance`) holds this section beside its table; both
``kit regress`` (the wire each notebook's clients recorded) and ``kit proxy`` (the exchanges it
forwarded) give it their exchanges as :class:`Call` s, the part of each exchange the verdicts
read — names, never values: header names and the scheme word of the partner token's header,
member names of a JSON answer, a problem's code, the entries ``svc-assumptions`` named.

What an exchange says of an entry, against the dialect the run expected (its ``--choices`` file,
else the simulator's own):

- **A67**: a call at an operation's path (method and path as the dialect places it) answered
  other than 404/405 confirms the path; an operation whose every call got a 404/405 that is no
  answer of the operation (a code that stands only for ``not-found``/``method-not-allowed``, or no problem at
  all) contradicts it.
- **A68**: a JSON answer's member names in the dialect's case (and renames) confirm it, one
  spelled otherwise contradicts it (one-word names tell nothing).
- Header names: an answer carrying a header the dialect names (A18, A20's replay header, A27,
  A28) confirms it; answers of the partner's operations without a header every answer carries
  (A27, A28's request id) contradict it when none carried it. The partner token's header and
  scheme (A02) are confirmed by a call carrying them that was not answered 401, contradicted
  when every such call was. A webhook delivery carrying the signature header confirms A24's.
- **A01**: a token request answered 200 confirms its client authentication; when none was,
  one refused 400/401 contradicts it.
- **A64**: a problem whose ``code`` is one of the dialect's codes confirms it; another code
  contradicts it.
- An entry an answer named in ``svc-assumptions`` is confirmed by that exchange, unless
  something contradicted it.
- The conformance table's rows (:mod:`kit.notebook.conformity`: choice checks and contract
  rows): **differs** contradicts, **confirmed** confirms; the row names the check or operation
  where it was seen (``check``) when no exchange above showed it.

Contradicted wins over confirmed; an entry nothing spoke to is never exercised.

The JSON form (``conformance.json``'s ``verdicts``), one object per register entry, in the
register's order::

    {"id": "A67", "topic": "...", "verdict": "confirmed" | "contradicted" | "never exercised",
     "shown": "paths.get_card: answered 200",       # what showed it, in words ("" when never)
     "exchange": {"source": "05_cards.ipynb", "call": 12, "har_entry": 11,
                  "method": "GET", "path": "/cards/card_…", "status": 200} | null,
     "check": "05_cards.ipynb cell 3 — check 'reasons'"}   # only when a table row showed it

``call`` is the exchange's number in its client's wire log, ``har_entry`` its last attempt's
index in the HAR of the same exchanges (``--har``); ``path`` is the path as sent, query left
out, as the recorder redacted it.

Example::

    >>> rows = judge([], DEFAULT)
    >>> rows[0].verdict
    'never exercised'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kit import register
from kit._auth import TOKEN_PATH
from kit._dialect import DEFAULT, OPAQUE, STANDARD_NAMES, Dialect
from kit._headers import HeaderNames
from kit._wire import Exchange
from kit.notebook.conformity import Table

__all__ = ["VERDICTS", "Call", "Verdict", "calls", "data", "judge", "markdown"]

#: The three verdicts.
VERDICTS = ("confirmed", "contradicted", "never exercised")
_ROUTE_CODES = frozenset({"not-found", "method-not-allowed"})
#: Headers every answer of a partner operation carries (entry, key).
_ALWAYS = (("A28", "request_id"), ("A27", "header"))
#: Headers some answers carry (entry, key).
_SOMETIMES = (
    ("A28", "session_expires_at"),
    ("A28", "assumptions"),
    ("A20", "replayed_header"),
    ("A18", "role_header"),
)
_ENTRY = re.compile(r"\bA\d\d\b")


@dataclass(frozen=True)
class Call:
    """What the verdicts read of one exchange (see the module docstring): no value but names,
    a problem's code and the partner token's scheme word."""

    source: str
    number: int
    har_entry: int
    kind: str
    method: str
    path: str
    status: int | None
    sent: Mapping[str, str]  # request header name → its first word (a scheme), lower-case names
    answered: Mapping[str, str]  # answer header name → the entries named (svc-assumptions) or ""
    form: tuple[str, ...] = ()
    members: tuple[str, ...] = ()
    code: str | None = None
    problem: bool = False

    def exchange(self) -> dict[str, Any]:
        """The exchange, as the report names it."""
        return {
            "source": self.source,
            "call": self.number,
            "har_entry": self.har_entry,
            "method": self.method,
            "path": self.path,
            "status": self.status,
        }


def _members(node: Any, found: list[str]) -> None:
    if isinstance(node, list):
        for item in node:
            _members(item, found)
    elif isinstance(node, Mapping):
        for key, value in node.items():
            found.append(str(key))
            if key not in OPAQUE:
                _members(value, found)


def calls(exchanges: Iterable[Exchange], source: str) -> list[Call]:
    """The :class:`Call` of each recorded exchange that got an answer (``source``: where it was
    recorded, a notebook or ``kit proxy``)."""
    from kit._wire_view import har_entries

    kept = list(exchanges)
    last = {id(e): i for i, (e, _, _) in enumerate(har_entries(kept))}
    found = []
    for exchange in kept:
        if not exchange.attempts:
            continue
        attempt = exchange.attempts[-1]
        sent = {n: v.split(" ", 1)[0] for n, v in attempt.request.headers}
        got = attempt.response
        answered = {n: v for n, v in got.headers} if got is not None else {}
        members: list[str] = []
        code, problem = None, False
        if got is not None and got.body and "json" in got.mime and not got.cut:
            try:
                body = json.loads(got.body)
            except ValueError:
                body = None
            _members(body, members)
            problem = "problem" in got.mime
            if isinstance(body, Mapping) and isinstance(body.get("code"), str):
                code = body["code"]
        sent_body = attempt.request.body or ""
        form = tuple(re.findall(r"(?:^|&)([\w.]+)=", sent_body)) if "form" in attempt.request.mime else ()
        found.append(
            Call(
                source,
                exchange.index,
                last.get(id(exchange), -1),
                exchange.kind,
                exchange.method,
                exchange.path.split("?", 1)[0],
                exchange.status,
                sent,
                answered,
                form,
                tuple(dict.fromkeys(members)),
                code,
                problem,
            )
        )
    return found


@dataclass(frozen=True)
class Verdict:
    """One register entry's verdict, what showed it, the exchange (or the check) that did."""

    id: str
    topic: str
    verdict: str
    shown: str = ""
    exchange: Call | None = None
    check: str = ""

    def data(self) -> dict[str, Any]:
        """As JSON (see the module docstring)."""
        found: dict[str, Any] = {
            "id": self.id,
            "topic": self.topic,
            "verdict": self.verdict,
            "shown": self.shown,
            "exchange": self.exchange.exchange() if self.exchange is not None else None,
        }
        if self.check:
            found["check"] = self.check
        return found


class _Evidence:
    """What the exchanges said, per entry: the first contradiction and the first confirmation."""

    def __init__(self) -> None:
        self.against: dict[str, tuple[str, Call | None, str]] = {}
        self.for_: dict[str, tuple[str, Call | None, str]] = {}

    def confirm(self, entry: str, shown: str, call: Call | None = None, check: str = "") -> None:
        self.for_.setdefault(entry, (shown, call, check))

    def contradict(self, entry: str, shown: str, call: Call | None = None, check: str = "") -> None:
        self.against.setdefault(entry, (shown, call, check))


def _pattern(template: str) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)) + "$")


def _named(dialect: Dialect, name: str) -> bool | None:
    """Whether a member name is spelled as ``dialect`` spells names; ``None``: it cannot tell
    (a standard name, a one-word name)."""
    if name in STANDARD_NAMES:
        return None
    if name in dialect.renames.values():
        return True
    ours = dialect.name_from_wire(name)
    if "_" not in ours and ours == ours.lower() and name == ours:
        return None  # one word: every case spells it alike
    if dialect.name_to_wire(ours) != name:
        return False
    return "_" not in name if dialect.field_case == "camel" else name == name.lower()


def _paths(
    routes: dict[str, tuple[list[Call], list[Call]]], dialect: Dialect, call: Call, placed: Sequence[Any]
) -> None:
    """Sort ``call`` under the A67 operation whose path it was sent to: answered by the
    operation, or refused as no route (a route-level 404/405, or no problem at all)."""
    for key, method, pattern in placed:
        if method != call.method.upper() or not pattern.match(call.path) or call.status is None:
            continue
        ours = set(dialect.codes_from_wire(call.code)) if call.code else set()
        answered, refused = routes.setdefault(key, ([], []))
        if call.status in (404, 405) and (not call.problem or ours <= _ROUTE_CODES):
            refused.append(call)
        elif call.status < 500:
            answered.append(call)
        return


def _routes(ev: _Evidence, routes: Mapping[str, tuple[list[Call], list[Call]]]) -> None:
    """A67: an operation no call reached is a contradiction (a route-level refusal may also
    answer a malformed id, so one answered call of the operation outweighs it)."""
    for key, (answered, refused) in routes.items():
        if refused and not answered:
            call = refused[0]
            ev.contradict("A67", f"paths.{key}: {call.method} answered {call.status} (no such route)", call)
    for key, (answered, _) in routes.items():
        if answered:
            ev.confirm("A67", f"paths.{key}: answered {answered[0].status}", answered[0])


def _answer(ev: _Evidence, dialect: Dialect, call: Call, lacking: dict[tuple[str, str], Call]) -> None:
    for entry, key in (*_ALWAYS, *_SOMETIMES):
        name = str(dialect.chosen(entry, key)).lower()
        if name in call.answered:
            ev.confirm(entry, f"{key}: {name} in the answer", call)
        elif (entry, key) in _ALWAYS:
            lacking.setdefault((entry, key), call)
    relied = call.answered.get(HeaderNames.of(dialect).assumptions.lower(), "")
    for entry in _ENTRY.findall(relied):
        if call.status is not None and call.status < 500:
            ev.confirm(entry, "named in the answer's svc-assumptions", call)
    for name in call.members:
        spelled = _named(dialect, name)
        if spelled is False:
            ev.contradict("A68", f"member {name!r} is not spelled {dialect.field_case} case", call)
        elif spelled:
            ev.confirm("A68", f"member {name!r} as {dialect.field_case} case spells it", call)
    if call.code is not None and call.problem:
        if call.code in dialect.wire_codes:
            ev.confirm("A64", f"codes: a {call.status} problem {call.code!r}", call)
        else:
            ev.contradict("A64", f"codes: {call.code!r} is none of the codes expected", call)


def judge(found: Sequence[Call], dialect: Dialect = DEFAULT, table: Table | None = None) -> list[Verdict]:
    """Every register entry's verdict from ``found`` and the conformance ``table`` (module
    docstring), in the register's order."""
    ev = _Evidence()
    placed = [(k, dialect.methods[k], _pattern(p)) for k, p in dialect.paths.items()]
    names = HeaderNames.of(dialect)
    token_header = names.authorization.lower()
    scheme = str(dialect.chosen("A02", "scheme")).lower()
    lacking: dict[tuple[str, str], Call] = {}
    token_refused: list[Call] = []
    refused: list[Call] = []
    routes: dict[str, tuple[list[Call], list[Call]]] = {}
    for call in found:
        if call.path.startswith("/_sim") or call.status is None:
            continue
        if call.kind == "delivery":
            name = names.signature.lower()
            if name in call.sent:
                ev.confirm("A24", f"header: {name} on a webhook delivery", call)
            continue
        if call.method.upper() == "POST" and call.path.endswith(TOKEN_PATH):
            how = "basic" if call.sent.get("authorization", "").lower() == "basic" else "post"
            if call.status == 200:
                ev.confirm("A01", f"client_auth: a token request by {how} answered 200", call)
            elif call.status in (400, 401):
                token_refused.append(call)
        else:
            if call.sent.get(token_header, "").lower() == scheme:
                if call.status == 401:
                    refused.append(call)
                else:
                    ev.confirm("A02", f"header and scheme: {token_header}: {scheme} … accepted", call)
            _paths(routes, dialect, call, placed)
        _answer(ev, dialect, call, lacking)
    _routes(ev, routes)
    for (entry, key), call in lacking.items():
        if entry not in ev.for_:
            ev.contradict(entry, f"{key}: no answer carried {dialect.chosen(entry, key)}", call)
    if refused and "A02" not in ev.for_:
        ev.contradict("A02", f"every call carrying {token_header} was answered 401", refused[0])
    if token_refused and "A01" not in ev.for_:
        call = token_refused[0]
        ev.contradict("A01", f"client_auth: the token request answered {call.status}", call)
    for row in table.entries if table is not None else ():
        where = row.seen[0] if row.seen else ""
        if row.status == "differs":
            ev.contradict(row.id, row.why or "a check or contract row differs", check=where)
        elif row.status == "confirmed":
            ev.confirm(row.id, "a check confirmed it", check=where)
    rows = []
    for item in register.assumptions():
        rid, topic = str(item["id"]), str(item.get("topic", ""))
        for verdict, side in (("contradicted", ev.against), ("confirmed", ev.for_)):
            if rid in side:
                shown, showed, check = side[rid]
                rows.append(Verdict(rid, topic, verdict, shown, showed, check))
                break
        else:
            rows.append(Verdict(rid, topic, "never exercised"))
    return rows


def data(rows: Sequence[Verdict]) -> list[dict[str, Any]]:
    """The rows as ``conformance.json``'s ``verdicts``."""
    return [r.data() for r in rows]


def _md(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(rows: Sequence[Verdict]) -> str:
    """The section of ``conformance.md``: a count, then a row per entry."""
    counts = ", ".join(f"{sum(r.verdict == v for r in rows)} {v}" for v in VERDICTS)
    lines = [
        "",
        "## Per entry: what the traffic showed",
        "",
        f"{counts}. Each entry: **confirmed** or **contradicted** by the exchange named "
        "(source, call number, HAR entry index, method, path as sent, status) or the check named; "
        "**never exercised** when nothing this run sent or received spoke to it.",
        "",
        "| entry | topic | verdict | what showed it | exchange |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        verdict = f"**{r.verdict}**" if r.verdict == "contradicted" else r.verdict
        if r.exchange is not None:
            c = r.exchange
            where = (
                f"{c.source} call {c.number} (HAR entry {c.har_entry}): {c.method} `{c.path}` → {c.status}"
            )
        else:
            where = r.check
        lines.append("| " + " | ".join(_md(x) for x in (r.id, r.topic, verdict, r.shown, where)) + " |")
    return "\n".join(lines) + "\n"
