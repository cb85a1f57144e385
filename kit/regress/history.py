"""Since the last run: ``kit regress --history DIR`` and ``--baseline OUT``.

``--history DIR`` keeps the last :data:`KEEP` runs' ``results.json`` in ``DIR`` (one file per
run, ``results-<start>.json``; older ones are deleted) and compares this run with the newest
one there; ``--baseline OUT`` names the run to compare with instead (an OUT folder or its
``results.json``). The comparison (:func:`compare`) says which notebooks newly fail, were
fixed, still fail, were added or removed; which differences from a register entry are new and
which are gone (by entry); which checks were added or removed; and the :data:`LARGEST` largest
changes in seconds. It is the first section of ``summary.md`` (:func:`section`), the
``since_last_run`` key of ``results.json`` and properties of ``junit.xml``
(:func:`properties`). It never changes the run's exit status.

A flaky notebook (it passed on a rerun) counts as passing here: it is reported as flaky in
its own row.

Example::

    >>> compare({"started": "…", "notebooks": [{"notebook": "a", "status": "failed", "seconds": 1}]},
    ...         {"notebooks": [{"notebook": "a", "status": "passed", "seconds": 1}]})["fixed"]
    ['a']
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kit import _files as files
from kit.regress import record
from kit.regress.model import RegressError

__all__ = ["KEEP", "LARGEST", "compare", "keep", "previous", "properties", "rows", "section"]

#: How many runs ``--history DIR`` keeps (the newest); older files are deleted.
KEEP = 30
#: How many of the largest changes in seconds the comparison lists.
LARGEST = 5
_PREFIX = "results-"
_PASSING = ("passed", "flaky")
_DIFF = ("entry", "notebook", "what")


def _runs(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"{_PREFIX}*.json"))


def previous(
    history: str | os.PathLike[str] | None, baseline: str | os.PathLike[str] | None
) -> tuple[dict[str, Any], str] | None:
    """The run to compare with and where it came from: ``baseline`` when given, else the newest
    readable run in ``history``; ``None`` when there is none (a first run).

    Raises:
        RegressError: ``baseline`` cannot be read or is of another format; ``history`` is not
            a folder and cannot be created.
    """
    if baseline is not None:
        return record.read(baseline), str(baseline)
    if history is None:
        return None
    folder = Path(history)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RegressError(f"--history: cannot use {str(folder)!r}: {exc.strerror or exc}") from None
    for path in reversed(_runs(folder)):
        try:
            return record.read(path), str(path)
        except RegressError:
            continue  # another format, a truncated file: the one before it
    return None


def keep(history: str | os.PathLike[str], data: Mapping[str, Any]) -> Path:
    """Add this run's record to ``history`` and delete all but the newest :data:`KEEP`.

    Raises:
        OSError: the folder cannot be written.
    """
    folder = Path(history)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = "".join(ch for ch in str(data["started"]) if ch.isalnum())
    text = json.dumps(data, indent=1, ensure_ascii=False, default=str) + "\n"
    n = 1
    while True:  # a new name: a run's record never replaces another's, nor goes through a link
        path = folder / (f"{_PREFIX}{stamp}.json" if n == 1 else f"{_PREFIX}{stamp}-{n}.json")
        try:
            files.write(path, text, replace=False)
            break
        except FileExistsError:
            n += 1
    for old in _runs(folder)[:-KEEP]:
        old.unlink(missing_ok=True)
    return path


def _differences(data: Mapping[str, Any]) -> set[tuple[str, str, str]]:
    return {(d["entry"], d["notebook"], d["what"]) for d in data.get("differences", [])}


def compare(before: Mapping[str, Any], now: Mapping[str, Any]) -> dict[str, Any]:
    """What changed from run ``before`` to run ``now`` (two ``results.json`` records).

    Raises:
        Nothing.
    """
    was = {n["notebook"]: n for n in before.get("notebooks", [])}
    is_ = {n["notebook"]: n for n in now.get("notebooks", [])}
    both = [name for name in is_ if name in was]

    def failing(n: Mapping[str, Any]) -> bool:
        return n["status"] not in _PASSING

    checks_was = {(c["notebook"], c["title"]) for c in before.get("checks", [])}
    checks_now = {(c["notebook"], c["title"]) for c in now.get("checks", [])}
    diff_was, diff_now = _differences(before), _differences(now)
    changes = sorted(
        (
            {"notebook": name, "before": was[name]["seconds"], "after": is_[name]["seconds"]}
            for name in both
            if is_[name]["seconds"] != was[name]["seconds"]
        ),
        key=lambda c: (-abs(c["after"] - c["before"]), c["notebook"]),
    )[:LARGEST]
    for change in changes:
        change["change"] = round(change["after"] - change["before"], 2)
    return {
        "baseline_started": before.get("started"),
        "newly_failing": [n for n in both if failing(is_[n]) and not failing(was[n])],
        "fixed": [n for n in both if not failing(is_[n]) and failing(was[n])],
        "still_failing": [n for n in both if failing(is_[n]) and failing(was[n])],
        "notebooks_added": [n for n in is_ if n not in was],
        "notebooks_removed": [n for n in was if n not in is_],
        "new_differences": [dict(zip(_DIFF, d, strict=True)) for d in sorted(diff_now - diff_was)],
        "gone_differences": [dict(zip(_DIFF, d, strict=True)) for d in sorted(diff_was - diff_now)],
        "checks_added": [f"{nb}: {title}" for nb, title in sorted(checks_now - checks_was)],
        "checks_removed": [f"{nb}: {title}" for nb, title in sorted(checks_was - checks_now)],
        "largest_changes_in_seconds": changes,
    }


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rows(since: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """What changed, as the summary's and the HTML report's table say it: ``(what, which)``
    from ``newly failing`` to ``largest changes in seconds``.

    Raises:
        Nothing.
    """

    def differences(key: str) -> list[str]:
        return [f"{d['entry']} {d['notebook']} {d['what']}" for d in since[key]]

    return [
        ("newly failing", list(since["newly_failing"])),
        ("fixed", list(since["fixed"])),
        ("still failing", list(since["still_failing"])),
        ("new differences", differences("new_differences")),
        ("gone differences", differences("gone_differences")),
        ("notebooks added", list(since["notebooks_added"])),
        ("notebooks removed", list(since["notebooks_removed"])),
        ("checks added", list(since["checks_added"])),
        ("checks removed", list(since["checks_removed"])),
        (
            "largest changes in seconds",
            [
                f"{c['notebook']} {c['before']:.2f} → {c['after']:.2f} ({c['change']:+.2f})"
                for c in since["largest_changes_in_seconds"]
            ],
        ),
    ]


def section(since: Mapping[str, Any] | None, source: str | None) -> list[str]:
    """The summary's first section, **Since the last run**: a table of what changed, or a line
    saying there was no run to compare with.

    Raises:
        Nothing.
    """
    lines = ["", "## Since the last run", ""]
    if since is None:
        return [*lines, "No earlier run to compare with: this run is the first one kept."]
    lines += [
        f"Compared with the run started {since['baseline_started']} (`{source}`).",
        "",
        "| what | how many | which |",
        "|---|---:|---|",
    ]
    for what, which in rows(since):
        lines.append(f"| {what} | {len(which)} | {_md(', '.join(which))} |")
    return lines


def properties(since: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """JUnit properties of the comparison: ``since.newly_failing`` … (comma-separated), and
    ``since.baseline_started``; none without a comparison.

    Raises:
        Nothing.
    """
    if since is None:
        return []
    props = [("since.baseline_started", str(since["baseline_started"]))]
    keys = [what.replace(" ", "_") for what, _ in rows(since)]
    props += [(f"since.{key}", ", ".join(which)) for key, (_, which) in zip(keys, rows(since), strict=True)]
    return props
