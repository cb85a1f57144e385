"""What a run tells: ``summary.md`` (also printed), ``junit.xml`` for CI, a progress bar.

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

__all__ = ["junit", "progress", "summary"]


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
    notes = [f"- {r.notebook}: {n}" for r in results for n in r.notes]
    if notes:
        lines += ["", "## Notes", "", *notes]
    return "\n".join(lines) + "\n"


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
