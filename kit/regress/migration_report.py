"""The migration report (``OUT/migration.md`` and ``.json``): the differences on the wire
under the change of 1.2.0 each belongs to, the change quoted from the spec's change list, and
the register entries that give a side of a difference where the spec does not.

Its first line is exactly "N differences, M unexplained; K name a register entry (A..)"; its
second says what the N are, by kind, so that they add up from what a reader sees
(:func:`breakdown`): the answers that differ, the call counts, the webhook event types.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path

from kit import _files as files
from kit import register
from kit._plural import counted
from kit.regress.attribution import Difference

__all__ = ["breakdown", "first_line", "report_markdown", "write_report"]


def first_line(everything: Sequence[Difference]) -> str:
    """How many differences, how many unexplained, and how many name a register entry."""
    unexplained = sum(d.change is None for d in everything)
    chosen = [d for d in everything if d.chosen]
    entries = ", ".join(sorted({e for d in chosen for e in (d.before_by, d.after_by) if e}))
    return (
        f"{len(everything)} differences, {unexplained} unexplained; "
        f"{len(chosen)} name a register entry" + (f" ({entries})" if entries else "")
    )


def breakdown(everything: Sequence[Difference]) -> str:
    """What the differences of the first line are, by kind (the first line says how many of
    them name a register entry, and which).

        >>> one = Difference("calls", "POST /x", "2", "1", 2, "A27")
        >>> print(breakdown([one]))
        By kind: 1 call count (a call made under one version only).
    """
    kinds = Counter(d.kind for d in everything)
    detail = [
        f"{kinds['code']} in status or code" if kinds["code"] else "",
        counted(kinds["header"], "in a header", "in headers") if kinds["header"] else "",
        counted(kinds["field"], "in a body field", "in body fields") if kinds["field"] else "",
    ]
    answers = kinds["code"] + kinds["header"] + kinds["field"]
    parts = [
        f"{counted(answers, 'answer')} to the same call that differ ({', '.join(filter(None, detail))})"
        if answers
        else "",
        f"{counted(kinds['calls'], 'call count')} (a call made under one version only)"
        if kinds["calls"]
        else "",
        counted(kinds["event type"], "webhook event type") if kinds["event type"] else "",
        f"{counted(kinds['notebook'], 'notebook')} without a wire" if kinds["notebook"] else "",
    ]
    parts = [p for p in parts if p]
    if not parts:
        return "No difference."
    listed = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    return f"By kind: {listed}."


def _markdown(line: str) -> str:
    """A report line as Markdown shows it: a ``<`` escaped, so that a value such as a Link
    header's ``</oauth/accesstoken>`` reads as text, not as a tag that hides it."""
    return line.replace("<", "\\<")


def _heading(change: int, cite: str | None) -> list[str]:
    """A change's heading, quoting it from the spec's change list: in the heading itself, or
    (``cite``: the contract's address) as a quote of the spec, its statement id linked there."""
    quoted = register.statement(f"change.{change}")["text"]
    if cite is None:
        return [f"### Change {change}: “{quoted}”", ""]
    statement = f"change.{change}"
    cited = f"> — the spec ([{statement}]({cite}#{statement}))"
    return [f"### Change {change}", "", f"> {quoted}", cited, ""]


def report_markdown(
    versions: Sequence[str],
    by_notebook: Mapping[str, Sequence[Difference]],
    *,
    preamble: bool = True,
    cite: str | None = None,
) -> str:
    """The text of ``migration.md`` for the differences of each notebook (``preamble=False``: the
    two first lines and the changes alone, for a page that says how to read them and whose
    notebook they are; ``cite``, the address of ``docs/contract.md`` from that page: each change
    quoted below its heading as the page quotes the spec, its statement id linked)."""
    before, after = versions[0], versions[1]
    everything = [d for diffs in by_notebook.values() for d in diffs]
    lines = [first_line(everything), "", breakdown(everything), ""]
    lines += (
        [
            f"What the same code meets when it moves from {before} to {after}, one line per difference "
            "on the wire, under the change of 1.2.0 it belongs to. Each change is quoted from the spec's "
            f"change list: that is what the spec says changed. The spec never shows {before} and leaves "
            f"some of {after}'s wire open: where one side of a line is the register's choice, the line "
            f"names the entry in brackets ([{before}: A27] is the kit's own {before}). A line naming no "
            "entry rests on its change alone: what differs there is the code's own calls or a name the "
            "spec gives. Check the lines naming an entry against your own server.",
            "",
        ]
        if preamble
        else []
    )
    for notebook, diffs in by_notebook.items():
        lines += [f"## {notebook}", ""] if preamble else []
        if not diffs:
            lines += ["- no difference", ""]
        for change in sorted({d.change for d in diffs if d.change is not None}):
            lines += _heading(change, cite)
            lines += [f"- {_markdown(d.line((before, after)))}" for d in diffs if d.change == change] + [""]
        unexplained = [d for d in diffs if d.change is None]
        if unexplained:
            lines += ["### Unexplained: no change of 1.2.0 touches it", ""]
            lines += [f"- {_markdown(d.line((before, after)))}" for d in unexplained] + [""]
    changes = sorted({d.change for d in everything if d.change is not None})
    lines += [f"Changes seen: {', '.join(map(str, changes)) or 'none'}."] if preamble else []
    return "\n".join(lines).rstrip("\n") + "\n"


def write_report(
    out_dir: str | Path, versions: Sequence[str], by_notebook: Mapping[str, list[Difference]]
) -> str:
    """Write ``migration.md`` and ``migration.json`` into ``out_dir``; returns the first line."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    everything = [d for diffs in by_notebook.values() for d in diffs]
    first = first_line(everything)
    files.write(out / "migration.md", report_markdown(versions, by_notebook))
    unexplained = sum(d.change is None for d in everything)
    chosen = sum(d.chosen for d in everything)
    data = {
        "summary": first,
        "by_kind": breakdown(everything),
        "spec_words_only": len(everything) - unexplained - chosen,
        "chosen": chosen,
        "unexplained": unexplained,
        "versions": list(versions),
        "notebooks": {nb: [asdict(d) for d in diffs] for nb, diffs in by_notebook.items()},
    }
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    files.write(out / "migration.json", text)
    return first
