"""What a run tells: ``summary.md`` (also printed) and a progress bar (``junit.xml``:
:mod:`kit.regress.junit`; ``results.json``: :mod:`kit.regress.record`).

The summary opens with what changed **since the last run** when there is one to compare with
(``--history``, ``--baseline``: :mod:`kit.regress.history`), then a row per notebook (a flaky
one, which passed on a rerun, says so with its first failure), then (when there are any) a
**Checks** section — per notebook how many named checks ran, passed, failed, were skipped and
differ, and each one that did not pass with its reason (a failure says what was expected and
what came) — a **Contract drift** section: each answer that departed from what the spec states
(operation, field or header, expected, got, request id) — and a **Differences from the
simulator's choices** section: one line per departure from a register entry, naming the entry
and saying "differs", with the notebook, the check or contract field, and what.

Example::

    >>> text = summary(results, {"seed": 7}, Path("out/regress"), jobs=2, cell_timeout=120)  # doctest: +SKIP
    >>> text.splitlines()[0]                                                                # doctest: +SKIP
    '# kit regress: 12 notebooks, all passed'
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from kit import _plural
from kit.regress.model import NotebookResult

__all__ = [
    "CheckCounts",
    "check_counts",
    "checks_section",
    "counted_differences",
    "differences_section",
    "drift_section",
    "failure_text",
    "headline",
    "progress",
    "summary",
]


class CheckCounts(NamedTuple):
    """How a notebook's named checks ended: ``ran`` counts all but the skipped ones (a flaky
    check, which passed on a rerun, among them)."""

    ran: int
    passed: int
    failed: int
    skipped: int
    differ: int
    flaky: int


def _md(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def summary(
    results: Sequence[NotebookResult],
    params: Mapping[str, Any],
    out_dir: Path,
    jobs: int,
    cell_timeout: float,
    since: Sequence[str] = (),
) -> str:
    """The Markdown summary: a title, the settings, ``since`` (the lines of what changed since
    the last run, :func:`kit.regress.history.section`), one table row per notebook, leaks, notes.

    Raises:
        Nothing.
    """
    title = headline(results)
    shown = ", ".join(f"`{k}={v!r}`" for k, v in params.items()) or "none"
    lines = [
        f"# kit regress: {title}",
        "",
        f"Parameters: {shown} · cell time-out {cell_timeout:g} s · {_plural.counted(jobs, 'job')} · "
        f"executed notebooks in `{out_dir}` (cells counted from 1 in the executed notebook)",
        *since,
        "",
        "| notebook | status | seconds | failing cell | error |",
        "|---|---|---:|---|---|",
    ]
    for r in results:
        status = r.status if r.status == "passed" else f"**{r.status}**"
        cell, error = failure_text(r)
        lines.append(f"| {r.notebook} | {status} | {r.seconds:.2f} | {_md(cell)} | {_md(error)} |")
    found = [f for r in results for f in r.findings]
    if found:
        lines += ["", "## Leaks", ""] + [f"- `{f.location}`: {f.kind} — {f.hint}" for f in found]
    lines += checks_section(results) + drift_section(results) + differences_section(results)
    notes = [f"- {r.notebook}: {n}" for r in results for n in r.notes]
    if notes:
        lines += ["", "## Notes", "", *notes]
    return "\n".join(lines) + "\n"


def headline(results: Sequence[NotebookResult]) -> str:
    """The run in one line, the summary's title: ``1 of 4 notebooks failed — contract drift: 1
    — 1 register entry differ — 1 flaky`` (``12 notebooks, all passed`` when all did).

    Raises:
        Nothing.
    """
    failed, total = sum(not r.ok for r in results), len(results)
    noun = _plural.plural(total, "notebook")
    title = f"{failed} of {total} {noun} failed" if failed else f"{total} {noun}, all passed"
    drift = sum(len(r.seed_drift) for r in results)
    if drift:
        title += f" — contract drift: {drift}"
    differ = sorted({d[0] for r in results for d in r.differences})
    if differ:
        title += f" — {_plural.counted(len(differ), 'register entry', 'register entries')} differ"
    flaky = sum(r.status == "flaky" for r in results)
    if flaky:
        title += f" — {flaky} flaky"
    return title


def failure_text(result: NotebookResult) -> tuple[str, str]:
    """A notebook's failing cell and error as its row shows them: a flaky one's are ``""`` and
    ``passed on attempt 2; first failed: …``.

    Raises:
        Nothing.
    """
    if result.status == "flaky":
        tries = len(result.attempts) + 1
        return "", f"passed on attempt {tries}; first failed: {result.message}"
    return result.cell or "", result.error or ""


def check_counts(result: NotebookResult) -> CheckCounts:
    """How ``result``'s named checks ended (:class:`CheckCounts`).

    Raises:
        Nothing.
    """
    passed, failed, skipped = result.count("passed"), result.count("failed"), result.count("skipped")
    differ, flaky = result.count("differs"), result.count("flaky")
    return CheckCounts(passed + failed + differ + flaky, passed, failed, skipped, differ, flaky)


def counted_differences(results: Sequence[NotebookResult]) -> dict[tuple[str, str, str, str, str], int]:
    """Every departure from a register entry once, by entry: ``(entry, notebook, what, cell,
    how)`` and how many times it was met.

    Raises:
        Nothing.
    """
    counted: dict[tuple[str, str, str, str, str], int] = {}
    for r in results:
        for entry, what, cell, how in r.differences:
            key = (entry, r.notebook, what, cell, how)
            counted[key] = counted.get(key, 0) + 1
    return dict(sorted(counted.items(), key=lambda item: item[0][0]))


def checks_section(results: Sequence[NotebookResult]) -> list[str]:
    """The summary's **Checks** lines: a row per notebook with checks, then every skip and why.

    Raises:
        Nothing.
    """
    with_checks = [r for r in results if r.checks]
    if not with_checks:
        return []
    lines = [
        "",
        "## Checks",
        "",
        "| notebook | ran | passed | failed | skipped | differ |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in with_checks:
        n = check_counts(r)  # a flaky check is listed below
        shown = f"**{n.failed}**" if n.failed else "0"
        lines.append(f"| {r.notebook} | {n.ran} | {n.passed} | {shown} | {n.skipped} | {n.differ} |")
    others = [
        (r.notebook, c) for r in with_checks for c in r.checks if c.outcome not in ("passed", "differs")
    ]
    if others:
        lines.append("")
        lines += [
            f"- {nb}: {c.outcome} — {_md(c.name)}{_basis(c.kind, c.basis)} ({c.cell}): {_md(c.reason)}"
            for nb, c in others
        ]
    return lines


def _basis(kind: str, basis: str) -> str:
    return f" [{kind} {basis}]" if basis else ""


def differences_section(results: Sequence[NotebookResult]) -> list[str]:
    """The summary's **Differences from the simulator's choices**: one line per departure from a
    register entry, by entry: ``- A15 differs: 05_cards.ipynb — check 'close reasons' (cell 7):
    differs from A15: …``; the same one met again is counted, not repeated (empty when none).

    Raises:
        Nothing.
    """
    counted = counted_differences(results)
    if not counted:
        return []
    entries = sorted({key[0] for key in counted})
    lines = [
        "",
        "## Differences from the simulator's choices",
        "",
        f"{_plural.counted(len(entries), 'register entry', 'register entries')} "
        f"({', '.join(entries)}) differ on this server, {sum(counted.values())} time(s): the simulator "
        'chose otherwise where the spec says "not shown" (`data/assumptions.toml`). Not a failure '
        "unless `--strict-choices`.",
        "",
    ]
    for (entry, nb, what, cell, how), times in counted.items():
        where = f" ({cell})" if cell else ""
        again = f" ({times} times)" if times > 1 else ""
        lines.append(f"- {entry} differs: {nb} — {_md(what)}{where}: {_md(how)}{again}")
    return lines


def drift_section(results: Sequence[NotebookResult]) -> list[str]:
    """The summary's **Contract drift** lines: one table row per drift (empty when none).

    Raises:
        Nothing.
    """
    rows = [(r.notebook, d) for r in results for d in r.seed_drift]
    if not rows:
        return []
    lines = [
        "",
        "## Contract drift",
        "",
        f"{len(rows)} time(s) an answer departed from what the spec states "
        "(checked against `data/openapi.json`):",
        "",
        "| notebook | operation | field or header | expected | got | request id | spec |",
        "|---|---|---|---|---|---|---|",
    ]
    for nb, d in rows:
        cells = (nb, d.operation, d.field, d.expected, d.got, d.request_id or "", d.basis)
        lines.append("| " + " | ".join(_md(c) for c in cells) + " |")
    return lines


def progress(total: int, enabled: bool) -> Callable[[NotebookResult], None]:
    """A tqdm bar on stderr (a plain counter line without tqdm); silent when disabled.

    Example::

        >>> advance = progress(12, enabled=False)
        >>> advance(result)  # doctest: +SKIP

    Raises:
        Nothing.
    """
    if not enabled:
        return lambda result: None
    try:
        from tqdm import tqdm
    except ImportError:
        done = [0]

        def count(result: NotebookResult) -> None:
            done[0] += 1
            end = "\n" if done[0] == total else ""
            print(
                f"\rregress [{done[0]}/{total}] {result.notebook}: {result.status}\x1b[K",
                end=end,
                file=sys.stderr,
                flush=True,
            )

        return count
    bar = tqdm(total=total, desc="regress", unit="nb", file=sys.stderr, leave=True, dynamic_ncols=True)

    def update(result: NotebookResult) -> None:
        bar.set_postfix_str(f"{result.notebook}: {result.status}", refresh=False)
        bar.update(1)
        if bar.n >= total:
            bar.close()

    return update
