"""What a run tells: ``summary.md`` (also printed), ``junit.xml`` for CI, a progress bar.

The summary has a row per notebook, then (when there are any) a **Checks** section — per
notebook how many named checks ran, passed, failed, were skipped and differ, and each one that
did not pass with its reason (a failure says what was expected and what came) — a **Contract
drift** section: each answer that departed from what the seed states (operation, field or
header, expected, got, request id) — and a **Differences from the simulator's choices** section:
one line per departure from a register entry, naming the entry and saying "differs", with the
notebook, the check or contract field, and what. In ``junit.xml``, besides a testcase per
notebook, :func:`add_checks` adds a testcase per check (``<skipped message=…>`` when skipped;
a difference is a testcase with properties ``outcome=differs`` and ``basis`` and its words in
``<system-out>``, a failure only with ``--strict-choices``) and one failure per drift.

Example::

    >>> text = summary(results, {"seed": 7}, Path("out/regress"), jobs=2, cell_timeout=120)  # doctest: +SKIP
    >>> text.splitlines()[0]                                                                # doctest: +SKIP
    '# kit regress: 12 notebooks, all passed'
"""

from __future__ import annotations

import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kit.regress.model import NotebookResult

__all__ = [
    "add_checks",
    "checks_section",
    "differences_section",
    "drift_section",
    "junit",
    "progress",
    "summary",
]


def _md(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def summary(
    results: Sequence[NotebookResult],
    params: Mapping[str, Any],
    out_dir: Path,
    jobs: int,
    cell_timeout: float,
) -> str:
    """The Markdown summary: a title, the settings, one table row per notebook, leaks, notes.

    Raises:
        Nothing.
    """
    failed, total = sum(not r.ok for r in results), len(results)
    noun = "notebook" if total == 1 else "notebooks"
    title = f"{failed} of {total} {noun} failed" if failed else f"{total} {noun}, all passed"
    shown = ", ".join(f"`{k}={v!r}`" for k, v in params.items()) or "none"
    drift = sum(len(r.seed_drift) for r in results)
    if drift:
        title += f" — contract drift: {drift}"
    differ = sorted({d[0] for r in results for d in r.differences})
    if differ:
        title += f" — {len(differ)} register entr{'y' if len(differ) == 1 else 'ies'} differ"
    lines = [
        f"# kit regress: {title}",
        "",
        f"Parameters: {shown} · cell time-out {cell_timeout:g} s · {jobs} job{'s' * (jobs > 1)} · "
        f"executed notebooks in `{out_dir}` (cells counted from 1 in the executed notebook)",
        "",
        "| notebook | status | seconds | failing cell | error |",
        "|---|---|---:|---|---|",
    ]
    for r in results:
        status = r.status if r.ok else f"**{r.status}**"
        lines.append(f"| {r.notebook} | {status} | {r.seconds:.2f} | {_md(r.cell)} | {_md(r.error)} |")
    found = [f for r in results for f in r.findings]
    if found:
        lines += ["", "## Leaks", ""] + [f"- `{f.location}`: {f.kind} — {f.hint}" for f in found]
    lines += checks_section(results) + drift_section(results) + differences_section(results)
    notes = [f"- {r.notebook}: {n}" for r in results for n in r.notes]
    if notes:
        lines += ["", "## Notes", "", *notes]
    return "\n".join(lines) + "\n"


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
        passed, failed, skipped = r.count("passed"), r.count("failed"), r.count("skipped")
        differ = r.count("differs")
        shown = f"**{failed}**" if failed else "0"
        lines.append(
            f"| {r.notebook} | {passed + failed + differ} | {passed} | {shown} | {skipped} | {differ} |"
        )
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
    counted: dict[tuple[str, str, str, str, str], int] = {}
    for r in results:
        for entry, what, cell, how in r.differences:
            key = (entry, r.notebook, what, cell, how)
            counted[key] = counted.get(key, 0) + 1
    if not counted:
        return []
    entries = sorted({key[0] for key in counted})
    lines = [
        "",
        "## Differences from the simulator's choices",
        "",
        f"{len(entries)} register entr{'y' if len(entries) == 1 else 'ies'} "
        f"({', '.join(entries)}) differ on this server, {sum(counted.values())} time(s): the simulator "
        'chose otherwise where the seed says "not shown" (`data/assumptions.toml`). Not a failure '
        "unless `--strict-choices`.",
        "",
    ]
    for (entry, nb, what, cell, how), times in sorted(counted.items(), key=lambda item: item[0][0]):
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
        f"{len(rows)} time(s) an answer departed from what the seed states "
        "(checked against `data/openapi.json`):",
        "",
        "| notebook | operation | field or header | expected | got | request id | seed |",
        "|---|---|---|---|---|---|---|",
    ]
    for nb, d in rows:
        cells = (nb, d.operation, d.field, d.expected, d.got, d.request_id or "", d.basis)
        lines.append("| " + " | ".join(_md(c) for c in cells) + " |")
    return lines


