"""Which change of 1.2.0 a difference on the wire belongs to, and on what basis.

:func:`attribute` finds the change whose record in ``data/spec.toml`` touches a difference (its
operations, fields, card and event types, and the values of the register entries that choose for
it); :func:`basis` says whether the spec's own words explain it (``"seed"``) or the register chose
it for the version before (a register entry id); a :class:`Difference` carries both. Used by
:mod:`kit.regress.migration`.

    >>> attribute("code", "POST /accounts/{id}/events", {"sent": []}), basis(4, "code", "POST /x")
    (4, 'A27')
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

    kind: str  # path, code, header, field, event type
    where: str  # "POST /cards/{id}/close" or "webhook"
    before: str
    after: str
    change: int | None  # None: unexplained
    #: "seed" (the change's own words explain it), a register entry (its choice), or None.
    basis: str | None = None

    @property
    def chosen(self) -> bool:
        """Explained by the register's choice for the version before, not by the spec."""
        return self.change is not None and self.basis not in (None, "seed")

    def line(self) -> str:
        """One line of the migration report: the change it belongs to (``simulated 1.1.0 (A27)``
        where what the version before did is the register's reconstruction), what differs, where.
        A call the code path makes under one version only reads so, never as a removed endpoint."""
        if self.change is None:
            owner = "unexplained"
        elif self.chosen:
            owner = f"change {self.change}, simulated 1.1.0 ({self.basis})"
        else:
            owner = f"change {self.change}"
        if self.kind == "path" and {self.before, self.after} == {"called", "absent"}:
            when = "before" if self.before == "called" else "after"
            return f"{owner}: call {self.where}: made only {when} the migration"
        return f"{owner}: {self.kind} {self.where}: {self.before} → {self.after}"


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


def basis(change: int | None, kind: str, where: str) -> str | None:
    """Why a difference attributed to ``change`` is there: ``"seed"`` when the change's own words
    say what the version before had (an operation or event added, removed, deprecated or renamed,
    a header added), else the register entry that chose it for the version before: the paths the
    kit chose (A66's), a refusal of a field or card type 1.2.0 added, a change that only says
    something was "specified" (what came before is not said) and every answer's fields (A27).
    None for an unexplained difference."""
    if change is None:
        return None
    (record,) = [c for c in register.fact("change") if c["number"] == change]
    if record.get("specified") or kind == "field":
        return "A27"
    path = where.partition(" ")[2]
    for entry in record.get("chosen_by", []):
        paths = register.value(entry).get("paths") if entry != "A27" else None
        if isinstance(paths, list) and any(_template_matches(p, path) for p in paths):
            return str(entry)
    added_values = set(record.get("added", [])) & {*record.get("fields", []), *record.get("card_types", [])}
    if added_values and kind in ("code", "path"):
        return "A27"  # what 1.1.0 answered to what it did not have: the spec does not say
    return "seed"
