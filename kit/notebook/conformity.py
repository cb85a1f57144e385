"""Conformance: which of the register's choices a server confirmed, which it made otherwise,
which no call could tell, and the spec's statements checked — one table.

Every register entry (``data/assumptions.toml``, in its order) gets a status: **confirmed** (a
choice check of it passed), **differs** (a choice check or a contract row departed from it: what
the simulator chooses, what the server answered, where it was seen) or **not observed**, with
why (a check skipped for a need the server lacks; a check that stopped at another entry's
difference first; no check in the notebooks run). Every spec statement a check named, or
contract drift departed from, is **passed** or **violated** (or **not checked**: skipped).

The rows are built from :class:`Seen` records — one per check outcome or contract row — by
:func:`build`: ``kit regress`` makes them from the executed notebooks
(:mod:`kit.regress.conformance`: ``OUT/conformance.md`` and ``.json``), :func:`conformance`
from what this kernel's companion recorded. Values come only from comparisons a notebook made
with ``show=True`` (codes, statuses, id formats, lifetimes, names) and contract rows (field and
header names, JSON types): never a secret nor a persona's data.

Example::

    >>> table = build([Seen("A15", "choice", "passed", "05 cell 3"), Seen("card.1", "spec", "passed", "05")])
    >>> table.first_line()                                    # doctest: +ELLIPSIS
    '... entries: 1 confirmed, 0 differ, ... not observed; 1 seed statements checked, 0 violated'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kit import register
from kit._choices import EMPTY, Overlay
from kit._drift import Drift
from kit._operations import OPERATIONS
from kit.notebook.basis import expectation
from kit.notebook.companion import COMPANION
from kit.notebook.observe import Observation

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "COLUMNS",
    "RESOURCES",
    "Row",
    "Seen",
    "Table",
    "build",
    "conformance",
    "derived",
    "of_check",
    "of_drift",
    "shown",
]

#: The DataFrame's columns (:meth:`Table.frame`).
COLUMNS = ["id", "kind", "status", "simulator", "server", "where", "why"]
_VALUE_CHARS = 120
_NO_CHECK = "the seed leaves it to the server and no call in this run showed it"


@dataclass(frozen=True)
class Seen:
    """One thing a run saw of a register entry or a spec statement (``basis``): a check's
    outcome (``kind`` ``choice`` or ``spec``) or a contract row (``contract``), ``where`` (the
    notebook, cell and check or operation), its ``reason``, and its :class:`Observation` s."""

    basis: str
    kind: str
    outcome: str
    where: str
    reason: str = ""
    observed: tuple[Observation, ...] = ()


@dataclass(frozen=True)
class Row:
    """One entry or statement: ``status``, ``why`` (not observed / not checked; for a
    difference without observations, what the server answered in words), the observations of a
    difference, and where each difference was seen."""

    id: str
    kind: str
    topic: str
    status: str
    why: str = ""
    observed: tuple[Observation, ...] = ()
    seen: tuple[str, ...] = ()

    def data(self) -> dict[str, Any]:
        """As JSON (the row of ``conformance.json``)."""
        found: dict[str, Any] = {"id": self.id, "topic": self.topic, "status": self.status}
        if self.why:
            found["why"] = self.why
        if self.observed:
            found["observed"] = [o.data() for o in self.observed]
        if self.seen:
            found["seen"] = list(self.seen)
        return found


def shown(value: Any, chosen: Any = None) -> str:
    """A value for a report: JSON, short; of a table only the items that differ from ``chosen``'s.

    Example::

        >>> shown({"a": "x", "b": "y"}, {"a": "x", "b": "z"})
        '{"b": "y"}'
    """
    if isinstance(value, Mapping) and isinstance(chosen, Mapping):
        value = {k: v for k, v in value.items() if chosen.get(k) != v}
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 1] + "…"


@dataclass(frozen=True)
class Table:
    """The entries (register order) and the spec statements seen (sorted by id)."""

    entries: tuple[Row, ...]
    statements: tuple[Row, ...] = field(default=())

    def count(self, status: str, rows: Sequence[Row] | None = None) -> int:
        return sum(r.status == status for r in (self.entries if rows is None else rows))

    def first_line(self) -> str:
        """``N entries: C confirmed, D differ, U not observed; S seed statements checked, V violated``."""
        checked = [r for r in self.statements if r.status in ("passed", "violated")]
        return (
            f"{len(self.entries)} entries: {self.count('confirmed')} confirmed, {self.count('differs')} "
            f"differ, {self.count('not observed')} not observed; {len(checked)} seed statements checked, "
            f"{self.count('violated', checked)} violated"
        )

    def data(self) -> dict[str, Any]:
        """As JSON: the first line, the entries and the statements."""
        return {
            "summary": self.first_line(),
            "entries": [r.data() for r in self.entries],
            "statements": [r.data() for r in self.statements],
        }

    def markdown(self, title: str = "Conformance") -> str:
        """``conformance.md``: the first line, a table of entries, a table of statements."""
        lines = [
            self.first_line(),
            "",
            f"# {title}",
            "",
            "Each register entry (`data/assumptions.toml`): **confirmed** (observed, as the simulator "
            "chooses), **differs** (observed otherwise) or **not observed** (and why).",
            "",
            "| entry | topic | status | the simulator chooses | this server answered | where | why |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in self.entries:
            simulator, server, why = _columns(r)
            cells = (r.id, r.topic, _bold(r.status), simulator, server, "; ".join(r.seen[:3]), why)
            lines.append("| " + " | ".join(_md(c) for c in cells) + " |")
        lines += ["", "## Seed statements", ""]
        if self.statements:
            lines += ["| statement | status | where | why |", "|---|---|---|---|"]
            for r in self.statements:
                row = (r.id, _bold(r.status), "; ".join(r.seen[:3]), r.why)
                lines.append("| " + " | ".join(_md(c) for c in row) + " |")
        else:
            lines.append("No check named a spec statement.")
        return "\n".join(lines) + "\n"

    def frame(self) -> pd.DataFrame:
        """The same table as a DataFrame (columns :data:`COLUMNS`): entries, then statements."""
        import pandas as pd

        rows = []
        for r in (*self.entries, *self.statements):
            simulator, server, why = _columns(r)
            rows.append([r.id, r.kind, r.status, simulator, server, "; ".join(r.seen[:3]), why])
        return pd.DataFrame(rows, columns=COLUMNS)


def _columns(r: Row) -> tuple[str, str, str]:
    """What the simulator chooses, what the server answered (in words when no value was
    observed), and why (for a row not observed)."""
    simulator = "; ".join(f"{o.key}: {shown(o.chosen, o.answered)}" for o in r.observed)
    server = "; ".join(f"{o.key}: {shown(o.answered, o.chosen)}" for o in r.observed)
    if r.status == "differs":
        return simulator, server or r.why, ""
    return simulator, server, r.why


def _bold(status: str) -> str:
    return f"**{status}**" if status in ("differs", "violated") else status


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


_NEED = re.compile(r"^(needs [^(,;]+?)\s*(?:[(,;]|$)")


def _short(reason: str) -> str:
    """A skip's reason, its first clause: ``needs the simulator's control plane``."""
    found = _NEED.match(reason)
    return found.group(1) if found else reason[:100]


def _merged(observed: Iterable[Observation]) -> tuple[Observation, ...]:
    """One observation per key (the first value seen; a table's items merged)."""
    found: dict[str, Observation] = {}
    for o in observed:
        first = found.get(o.key)
        if first is None:
            found[o.key] = o
        elif isinstance(first.answered, list) and isinstance(o.answered, list):  # items left out
            items = [x for x in first.answered if x in o.answered]
            found[o.key] = Observation(o.entry, o.key, first.chosen, items)
        elif isinstance(first.answered, Mapping) and isinstance(o.answered, Mapping):
            table = {**o.answered, **{k: v for k, v in first.answered.items() if first.chosen.get(k) != v}}
            found[o.key] = Observation(o.entry, o.key, first.chosen, table)
    return tuple(found.values())


def _entry_row(entry: Mapping[str, Any], seen: Sequence[Seen], elsewhere: Sequence[str]) -> Row:
    """One register entry's row from what was seen of it (see the module docstring)."""
    rid, topic = str(entry["id"]), str(entry.get("topic", ""))
    differs = [s for s in seen if s.outcome == "differs"]
    if differs:
        observed = _merged(o for s in differs for o in s.observed if o.entry == rid)
        told = "" if observed else differs[0].reason  # what the server answered, in words
        return Row(rid, "entry", topic, "differs", told, observed, _where(differs))
    if any(s.outcome == "passed" for s in seen):
        return Row(rid, "entry", topic, "confirmed", seen=_where([s for s in seen if s.outcome == "passed"]))
    skipped = [s for s in seen if s.outcome == "skipped"]
    if skipped:
        return Row(rid, "entry", topic, "not observed", why=_short(skipped[0].reason), seen=_where(skipped))
    stopped = [s for s in seen if s.outcome == "stopped"]
    if stopped:
        why = f"its check stopped at another entry's difference first ({stopped[0].reason})"
        return Row(rid, "entry", topic, "not observed", why=why, seen=_where(stopped))
    if seen:  # failed: the notebook stopped there
        return Row(rid, "entry", topic, "not observed", why="its check failed", seen=_where(seen))
    if elsewhere:
        why = f"checked in {', '.join(elsewhere[:3])}, not run here"
        return Row(rid, "entry", topic, "not observed", why=why)
    return Row(rid, "entry", topic, "not observed", why=_NO_CHECK)


def _where(seen: Sequence[Seen]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s.where for s in seen))


