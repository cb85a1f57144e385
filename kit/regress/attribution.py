"""Which change of 1.2.0 a difference on the wire belongs to, and on what basis.

:func:`attribute` finds the change whose record in ``data/spec.toml`` touches a difference (its
operations, fields, card and event types, and the values of the register entries that choose for
it); :func:`basis` says which register entries give its two sides where the spec's words do
not (the spec's change list says what changed; it never shows the version before); a
:class:`Difference` carries both. Both read the kit's spelling, in which
:mod:`kit.regress.migration` records a dialect's wire through the dialect itself
(:class:`kit._dialect.Dialect`).

    >>> attribute("code", "POST /accounts/{id}/savings/close", {"sent": []})
    5
    >>> basis(5, "code", "POST /accounts/{id}/savings/close", "200", "404 endpoint-removed")
    ('A65', 'A29')
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kit import register

__all__ = ["Difference", "attribute", "basis"]


@dataclass(frozen=True)
class Difference:
    """One difference on the wire between the two versions, and the change it belongs to."""

    kind: str  # calls, code, header, field, event type
    where: str  # "POST /cards/{id}/close" or "webhook"
    before: str
    after: str
    change: int | None  # None: unexplained
    #: The register entry that gives the version before's side (the spec never shows that
    #: version), or None where the spec's words give it; likewise for the version after.
    before_by: str | None = None
    after_by: str | None = None
    #: A call count of the harness's own calls, or a webhook one of them caused, not the code's:
    #: the harness's step ("harness: the client's token"), shown after the line; "" for the code's.
    made_by: str = ""

    @property
    def chosen(self) -> bool:
        """A wire detail of it (either side) is a register entry's, not the spec's words."""
        return self.change is not None and (self.before_by, self.after_by) != (None, None)

    def line(self, versions: tuple[str, str] = ("1.1.0", "1.2.0-20221215")) -> str:
        """One line of the migration report: where, what differs, and the register entries that
        give each side (``[1.1.0: A65; 1.2.0: A29]``) where the spec does not."""
        what = {"calls": "calls", "code": "answer", "event type": "event"}.get(self.kind, self.kind)
        before, after = self.before, self.after
        if self.kind == "header":  # "name: value" on each side: the name once
            what = f"header {before.partition(': ')[0]}:"
            before, after = before.partition(": ")[2], after.partition(": ")[2]
        names = [v.split("-")[0] for v in versions]  # 1.2.0-20221215 → 1.2.0
        by = [f"{v}: {e}" for v, e in zip(names, (self.before_by, self.after_by), strict=True) if e]
        owner = "unexplained" if self.change is None else f"change {self.change}"
        made = f" ({self.made_by})" if self.made_by else ""
        given = f" [{'; '.join(by)}]" if by else ""
        return f"{owner}: {self.where}: {what} {before} → {after}{made}{given}"


def _change_tokens() -> dict[int, set[str]]:
    """Per change: what it touches, as words a difference can carry (operations, paths, fields,
    card and event types, headers), from its record and the values of the entries that choose."""
    tokens: dict[int, set[str]] = {}
    for change in register.fact("change"):
        words: set[str] = set()
        for op in [*change["operations"], *change["previously"].values(), *change["previously"]]:
            words.add(op)
        words.update(change["fields"], change["card_types"], change["event_types"])
        for entry in change["chosen_by"]:
            if entry == "A27":
                continue  # the versions entry chooses for every change
            value = register.value(entry)
            for key in ("paths", "role_header"):
                item = value.get(key)
                words.update(item if isinstance(item, list) else [item] if item else [])
        tokens[change["number"]] = {w for w in words if isinstance(w, str)}
    return tokens


def _template_matches(template: str, path: str) -> bool:
    pattern = re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(template))
    return re.fullmatch(pattern, path.replace("{id}", "x")) is not None


def attribute(kind: str, where: str, call: Mapping[str, Any]) -> int | None:
    """The number of the change a difference belongs to, or None when none of the change
    records touches it."""
    method, _, path = where.partition(" ")
    for number, words in _change_tokens().items():
        if kind == "event type":
            if call.get("event") in words:
                return number
            continue
        if kind == "header" and call.get("header") in words:
            return number
        for word in words:
            op_method, _, op_path = word.partition(" ")
            if op_path.startswith("/") and op_method == method and _template_matches(op_path, path):
                return number
            if word.startswith("/") and _template_matches(word, path):
                return number
        if set(call.get("sent", [])) & words or call.get("field") in words:
            return number
        if kind == "field" and set(str(call.get("field", "")).split("_")) & words:
            return number  # close_reason: the card's field for the reason change 2 added
    return None


def _route(entry: Mapping[str, Any], method: str, path: str, answer: str) -> bool:
    """Whether ``entry`` covers this answer (``"404 endpoint-removed"`` or ``"200"``) of this call."""
    covers = entry.get("covers", {})
    if answer in covers.get("codes", []):
        return True
    for route in covers.get("routes", []):
        op_method, op_path, status = route.split(" ")
        if op_method == method and status == answer.split(" ")[0] and _template_matches(op_path, path):
            return True
    return False


def _names(entry: Mapping[str, Any], name: str) -> bool:
    """Whether ``entry`` chooses the header or field ``name`` (a value or key of it, or a word of
    its choice)."""
    value = entry.get("value", {})
    if name in value.values() or any(key.split("_")[0] == name for key in value):
        return True
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", entry["choice"], re.IGNORECASE) is not None


def basis(
    change: int | None, kind: str, where: str, before: str, after: str, status: int | None = None
) -> tuple[str | None, str | None]:
    """The register entries that give a difference's two sides: ``(before_by, after_by)``, None
    on a side the spec's words give (or that has nothing: an absent header, no call).

    The spec never shows the version before, so its answers, fields and the calls this code
    made because of them are the register's: an entry about that version covering the answer
    (A65's savings close, A66's Refer-a-Friend paths), else A27 (the kit's version before).
    What the change list names on both sides — an operation replaced, an event renamed or
    added, a header or event absent before something was added — is the spec's. The version
    after's answer, header or field is the entry that chooses it, where the spec leaves it open
    (A29's 404 endpoint-removed, A03's Deprecation, A18's role header); for a header or field,
    first an entry that gives the answer it is in (``status``, of the call at ``where``: A35's
    card representation for ``close_reason`` in a card answer) and names it. None for an
    unexplained difference."""
    if change is None or kind == "event type":
        return None, None
    (record,) = [c for c in register.fact("change") if c["number"] == change]
    method, _, path = where.partition(" ")
    if kind == "calls":
        # an endpoint the change added, removed, deprecated or replaced: the spec says who calls it
        ops = [*record["added"], *record["removed"], *record["deprecated"], *record["previously"].items()]
        ops = [o for op in ops for o in (op if isinstance(op, tuple) else (op,))]
        named = any(
            op.partition(" ")[0] == method and _template_matches(op.partition(" ")[2], path) for op in ops
        )
        return (None if named else "A27"), None
    entries = [e for e in register.assumptions() if e["id"] != "A27"]
    before_only = [e for e in entries if "1.1.0" in e["topic"]]
    later = [e for e in entries if e not in before_only]
    if kind == "code":
        old = next((e["id"] for e in before_only if _route(e, method, path, before)), "A27")
        new = next((e["id"] for e in later if _route(e, method, path, after)), None)
        return old, new
    name = (before if before != "absent" else after).split(":")[0]
    naming = [e for e in later if _names(e, name)]
    giving = [e for e in naming if status is not None and _route(e, method, path, str(status))]
    new = None if after.endswith("absent") else next((e["id"] for e in [*giving, *naming]), None)
    if kind == "field":
        return "A27", new  # the version before's answers: the spec shows none
    return (None if before.endswith("absent") else "A27"), new