def _differs(case: ET.Element, basis: str, text: str, strict: bool) -> None:
    """A difference on a testcase: properties ``outcome=differs`` and ``basis``, the words in
    ``<system-out>`` (CI tools show both on a passed test); a failure when ``strict``."""
    props = ET.SubElement(case, "properties")
    ET.SubElement(props, "property", name="outcome", value="differs")
    ET.SubElement(props, "property", name="basis", value=basis)
    if strict:
        ET.SubElement(case, "failure", message=f"{text} (--strict-choices)", type="ChoiceDiffers")
    ET.SubElement(case, "system-out").text = text


def add_checks(
    report: bytes,
    results: Sequence[NotebookResult],
    *,
    allow_drift: bool = False,
    strict_choices: bool = False,
) -> bytes:
    """``report`` (a JUnit XML of one testcase per notebook) with a ``checks`` testsuite (a
    testcase per named check: ``<skipped message=…>`` when skipped, ``<failure>`` when failed, a
    difference as properties and ``<system-out>`` — a failure with ``strict_choices``), a
    ``contract drift`` testsuite (a failed testcase per departure from the seed; skipped with
    ``allow_drift``) and a ``contract differences`` testsuite (a testcase per departure from a
    register entry, like a check's). Unchanged when there is none.

    Raises:
        xml.etree.ElementTree.ParseError: ``report`` is not XML.
    """
    checks = [(r, c) for r in results for c in r.checks]
    drift = [(r, d) for r in results for d in r.seed_drift]
    differ = [(r, d) for r in results for d in r.drift if d.differs]
    if not checks and not drift and not differ:
        return report
    root = ET.fromstring(report)
    if checks:
        failed = sum(c.outcome == "failed" or (strict_choices and c.outcome == "differs") for _, c in checks)
        suite = _suite(root, "checks", len(checks), failed, sum(c.outcome == "skipped" for _, c in checks))
        for r, c in checks:
            case = _case(suite, f"checks.{_stem(r.notebook)}", c.name)
            if c.basis:
                case.set("basis", f"{c.kind} {c.basis}")
            if c.outcome == "skipped":
                ET.SubElement(case, "skipped", message=c.reason)
            elif c.outcome == "differs":
                _differs(case, c.basis, c.reason, strict_choices)
            elif c.outcome != "passed":
                failure = ET.SubElement(case, "failure", message=c.reason or c.outcome, type="CheckFailed")
                failure.text = c.cell
    if drift:
        suite = _suite(
            root, "contract drift", len(drift), 0 if allow_drift else len(drift), allow_drift * len(drift)
        )
        for r, d in drift:
            case = _case(suite, f"drift.{_stem(r.notebook)}", f"{d.operation} {d.field}")
            message = f"expected {d.expected}, got {d.got}"
            message += f" (request {d.request_id})" if d.request_id else ""
            if allow_drift:
                ET.SubElement(case, "skipped", message=f"contract drift allowed (--allow-drift): {message}")
            else:
                ET.SubElement(case, "failure", message=message, type="ContractDrift").text = str(d)
    if differ:
        suite = _suite(root, "contract differences", len(differ), strict_choices * len(differ), 0)
        for r, d in differ:
            case = _case(suite, f"differs.{_stem(r.notebook)}", f"{d.operation} {d.field}")
            text = f"differs from {d.basis}: {d}"
            _differs(case, d.basis, text, strict_choices)
    root.set("tests", str(len(root.findall(".//testcase"))))
    root.set("failures", str(len(root.findall(".//testcase/failure"))))
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def _case(suite: ET.Element, classname: str, name: str) -> ET.Element:
    return ET.SubElement(suite, "testcase", classname=classname, name=name, time="0")


def _stem(notebook: str) -> str:
    return Path(notebook.split("[", 1)[0]).stem + (f"[{notebook.split('[', 1)[1]}" if "[" in notebook else "")


def _suite(root: ET.Element, name: str, tests: int, failures: int, skipped: int) -> ET.Element:
    return ET.SubElement(
        root,
        "testsuite",
        name=name,
        tests=str(tests),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
        time="0",
        timestamp=time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
    )


def junit(results: Sequence[NotebookResult], params: Mapping[str, Any], notebooks_dir: Path) -> bytes:
    """A JUnit XML report: one ``testcase`` per notebook, a ``failure`` for each that did not pass.

    Raises:
        Nothing.
    """
    total = round(sum(r.seconds for r in results), 3)
    failures = sum(not r.ok for r in results)
    suites = ET.Element(
        "testsuites", name="kit regress", tests=str(len(results)), failures=str(failures), time=str(total)
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="notebooks",
        tests=str(len(results)),
        failures=str(failures),
        errors="0",
        skipped="0",
        time=str(total),
        timestamp=time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
    )
    props = ET.SubElement(suite, "properties")
    for key, value in params.items():
        ET.SubElement(props, "property", name=key, value=repr(value))
    for r in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname="notebooks",
            name=Path(r.notebook).stem,
            file=str(notebooks_dir / r.notebook),
            time=str(r.seconds),
        )
        if not r.ok:
            kind = "Leak" if r.status == "leaked" else (r.error or "Error").split(":")[0]
            failure = ET.SubElement(case, "failure", message=r.message, type=kind)
            failure.text = r.details
        if r.notes or r.stderr:
            ET.SubElement(case, "system-err").text = "\n".join([*r.notes, r.stderr]).strip()
    ET.indent(suites)
    return ET.tostring(suites, encoding="utf-8", xml_declaration=True)


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
