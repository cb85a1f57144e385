"""The migration report (``OUT/migration.md`` and ``.json``): the differences on the wire
under the change of 1.2.0 each belongs to, the change quoted from the spec's change list, and
the register entries that give a side of a difference where the spec does not.

Its first line is exactly "N differences, M unexplained; K name a register entry (A..)".
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path

from kit import register
from kit.regress.attribution import Difference

__all__ = ["first_line", "report_markdown", "write_report"]


def first_line(everything: Sequence[Difference]) -> str:
    """How many differences, how many unexplained, and how many name a register entry."""
    unexplained = sum(d.change is None for d in everything)
    chosen = [d for d in everything if d.chosen]
    entries = ", ".join(sorted({e for d in chosen for e in (d.before_by, d.after_by) if e}))
    return (
        f"{len(everything)} differences, {unexplained} unexplained; "
        f"{len(chosen)} name a register entry" + (f" ({entries})" if entries else "")
    )


def report_markdown(
    versions: Sequence[str], by_notebook: Mapping[str, Sequence[Difference]], *, preamble: bool = True
) -> str:
    """The text of ``migration.md`` for the differences of each notebook (``preamble=False``: the
    first line and the changes alone, for a page that says how to read them and whose notebook
    they are)."""
    before, after = versions[0], versions[1]
    everything = [d for diffs in by_notebook.values() for d in diffs]
    lines = [first_line(everything), ""]
    lines += [
        f"What the same code meets when it moves from {before} to {after}, one line per difference "
        "on the wire, under the change of 1.2.0 it belongs to. Each change is quoted from the spec's "
        f"change list: that is what the spec says changed. The spec never shows {before} and leaves "
        f"some of {after}'s wire open: where one side of a line is the register's choice, the line "
        f"names the entry in brackets ([{before}: A27] is the kit's own {before}). A line naming no "
        "entry rests on its change alone: what differs there is the code's own calls or a name the "
        "spec gives. Check the lines naming an entry against your own server.",
        "",
    ] if preamble else []
    for notebook, diffs in by_notebook.items():
        lines += [f"## {notebook}", ""] if preamble else []
        if not diffs:
            lines += ["- no difference", ""]
        for change in sorted({d.change for d in diffs if d.change is not None}):
            quoted = register.statement(f"change.{change}")["text"]
            lines += [f"### Change {change}: “{quoted}”", ""]
            lines += [f"- {d.line((before, after))}" for d in diffs if d.change == change] + [""]
        unexplained = [d for d in diffs if d.change is None]
        if unexplained:
            lines += ["### Unexplained: no change of 1.2.0 touches it", ""]
            lines += [f"- {d.line((before, after))}" for d in unexplained] + [""]
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
    (out / "migration.md").write_text(report_markdown(versions, by_notebook), encoding="utf-8")
    unexplained = sum(d.change is None for d in everything)
    chosen = sum(d.chosen for d in everything)
    data = {
        "summary": first,
        "spec_words_only": len(everything) - unexplained - chosen,
        "chosen": chosen,
        "unexplained": unexplained,
        "versions": list(versions),
        "notebooks": {nb: [asdict(d) for d in diffs] for nb, diffs in by_notebook.items()},
    }
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    (out / "migration.json").write_text(text, encoding="utf-8")
    return first
