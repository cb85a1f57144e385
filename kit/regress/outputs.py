"""The end of a run: every report written to OUT, then scanned for leaks.

``summary.md`` (:mod:`kit.regress.reports`, opening with what changed since the last run when
``--history`` or ``--baseline`` asked), ``report.html`` (the same run as a page to open:
:mod:`kit.regress.htmlreport`), ``junit.xml`` (:mod:`kit.regress.junit`),
``results.json`` (:mod:`kit.regress.record`), the conformance report on a profile other than
``sim`` (:mod:`kit.regress.conformance`); with ``--history DIR`` the record is kept there too
(:mod:`kit.regress.history`). Every report is scanned for leaks
(:func:`kit.regress.leaks.scan_file`): a finding fails the run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kit import _files as files
from kit.regress import conformance, exercised, history, htmlreport, junit, leaks, record, reports
from kit.regress.model import NotebookResult, RegressReport

__all__ = ["Run", "finish"]


@dataclasses.dataclass(frozen=True)
class Run:
    """What the reports need to know of the run besides its results."""

    out: Path
    folder: Path
    params: Mapping[str, Any]
    sets: Mapping[str, Mapping[str, Any]]
    jobs: int
    cell_timeout: float
    started: datetime
    allow_drift: bool = False
    strict_choices: bool = False
    reruns: int = 0
    history: Path | None = None
    #: The run to compare with and where it came from (:func:`kit.regress.history.previous`).
    before: tuple[dict[str, Any], str] | None = None
    compare: bool = False
    #: Each profile the run's notebooks ran on and the server it reached
    #: (:func:`kit.regress.preflight.servers`).
    servers: Mapping[str, str] = dataclasses.field(default_factory=dict)


def _summary(results: Sequence[NotebookResult], run: Run, since: Mapping[str, Any] | None) -> str:
    source = run.before[1] if run.before else None
    opening = history.section(since, source) if run.compare else []
    text = reports.summary(results, run.params, run.out, run.jobs, run.cell_timeout, since=opening)
    if run.sets:
        text += "\n## Parameter sets\n\n" + "".join(
            f"- `{name}`: " + (", ".join(f"`{k}={v!r}`" for k, v in values.items()) or "none") + "\n"
            for name, values in run.sets.items()
        )
    return text


def finish(
    results: Sequence[NotebookResult],
    run: Run,
    *,
    secrets: Sequence[Any],
    other: bool,
    expected: str | None,
    calls: Sequence[exercised.Call] = (),
) -> RegressReport:
    """Write the reports of ``results`` to ``run.out``, scan them; the run's report.

    ``secrets`` are literal values and token fingerprints that must appear nowhere; ``other``
    and ``expected`` are the conformance report's (a profile other than ``sim``, an overlay),
    ``calls`` the exchanges its verdicts per entry read (:mod:`kit.regress.exercised`).

    Raises:
        OSError: a report cannot be written.
    """
    out = run.out
    report = RegressReport(
        tuple(results),
        out,
        out / "junit.xml",
        out / "summary.md",
        "",
        run.params,
        allow_drift=run.allow_drift,
        strict_choices=run.strict_choices,
    )
    settings = {
        "jobs": run.jobs,
        "cell_timeout": run.cell_timeout,
        "reruns": run.reruns,
        "servers": dict(run.servers),
    }
    data = record.build(
        results,
        parameters=run.params,
        sets=run.sets,
        started=run.started,
        ended=datetime.now(UTC),
        exit_code=report.exit_code,
        settings=settings,
    )
    since = history.compare(run.before[0], data) if run.before else None
    data["since_last_run"] = since
    text = _summary(results, run, since)
    report = dataclasses.replace(report, summary=text)
    props = history.properties(since)
    xml = junit.report(
        results, run.params, allow_drift=run.allow_drift, strict_choices=run.strict_choices, since=props
    )
    files.write(report.junit, xml)
    files.write(report.summary_path, text)
    source = run.before[1] if run.before else None
    page = htmlreport.render(results, data, out, compare=run.compare, source=source)
    files.write(out / htmlreport.FILE, page)
    record.write(out, data)
    conformance.report(results, out, run.folder, other=other, expected=expected, calls=calls)
    written = [out / name for name in (*leaks.REPORTS, record.FILE) if (out / name).is_file()]
    found = tuple(f for path in written for f in leaks.scan_file(path, secrets=list(secrets)))
    report = dataclasses.replace(report, findings=found)
    if report.exit_code != data["exit_code"]:  # a report leaked: the record says how the run ended
        data["exit_code"] = report.exit_code
        record.write(out, data)
    if run.history is not None and not found:
        history.keep(run.history, data)
    return report
