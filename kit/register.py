"""The project's data: the assumptions register, the spec's facts, the personas.

Both the client and the simulator read these files (``data/`` in a checkout, ``kit/_data``
in an installed wheel). Every "not shown" of the spec that the simulator had to decide is an
entry of the register; where a decision is a value (a lifetime, a list), code reads it from
here so that the register and the behaviour cannot drift apart.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from kit._cache import parsed_toml

__all__ = [
    "REQUIRED_KEYS",
    "assumption",
    "assumptions",
    "changes",
    "changes_markdown",
    "data_dir",
    "fact",
    "personas",
    "seed_text",
    "spec",
    "statement",
    "statements",
    "value",
]


def data_dir() -> Path:
    """The folder holding the register, the spec facts and the personas."""
    packaged = Path(__file__).with_name("_data")
    return packaged if packaged.is_dir() else Path(__file__).resolve().parent.parent / "data"


#: The keys every register entry has (``value`` and ``covers`` are optional).
REQUIRED_KEYS = ("id", "topic", "summary", "spec", "choice", "enforced_in")


@cache
def _assumptions() -> tuple[dict[str, Any], ...]:
    entries = tuple(parsed_toml(data_dir() / "assumptions.toml")["assumption"])
    for entry in entries:
        missing = [key for key in REQUIRED_KEYS if not entry.get(key)]
        if missing:
            raise ValueError(f"register entry {entry.get('id', '?')} has no {', '.join(missing)}")
    return entries


def assumptions() -> list[dict[str, Any]]:
    """Every register entry: ``id``, ``topic``, ``summary`` (the choice in one plain sentence,
    what a reader meets first), ``spec``, ``choice`` (the whole of it), ``enforced_in``, and
    ``value`` and ``covers`` where it has them."""
    return [dict(a) for a in _assumptions()]


def assumption(assumption_id: str) -> dict[str, Any]:
    """One register entry by id (``"A06"``); KeyError when there is none."""
    for entry in _assumptions():
        if entry["id"] == assumption_id:
            return dict(entry)
    raise KeyError(f"no assumption {assumption_id!r} in the register")


def value(assumption_id: str) -> dict[str, Any]:
    """The machine-readable value of a register entry (empty when it has none)."""
    return dict(assumption(assumption_id).get("value", {}))


@cache
def _statements() -> tuple[dict[str, Any], ...]:
    return tuple(parsed_toml(data_dir() / "spec.toml")["statement"])


def statements() -> list[dict[str, Any]]:
    """Every statement of the spec, in its order: ``id`` (``"rule.3"``, ``"change.7"``),
    ``section``, ``text`` (or ``row``, a table row's cells), ``chosen_by`` where it leaves
    something open, and the facts code reads (``types``, ``version``…)."""
    return [json.loads(json.dumps(s)) for s in _statements()]


def statement(statement_id: str) -> dict[str, Any]:
    """One statement of the spec by id (``"auth.4"``); KeyError when there is none."""
    for entry in _statements():
        if entry["id"] == statement_id:
            return json.loads(json.dumps(entry))
    raise KeyError(f"no statement {statement_id!r} in the spec")


def seed_text() -> str:
    """The spec itself, verbatim (``data/seed.txt``): what every quote of it is checked against."""
    return (data_dir() / "seed.txt").read_text(encoding="utf-8")


def _facts(statement: dict[str, Any]) -> dict[str, Any]:
    """A statement's facts: its own keys and those of its ``derived`` table (facts other
    statements word, kept apart in data/spec.toml; ``from`` names them), as one mapping."""
    derived = {k: v for k, v in statement.get("derived", {}).items() if k != "from"}
    return {**derived, **{k: v for k, v in statement.items() if k != "derived"}}


def _derived(items: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    """The spec's facts as code reads them, each derived from the statements that state it."""
    items = tuple(_facts(s) for s in items)
    by_id = {s["id"]: s for s in items}

    def section(prefix: str) -> list[dict[str, Any]]:
        return [s for s in items if s["id"].split(".")[0] == prefix]

    endpoints = [
        {"id": s["id"], **dict(zip(("method", "path", "sent", "returned", "notes"), s["row"], strict=True))}
        for s in section("endpoint")
        if "row" in s
    ]
    by_row = {e["id"]: e for e in endpoints}
    webhooks = [s for s in section("webhook") if "row" in s]
    removed = [
        {**by_row[s["id"]], "removed_in": s["removed_in"], "note": by_row[s["id"]]["notes"]}
        if s["id"] in by_row
        else {"id": s["id"], "method": "", "path": "", "removed_in": s["removed_in"], "note": s["text"]}
        for s in items
        if "removed_in" in s
    ]
    deprecated = [
        {
            **by_row[s["id"]],
            "deprecated_in": s["deprecated_in"],
            "note": by_row[s["id"]]["notes"],
            **({"replaced_by": s["replaced_by"]} if "replaced_by" in s else {}),
        }
        for s in items
        if "deprecated_in" in s
    ]
    categories = by_id["category.1"]
    return {
        "version": by_id["version.1"]["version"],
        "date": by_id["version.1"]["date"],
        "session_header": by_id["session.4"]["header"],
        "rules": [s["text"] for s in section("rule")],
        "inbound_event_types": list(by_id["event.1"]["types"]),
        "webhook_events": {s["row"][0]: s["row"][1] for s in webhooks},
        "deprecated_webhook_events": [s["row"][0] for s in webhooks if s["row"][1].startswith("Deprecated")],
        "renamed_webhook_events": {s["previously"]: s["row"][0] for s in webhooks if "previously" in s},
        "card_types_added": list(by_id["card.1"]["card_types"]),
        "categories": {
            "renamed": dict(categories["renamed"]),
            "merged": dict(categories["merged"]),
            "own_category": list(categories["own_category"]),
        },
        "removed_endpoints": removed,
        "deprecated_endpoints": deprecated,
        "endpoint": endpoints,
        "change": [
            {
                "id": s["id"],
                "number": int(s["id"].split(".")[1]),
                "spec": s["text"],
                "chosen_by": s.get("chosen_by", []),
                **{key: list(s.get(key, [])) for key in CHANGE_LISTS},
                **{key: dict(s.get(key, {})) for key in ("previously", "merged")},
                "on_the_wire": s.get("on_the_wire", ""),
            }
            for s in section("change")
        ],
    }


