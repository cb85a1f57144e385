"""From an executed notebook to a :class:`~kit.regress.model.NotebookResult`.

The worker's outcome (:func:`kit.regress.worker.execute`) and the executed notebook say
whether a cell failed and which; the leak scanner says whether an output leaked. A notebook
that leaked is rewritten with each value replaced by its marker, ``<kind>`` — CI keeps the
output folder as an artifact — and every text that reaches a report is redacted too. The
notebook's named checks (:data:`kit.notebook.CHECK_MIME_TYPE`) and the contract drift its kernel met
(:data:`kit.notebook.DRIFT_MIME_TYPE`) are read from the displays they left in the outputs.

Example::

    >>> result = analyse(Path("notebooks/00_quickstart.ipynb"), Path("out/regress/00_quickstart.ipynb"),
    ...                  outcome, secrets=[])  # doctest: +SKIP
    >>> result.status                          # doctest: +SKIP
    'passed'
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kit import _files as files
from kit import _plural
from kit._drift import Drift
from kit.notebook import CHECK_MIME_TYPE, DRIFT_MIME_TYPE
from kit.notebook.observe import Observation
from kit.regress import leaks
from kit.regress.model import CheckResult, NotebookResult
from kit.regress.scanner import ANSI

__all__ = ["analyse"]

_ERROR_CHARS = 240
_STDERR_LINES = 200
# jupyter_client interrupts every kernel before shutting it down (SIGINT, then
# shutdown_request); a kernel caught inside a message handler logs this line. Not a finding.
_BENIGN_STDERR = re.compile(r"\[IPKernelApp\] ERROR \| KeyboardInterrupt caught in kernel\.?$")


def _short(text: str, secrets: Sequence[str]) -> str:
    text = leaks.redact(text, secrets=secrets)
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= _ERROR_CHARS else line[: _ERROR_CHARS - 1] + "…"


def _error_of(cell: Mapping[str, Any]) -> dict[str, Any] | None:
    return next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)


def _failing_cell(nb: Mapping[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """The cell papermill marked failed (or left running: a time-out), and its error output.

    A time-out leaves its cell "completed" with the interrupt's error output; on a loaded machine
    the notebook may be written before that output arrives, and then the failing cell is the last
    one papermill started (the cells after it are left "pending", never started)."""
    cells = list(enumerate(nb.get("cells", []), start=1))
    marked = [
        (i, c)
        for i, c in cells
        if c.get("metadata", {}).get("papermill", {}).get("exception")
        or c.get("metadata", {}).get("papermill", {}).get("status") in ("failed", "running")
    ]
    started = [(i, c) for i, c in cells if c.get("metadata", {}).get("papermill", {}).get("start_time")]
    found = marked or [(i, c) for i, c in cells if _error_of(c) is not None] or started[-1:]
    if not found:
        return None, None
    i, cell = found[0]
    count = cell.get("execution_count")
    return f"cell {i}" + (f" (In [{count}])" if count else ""), _error_of(cell)


def _displays(nb: Mapping[str, Any], mime: str) -> list[tuple[str, Any]]:
    """``(cell, data)`` of every display of MIME type ``mime``, in order."""
    found = []
    for i, cell in enumerate(nb.get("cells", []), start=1):
        for out in cell.get("outputs", []):
            data = out.get("data", {}) if isinstance(out, Mapping) else {}
            if isinstance(data, Mapping) and isinstance(data.get(mime), Mapping):
                found.append((f"cell {i}", data[mime]))
    return found


def _checks(nb: Mapping[str, Any], secrets: Sequence[str]) -> tuple[CheckResult, ...]:
    """The named checks the notebook displayed (:mod:`kit.notebook`), texts redacted."""
    found = []
    for cell, mark in _displays(nb, CHECK_MIME_TYPE):
        name = leaks.redact(str(mark.get("name", "")), secrets=secrets)
        reason = leaks.redact(str(mark.get("reason", "")), secrets=secrets)
        kind, basis = str(mark.get("kind", "")), str(mark.get("basis", ""))
        observed = _observed(mark.get("observed"), secrets)
        found.append(CheckResult(name, str(mark.get("outcome", "")), reason, cell, kind, basis, observed))
    return tuple(found)


def _observed(marks: Any, secrets: Sequence[str]) -> tuple[dict[str, Any], ...]:
    """A difference's observations (:mod:`kit.notebook.observe`), each kept only when valid
    and when nothing in it looks like a leak (:func:`kit.regress.leaks.scan_text`)."""
    found = []
    for mark in marks if isinstance(marks, list) else []:
        seen = Observation.of(mark)
        if seen is not None and not leaks.scan_text(json.dumps(seen.data()), secrets=secrets):
            found.append(seen.data())
    return tuple(found)


def _drift(nb: Mapping[str, Any], secrets: Sequence[str]) -> tuple[Drift, ...]:
    """The contract drift the kernel displayed after its cells (:mod:`kit.notebook`)."""
    names = ("kind", "operation", "field", "expected", "got", "request_id", "basis")
    found = []
    for _, mark in _displays(nb, DRIFT_MIME_TYPE):
        for row in mark.get("drift", []):
            if isinstance(row, Mapping):
                kind, operation, where, expected, got, rid, basis = (
                    leaks.redact(str(row.get(n) or ""), secrets=secrets) for n in names
                )
                found.append(Drift(kind, operation, where, expected, got, rid or None, basis))
    return tuple(found)


#: The outputs whose text is markup: a marker in them is written escaped.
_MARKUP = ("text/html", "image/svg+xml")


def _redact_notebook(output: Path, nb: Mapping[str, Any], secrets: Sequence[str]) -> None:
    """Rewrite an executed notebook with each leak replaced by its marker, ``<kind>``
    (escaped in an HTML output, so that it shows)."""

    def clean(value: Any, markup: bool = False) -> Any:
        if isinstance(value, str):
            return leaks.redact(value, secrets=secrets, markup=markup)
        if isinstance(value, list):
            return [clean(v, markup) for v in value]
        if isinstance(value, dict):
            return {k: clean(v, markup or k in _MARKUP) for k, v in value.items()}
        return value

    text = json.dumps(clean(nb), indent=1, ensure_ascii=False, sort_keys=True)
    files.write(output, text + "\n")


def _read(output: Path) -> dict[str, Any]:
    """The executed notebook, or ``{}`` when there is none (papermill failed before writing)."""
    if output.is_file():
        with contextlib.suppress(ValueError, OSError):
            return dict(json.loads(output.read_text(encoding="utf-8")))
    return {}


def _redacted(output: Path, nb: Mapping[str, Any], secrets: Sequence[str]) -> str:
    """Rewrite a leaking executed notebook redacted; the note that says how that went."""
    _redact_notebook(output, nb, secrets)
    if leaks.scan_notebook(output, secrets=secrets):
        return "some leaks could not be redacted from the executed notebook: delete it"
    return "the leaked values were redacted from the executed notebook"


def _notes(nb: Mapping[str, Any], stderr: Sequence[str], secrets: Sequence[str]) -> list[str]:
    """The kernel's stderr and the cells that wrote to stderr."""
    notes: list[str] = []
    if stderr:
        lines = _plural.counted(len(stderr), "line")
        notes.append(f"the kernel wrote {lines} to stderr, first: {_short(stderr[0], secrets)}")
    for i, cell in enumerate(nb.get("cells", []), start=1):
        if any(o.get("name") == "stderr" for o in cell.get("outputs", [])):
            notes.append(f"cell {i} wrote to stderr (nbval compares it: a warning breaks validation)")
    return notes