def _statement_row(sid: str, seen: Sequence[Seen]) -> Row:
    failed = [s for s in seen if s.outcome in ("failed", "violated")]
    if failed:
        return Row(sid, "statement", "", "violated", why=failed[0].reason[:200], seen=_where(failed))
    passed = [s for s in seen if s.outcome == "passed"]
    if passed:
        return Row(sid, "statement", "", "passed", seen=_where(passed))
    return Row(sid, "statement", "", "not checked", why=_short(seen[0].reason), seen=_where(seen))


#: The representation an operation answers with: a required field missing from its body is
#: one of A62's optional fields (``resource.field``) not sent.
RESOURCES: Mapping[str, str] = {
    f"{method} {op.path}": op.resource for op in OPERATIONS if op.resource for method in op.methods
}
_MISSING = re.compile(r"^(\w+ \S+): body(?:\[\d+\])?\.(\w+): expected present \(required\), got missing")


def derived(s: Seen, expected: Overlay | None = None) -> tuple[tuple[Observation, ...], bool]:
    """What one record tells of entries besides its own, against the values ``expected`` (an
    expectation overlay, else the register's): ids seen as UUIDs where A41 chose prefixes are
    A60's ``uuid``; a required field missing from a body is an optional field of A62 not sent.
    The flag says the record is no difference at all (a field the expectation does not send)."""
    value = (expected or EMPTY).value
    found: list[Observation] = []
    for o in s.observed:
        values = o.answered.values() if isinstance(o.answered, Mapping) else [o.answered]
        if o.entry == "A41" and "UUID" in values and value("A60")["id_format"] != "uuid":
            found.append(Observation("A60", "id_format", value("A60")["id_format"], "uuid"))
    missing = _MISSING.match(s.reason) if s.kind == "contract" else None
    if missing:
        sent = list(value("A62")["sent"])
        item = f"{RESOURCES.get(missing.group(1), '')}.{missing.group(2)}"
        if item in register.value("A62")["sent"] and item not in sent:
            return (), True  # expected: this server does not send it
        if item in sent:
            found.append(Observation("A62", "sent", sent, [x for x in sent if x != item]))
    return tuple(found), False