#: The lists a change record may hold: what it touches, and what it did to each.
CHANGE_LISTS = (
    "see",
    "operations",
    "fields",
    "headers",
    "card_types",
    "event_types",
    "areas",
    "categories",
    "added",
    "removed",
    "deprecated",
    "specified",
)


def changes() -> list[dict[str, str]]:
    """The nine changes as a table, from their records alone (``docs/contract.md`` shows these
    rows): what each touches, what it did, what the spec says of the version before, and the
    register entries that choose where the spec is silent. Which of them a notebook's checks
    showed is :func:`kit.notebook.changes_checked`.

    >>> changes()[1]["did"]
    'added reason'
    """
    rows = []
    for change in spec()["change"]:
        touches = [*change["operations"]]
        touches += [f"field {f}" for f in change["fields"]]
        touches += [f"card type {t}" for t in change["card_types"]]
        touches += [f"event types {', '.join(change['event_types'])}"] if change["event_types"] else []
        touches += [f"{a} endpoints" for a in change["areas"]] + change["headers"]
        touches += [f"categories {', '.join(change['categories'])}"] if change["categories"] else []
        verbs = ("added", "removed", "deprecated", "specified")
        did = [f"{verb} {', '.join(change[verb])}" for verb in verbs if change[verb]]
        previously = change["previously"].items()
        renamed = [f"{old} → {new}" for new, old in previously if new not in change["added"]]
        verb = "corrected" if "corrected" in change["spec"] else "renamed"  # the spec's own word
        did += [f"{verb} {', '.join(renamed)}"] if renamed else []
        did += [f"merged {old} into {new}" for new, old in change["merged"].items()]
        before = [f"{old} (now {new})" for new, old in change["previously"].items()]
        before += [f"{old} (now in {new})" for new, old in change["merged"].items()]
        before += [f"had {item}" for item in change["removed"]]
        before += [f"no {item}" for item in change["added"] if item not in change["previously"]]
        before += [f"{item} not deprecated" for item in change["deprecated"]]
        rows.append(
            {
                "change": change["id"],
                "touches": "; ".join(touches),
                "did": "; ".join(did),
                "before 1.2.0 (the spec)": "; ".join(before) or "not said",
                # a change the spec says leaves the wire alone (category.1) has nothing chosen
                "on the wire": f"no ({', '.join(change['see'])})" if change["on_the_wire"] else "yes",
                "chosen by": ", ".join(change["chosen_by"]) or "nothing",
            }
        )
    return rows