def _verdict(
    nb: Mapping[str, Any],
    output: Path,
    raw: Mapping[str, Any] | None,
    findings: Sequence[leaks.Finding],
    secrets: Sequence[str],
) -> tuple[str, str | None, str | None, str]:
    """``(status, cell, error, details)`` from the worker's error and the leaks found."""
    cell, error, details = None, None, ""
    if raw is not None:
        cell, err_output = _failing_cell(nb)
        ename = raw["ename"]
        error = f"{ename}: {_short(raw['evalue'], secrets)}" if raw["evalue"].strip() else ename
        traceback = raw["traceback"] or (err_output or {}).get("traceback", [])
        details = leaks.redact(ANSI.sub("", "\n".join(traceback) or raw["evalue"]), secrets=secrets)
        status = "failed"
    elif findings:
        status = "leaked"
        kinds = sorted({f.kind for f in findings})
        cell = findings[0].location.removeprefix(str(output) + ": ").split(",")[0]
        error = f"leak: {', '.join(kinds)} ({_plural.counted(len(findings), 'finding')})"
    else:
        status = "passed"
    if findings and status == "failed":
        error = f"{error} — and leaks: {', '.join(sorted({f.kind for f in findings}))}"
    if findings:
        details = "\n".join([details, *map(str, findings)]).strip()
    return status, cell, error, details


def analyse(path: Path, output: Path, outcome: Mapping[str, Any], secrets: Sequence[str]) -> NotebookResult:
    """The result of one notebook: its status, failing cell, error, leaks and notes, redacted.

    ``path`` is the source notebook, ``output`` the executed one, ``outcome`` what the worker
    returned, ``secrets`` literal values that must not appear anywhere (the sandbox token).

    Raises:
        OSError: when a leaking executed notebook cannot be rewritten.
    """
    nb = _read(output)
    findings = tuple(leaks.scan_notebook(nb, secrets=secrets, name=str(output))) if nb else ()
    notes = [f"papermill: {_short(m, secrets)}" for m in outcome["notes"]]
    if findings:
        notes.append(_redacted(output, nb, secrets))
    stderr = [line for line in outcome["stderr"] if not _BENIGN_STDERR.search(line)]
    notes += _notes(nb, stderr, secrets)
    status, cell, error, details = _verdict(nb, output, outcome["error"], findings, secrets)
    return NotebookResult(
        notebook=path.name,
        status=status,
        seconds=round(outcome["seconds"], 2),
        output=output,
        cell=cell,
        error=error,
        details=details,
        findings=findings,
        notes=tuple(notes),
        stderr=leaks.redact("\n".join(stderr[:_STDERR_LINES]), secrets=secrets),
        checks=_checks(nb, secrets),
        drift=_drift(nb, secrets),
    )