def build(
    seen: Iterable[Seen],
    *,
    elsewhere: Mapping[str, Sequence[str]] | None = None,
    expected: Overlay | None = None,
) -> Table:
    """The table of what was ``seen``; ``elsewhere`` names, per entry, the notebooks not run
    that check it (so "not observed" can say that running them would help); ``expected`` is the
    expectation overlay the checks compared with (:func:`derived`).

    A check whose observations all name other entries (a check of A15 that met A64's codes)
    counts as a difference of those entries; its own entry is then "not observed" unless
    another check or row tells.

    Raises:
        Nothing.
    """
    by_basis: dict[str, list[Seen]] = {}
    for s in seen:
        extra, explained = derived(s, expected)
        if explained:
            continue
        if extra:
            s = Seen(s.basis, s.kind, s.outcome, s.where, s.reason, (*s.observed, *extra))
        if s.kind == "spec" or (s.kind == "contract" and s.basis[:1] != "A"):
            outcome = "violated" if s.kind == "contract" else s.outcome
            by_basis.setdefault(s.basis, []).append(Seen(s.basis, "spec", outcome, s.where, s.reason))
            continue
        named = list(dict.fromkeys(o.entry for o in s.observed))
        if s.outcome == "differs" and named and s.basis not in named:
            for entry in named:
                by_basis.setdefault(entry, []).append(s)
            if s.kind == "contract":
                continue
            stopped = Seen(s.basis, s.kind, "stopped", s.where, ", ".join(named))
            by_basis.setdefault(s.basis, []).append(stopped)
            continue
        by_basis.setdefault(s.basis, []).append(s)
        for entry in named:
            if entry != s.basis:
                by_basis.setdefault(entry, []).append(s)
    rows = tuple(
        _entry_row(entry, by_basis.get(str(entry["id"]), []), (elsewhere or {}).get(str(entry["id"]), ()))
        for entry in register.assumptions()
    )
    ids = {str(e["id"]) for e in register.assumptions()}
    statements = tuple(_statement_row(sid, by_basis[sid]) for sid in sorted(by_basis) if sid not in ids)
    return Table(rows, statements)