def changes_markdown() -> str:
    """:func:`changes` as a Markdown table (one row per change, cells escaped)."""
    rows = changes()
    head = list(rows[0])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        lines.append("| " + " | ".join(row[key].replace("|", "\\|") for key in head) + " |")
    return "\n".join(lines) + "\n"


@cache
def _spec() -> dict[str, Any]:
    items = _statements()
    return {**_derived(items), "statements": [dict(s) for s in items]}


def spec() -> dict[str, Any]:
    """What the spec states: ``statements`` (see :func:`statements`) and the facts code reads,
    derived from them (``version``, ``inbound_event_types``, ``webhook_events``, ``endpoint``
    rows, ``removed_endpoints``, ``deprecated_endpoints``, ``categories``, the nine ``change``s…)."""
    return json.loads(json.dumps(_spec()))


def fact(name: str) -> Any:
    """One fact of :func:`spec` (a copy), without copying the others (the statements are most of it).

    >>> fact("version")
    '1.2.0-20221215'
    """
    return json.loads(json.dumps(_spec()[name]))


@cache
def _personas() -> tuple[dict[str, Any], ...]:
    with open(data_dir() / "personas.json", encoding="utf-8") as f:
        return tuple(json.load(f)["personas"])


def personas() -> list[dict[str, Any]]:
    """Synthetic people (obviously fake numbers) for onboarding flows."""
    return [json.loads(json.dumps(p)) for p in _personas()]


# --- quotes of the spec ----------------------------------------------------------------------------
#
# A quote of the spec is verbatim: fragments joined by "…" (an elision), each a run of the spec's
# words that starts where a sentence, list item or table cell starts and ends where one ends,
# except where an "…" marks the cut. ``quote_faults`` says what is wrong with one; ``cite`` names
# the statements a quote comes from.

_ITEM = re.compile(r"^(#+ |- |\d+\. )")
_ELISION = "…"


@cache
def _units() -> tuple[tuple[str, ...], frozenset[int], frozenset[int], str]:
    """The spec's lines joined by newlines, with the offsets where its units start and end."""
    text = seed_text()
    starts: set[int] = set()
    ends: set[int] = set()
    offset = 0
    for line in text.split("\n"):
        if line.startswith("|"):
            cells = [(m.start(1), m.end(1)) for m in re.finditer(r"\| ([^|]*?) (?=\|)", line)]
        else:
            prefix = _ITEM.match(line)
            cells = [(prefix.end() if prefix else 0, len(line.rstrip()))] if line.strip() else []
        for start, end in cells:
            starts.add(offset + start)
            ends.add(offset + end)
            for stop in re.finditer(r"[.:] (?=\S)", line[start:end]):
                ends.add(offset + start + stop.start() + 1)
                starts.add(offset + start + stop.end())
        offset += len(line) + 1
    return tuple(text.split("\n")), frozenset(starts), frozenset(ends), text


def _fragments(quote: str) -> tuple[list[str], bool, bool]:
    flat = " ".join(quote.split())
    return (
        [part.strip() for part in flat.split(_ELISION) if part.strip()],
        flat.startswith(_ELISION),
        flat.endswith(_ELISION),
    )


def quote_faults(quote: str) -> list[str]:
    """What makes ``quote`` not the spec's words (empty when it is): a fragment not in the spec,
    or cut inside a sentence, item or cell without an "…" there."""
    _, starts, ends, text = _units()
    parts, open_start, open_end = _fragments(quote)
    if not parts:
        return ["the quote is empty"]
    faults = []
    for index, part in enumerate(parts):
        may_start_inside = index > 0 or open_start
        may_end_inside = index < len(parts) - 1 or open_end
        found = [m.start() for m in re.finditer(re.escape(part), text)]
        if not found:
            faults.append(f"not in the spec: {part!r}")
        elif not any(
            (may_start_inside or at in starts) and (may_end_inside or at + len(part) in ends) for at in found
        ):
            faults.append(f"cut inside a sentence without '…': {part!r}")
    return faults


def cite(quote: str) -> list[str]:
    """The ids of the statements ``quote``'s fragments come from, in the spec's order."""
    parts, _, _ = _fragments(quote)
    found: list[str] = []
    for entry in _statements():
        words = entry["text"] if "text" in entry else " | ".join(entry["row"])
        if "types" in entry:
            words += "\n" + "\n".join(entry["types"])
        if any(part in words for part in parts) and entry["id"] not in found:
            found.append(entry["id"])
    return found