def of_check(check: Any, where: str) -> Seen | None:
    """The record of one check outcome (a :class:`~kit.notebook.CheckOutcome` or a regression
    run's check: ``name``, ``outcome``, ``reason``, ``kind``, ``basis``, ``observed``); ``None``
    for a check that names no basis."""
    if not check.basis:
        return None
    observed = tuple(o for o in map(Observation.of, check.observed) if o is not None)
    return Seen(
        check.basis, check.kind, check.outcome, f"{where} — check {check.name!r}", check.reason, observed
    )


def of_drift(drift: Drift, where: str) -> Seen | None:
    """The record of one contract row (drift from a statement, or a difference from an entry)."""
    if not drift.basis:
        return None
    return Seen(
        drift.basis,
        "contract",
        "differs" if drift.differs else "violated",
        f"{where} — {drift.operation}",
        str(drift).split(" (request ", 1)[0],
    )


def conformance() -> pd.DataFrame:
    """The conformance table (:mod:`kit.notebook.conformity`) of what this kernel's clients and
    checks saw, as a DataFrame (columns :data:`COLUMNS`): a row per register entry, then the
    seed statements checked. ``kit regress`` writes the same for a whole run
    (``OUT/conformance.md``).

    Example::

        >>> table = kit.notebook.conformance()                      # doctest: +SKIP
        >>> table[table.status == "differs"][["id", "simulator", "server"]]   # doctest: +SKIP
    """
    seen = [of_check(o, "this kernel") for o in COMPANION.results()]
    seen += [of_drift(d, "this kernel") for d in COMPANION.drift.rows()]
    return build((s for s in seen if s is not None), expected=expectation()).frame()
