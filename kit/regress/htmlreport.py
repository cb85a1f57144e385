"""``OUT/report.html``: the run as a page to open, beside ``summary.md`` and ``junit.xml``.

The same run as ``summary.md`` and ``results.json`` (the results and the record of
:func:`kit.regress.record.build`; the headline, counts and rows of :mod:`kit.regress.reports`
and :mod:`kit.regress.history`), rendered for a person: the headline (notebooks and checks
counted, profile and server, duration, parameters), what changed **since the last run** first,
a table of the notebooks with a link to each executed notebook (relative, in OUT), then one
``<details>`` per notebook (open when it did not pass) with its attempts and its named checks —
name, basis (a spec statement or a register entry), outcome, cell and reason — then the skipped
checks with their reasons, leaks, contract drift, differences from the register and notes.

The page is self-contained: inline CSS, no script, no font, image or style sheet fetched, and a
``Content-Security-Policy`` that forbids the browser to fetch any. The API server appears as
text, never as a link. An outcome is always written in words (a symbol and a colour beside it).
Every text is escaped (:func:`html.escape`, after :func:`kit.regress.junit.clean` for the
characters a page should not hold), so the page is also well-formed XML; it is scanned for
leaks like every report, HTML escapes decoded (:mod:`kit.regress.decoding`).

Example::

    >>> page = render(results, record.build(results, ...), Path("out/regress"))  # doctest: +SKIP
    >>> (Path("out/regress") / FILE).write_text(page, encoding="utf-8")           # doctest: +SKIP
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from kit import _plural
from kit.regress import history, reports
from kit.regress.junit import clean
from kit.regress.model import CheckResult, NotebookResult

__all__ = ["FILE", "render"]

#: The page's name in OUT.
FILE = "report.html"

_SYMBOLS = {
    "passed": "✓",
    "failed": "✗",
    "leaked": "⚠",
    "flaky": "↻",
    "skipped": "–",
    "differs": "≠",
}
_BASES = {"spec": "spec statement", "choice": "register entry"}
_NUMERIC = ("seconds", "ran", "passed", "failed", "skipped", "differ", "how many", "attempt", "times")
_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
_CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem 1.5rem;
  color: #1b1b1b; background: #fff; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ccc; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
table { border-collapse: collapse; margin: .5rem 0 1rem; width: 100%; }
caption { text-align: left; font-weight: 600; padding: .3rem 0; }
th, td { border: 1px solid #ccc; padding: .25rem .5rem; text-align: left; vertical-align: top; }
thead th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font-size: .92em; }
details { border: 1px solid #ccc; border-radius: 4px; margin: .5rem 0; padding: .3rem .7rem; }
details > summary { cursor: pointer; }
details[open] > summary { margin-bottom: .4rem; }
.outcome { display: inline-block; min-width: 5.5rem; padding: 0 .4rem; border-radius: 3px;
  border-left: 4px solid; font-weight: 600; white-space: nowrap; }
.o-passed { background: #e3f4e6; border-color: #1e7b34; color: #14532d; }
.o-failed, .o-leaked { background: #fde4e4; border-color: #b42318; color: #7a1010; }
.o-flaky { background: #fff2d6; border-color: #b26b00; color: #5c3800; }
.o-skipped { background: #eeeeee; border-color: #666; color: #333; }
.o-differs { background: #e6ecfb; border-color: #2d4fb3; color: #1c2f6b; }
a:focus, summary:focus { outline: 2px solid #2d4fb3; outline-offset: 2px; }
"""


def _t(text: Any) -> str:
    """``text`` as page text: the characters XML does not allow written ``#xHH``, then escaped."""
    return html.escape(clean(text), quote=True)


def _outcome(outcome: str) -> str:
    symbol = _SYMBOLS.get(outcome, "")
    mark = f'<span aria-hidden="true">{symbol}</span> ' if symbol else ""
    return f'<span class="outcome o-{_t(outcome)}">{mark}{_t(outcome)}</span>'


def _basis(check: CheckResult) -> str:
    if not check.basis:
        return "<em>none</em>"
    return f"{_t(_BASES.get(check.kind, check.kind))} <code>{_t(check.basis)}</code>"


def _table(caption: str, head: Sequence[str], rows: Iterable[Sequence[str]], ident: str) -> list[str]:
    """A table of escaped cells (``caption`` too): each row's first cell is its header, a
    column of numbers is right-aligned."""
    numeric = {i for i, h in enumerate(head) if h in _NUMERIC}
    out = [f'<table id="{ident}">', f"<caption>{caption}</caption>", "<thead><tr>"]
    out += [f'<th scope="col">{_t(h)}</th>' for h in head] + ["</tr></thead><tbody>"]
    for row in rows:
        cells = [f'<th scope="row">{row[0]}</th>']
        cells += [
            f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(row) if i
        ]
        out.append("<tr>" + "".join(cells) + "</tr>")
    return [*out, "</tbody></table>"]


def _section(ident: str, title: str, body: Iterable[str]) -> list[str]:
    return [
        f'<section id="{ident}" aria-labelledby="{ident}-h">',
        f'<h2 id="{ident}-h">{title}</h2>',
        *body,
        "</section>",
    ]


def _link(path: Path, out: Path) -> str:
    """A relative link from the page to ``path`` when it is a file in ``out`` (else ``""``)."""
    try:
        relative = Path(os.path.relpath(path.resolve(), out.resolve())) if path.is_file() else None
    except (OSError, ValueError):
        relative = None
    if relative is None or relative.parts[:1] == ("..",):
        return ""
    return f'<a href="{_t(quote(relative.as_posix()))}">{_t(relative.as_posix())}</a>'


def _counted(things: Iterable[str], order: Sequence[str]) -> str:
    seen = list(things)
    parts = [f"{seen.count(o)} {o}" for o in [*order, *sorted(set(seen) - set(order))] if o in seen]
    return f"{len(seen)}" + (f" ({', '.join(parts)})" if parts else "")


def _duration(data: Mapping[str, Any]) -> str:
    try:
        took = datetime.fromisoformat(str(data["ended"])) - datetime.fromisoformat(str(data["started"]))
    except (KeyError, ValueError):
        return "unknown"
    minutes, seconds = divmod(max(0.0, took.total_seconds()), 60)
    shown = f"{int(minutes)} min {seconds:.0f} s" if minutes else f"{seconds:.0f} s"
    return f"{shown} (started {data['started']}, ended {data['ended']})"


def _facts(results: Sequence[NotebookResult], data: Mapping[str, Any]) -> list[str]:
    """The headline's facts: counts, profile and server, duration, parameters, settings."""
    settings, params = data.get("settings", {}), data.get("parameters", {})
    servers: Mapping[str, str] = settings.get("servers") or {}
    server = "; ".join(f"{name}: {where}" for name, where in servers.items())
    jobs = settings.get("jobs", 1)
    rows = [
        ("Notebooks", _counted((r.status for r in results), ("passed", "flaky", "failed", "leaked"))),
        ("Checks", _counted((c.outcome for r in results for c in r.checks), tuple(_SYMBOLS))),
        ("Profile", ", ".join(servers) or str(params.get("profile", "sim"))),
        ("Server", next(iter(servers.values())) if len(servers) == 1 else server or "not recorded"),
        ("Duration", _duration(data)),
        ("Parameters", ", ".join(f"{k}={v!r}" for k, v in params.items()) or "none"),
        (
            "Settings",
            f"{_plural.counted(jobs, 'job')}, cell time-out {settings.get('cell_timeout', 0):g} s, "
            f"reruns {settings.get('reruns', 0)}",
        ),
        ("Versions", f"kit {data.get('kit_version', '?')}, API {data.get('api_version', '?')}"),
    ]
    lines = [f'<dt>{k}</dt><dd id="fact-{k.lower()}">{_t(v)}</dd>' for k, v in rows]
    return ['<dl class="facts">', *lines, "</dl>"]


def _since(data: Mapping[str, Any], source: str | None) -> list[str]:
    """**Since the last run** (:func:`kit.regress.history.rows`), or why nothing is compared."""
    since = data.get("since_last_run")
    if since is None:
        body = ["<p>No earlier run to compare with: this run is the first one kept.</p>"]
    else:
        rows = [(_t(what), str(len(which)), _t(", ".join(which))) for what, which in history.rows(since)]
        body = [
            f"<p>Compared with the run started {_t(since['baseline_started'])} "
            f"(<code>{_t(source or '')}</code>).</p>",
            *_table("What changed", ("what", "how many", "which"), rows, "since-table"),
        ]
    return _section("since", "Since the last run", body)


def _notebooks(results: Sequence[NotebookResult], out: Path) -> list[str]:
    rows: list[tuple[str, ...]] = []
    for i, r in enumerate(results, start=1):
        n, (cell, error) = reports.check_counts(r), reports.failure_text(r)
        counts = (str(v) for v in (n.ran, n.passed, n.failed, n.skipped, n.differ))
        link = _link(r.output, out) or "<em>none written</em>"
        shown = (f'<a href="#nb-{i}">{_t(r.notebook)}</a>', _outcome(r.status), f"{r.seconds:.2f}")
        rows.append((*shown, *counts, _t(cell), _t(error), link))
    counted = ("ran", "passed", "failed", "skipped", "differ")
    head = ("notebook", "status", "seconds", *counted, "failing cell", "error", "executed notebook")
    table = _table("Every notebook of the run, its status and its checks", head, rows, "notebooks")
    return _section("notebooks-s", "Notebooks", table)


def _attempts(r: NotebookResult, i: int) -> list[str]:
    """A rerun notebook's attempts (``--reruns``): each earlier one failed, then the last."""
    if not r.attempts:
        return []
    rows = [
        (str(n), _outcome("failed"), f"{a.seconds:.2f}", _t(a.message)) for n, a in enumerate(r.attempts, 1)
    ]
    last = "passed" if r.status == "flaky" else r.status
    message = "" if last == "passed" else r.message
    rows.append((str(len(r.attempts) + 1), _outcome(last), f"{r.seconds:.2f}", _t(message)))
    head = ("attempt", "outcome", "seconds", "message")
    return _table(f"Attempts of {_t(r.notebook)} (--reruns)", head, rows, f"attempts-{i}")


def _details(i: int, r: NotebookResult, out: Path) -> list[str]:
    """One notebook's ``<details>``: open when it did not pass."""
    opened = "" if r.status == "passed" else ' open=""'
    checks = f"{_plural.counted(len(r.checks), 'check')}, {reports.check_counts(r).failed} failed"
    wire = _link(r.output.with_suffix(".har"), out)
    lines = [
        f'<details id="nb-{i}" class="notebook"{opened}>',
        f"<summary>{_outcome(r.status)} <strong>{_t(r.notebook)}</strong> — {checks} · "
        f"{r.seconds:.2f} s</summary>",
        f"<p>Executed notebook: {_link(r.output, out) or '<em>none written</em>'}"
        + (f" · its wire (HAR): {wire}" if wire else "")
        + "</p>",
    ]
    if r.message:
        said = "First failure" if r.status == "flaky" else "Failure"
        lines.append(f"<p><strong>{said}:</strong> {_t(r.message)}</p>")
    lines += _attempts(r, i)
    rows = [(_t(c.name), _basis(c), _outcome(c.outcome), _t(c.cell), _t(c.reason)) for c in r.checks]
    head = ("check", "basis", "outcome", "cell", "reason")
    lines += _table(f"Named checks of {_t(r.notebook)}", head, rows, f"checks-{i}") if rows else []
    lines += ["<ul>", *(f"<li>{_t(note)}</li>" for note in r.notes), "</ul>"] if r.notes else []
    return [*lines, "</details>"]


def _skips(results: Sequence[NotebookResult]) -> list[str]:
    rows = [
        (_t(c.name), _t(r.notebook), _basis(c), _t(c.cell), _t(c.reason))
        for r in results
        for c in r.checks
        if c.outcome == "skipped"
    ]
    head = ("check", "notebook", "basis", "cell", "reason")
    body = (
        _table("Each skipped check and why", head, rows, "skips")
        if rows
        else ["<p>No check was skipped.</p>"]
    )
    return _section("skips-s", "Skipped checks", body)


def _others(results: Sequence[NotebookResult], data: Mapping[str, Any]) -> list[str]:
    """Leaks, contract drift, differences from the register, parameter sets, notes: as in
    ``summary.md``, each only when there is one."""
    out: list[str] = []
    found = [(_t(f.location), _t(f.kind), _t(f.hint)) for r in results for f in r.findings]
    if found:
        table = _table("Where (the value is never shown)", ("where", "kind", "what to do"), found, "leaks")
        out += _section("leaks-s", "Leaks", table)
    drift = [
        tuple(
            _t(v) for v in (r.notebook, d.operation, d.field, d.expected, d.got, d.request_id or "", d.basis)
        )
        for r in results
        for d in r.seed_drift
    ]
    if drift:
        head = ("notebook", "operation", "field or header", "expected", "got", "request id", "spec")
        table = _table("Each answer that departed from what the spec states", head, drift, "drift")
        out += _section("drift-s", "Contract drift", table)
    counted = reports.counted_differences(results)
    if counted:
        rows = [(*(_t(v) for v in key), str(times)) for key, times in counted.items()]
        columns = ("entry", "notebook", "what", "cell", "how", "times")
        intro = (
            '<p>The simulator chose otherwise where the spec says "not shown" (<code>data/assumptions.toml'
            "</code>). Not a failure unless <code>--strict-choices</code>.</p>"
        )
        table = _table("Each departure from a register entry", columns, rows, "differences")
        out += _section("differences-s", "Differences from the simulator's choices", [intro, *table])
    sets = data.get("sets") or {}
    if sets:
        said = {
            name: ", ".join(f"{k}={v!r}" for k, v in values.items()) or "none"
            for name, values in sets.items()
        }
        out += _section(
            "sets-s",
            "Parameter sets",
            ["<ul>", *(f"<li><code>{_t(k)}</code>: {_t(v)}</li>" for k, v in said.items()), "</ul>"],
        )
    notes = [f"<li>{_t(r.notebook)}: {_t(n)}</li>" for r in results for n in r.notes]
    return out + (_section("notes-s", "Notes", ["<ul>", *notes, "</ul>"]) if notes else [])


def render(
    results: Sequence[NotebookResult],
    data: Mapping[str, Any],
    out: Path,
    *,
    compare: bool = False,
    source: str | None = None,
) -> str:
    """The page of a run: ``results`` and its record ``data`` (:func:`kit.regress.record.build`,
    with ``since_last_run``); ``out`` the folder it is written to (its links are relative to
    it); ``compare`` whether the run was compared with another (``--history``, ``--baseline``),
    ``source`` where that one came from.

    Raises:
        Nothing.
    """
    title = f"kit regress: {reports.headline(results)}"
    own = [f'<a href="{name}">{name}</a>' for name in ("summary.md", "junit.xml", "results.json")]
    lines = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8" />',
        '<meta name="viewport" content="width=device-width, initial-scale=1" />',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}" />',
        '<meta name="referrer" content="no-referrer" />',
        f"<title>{_t(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        '<header id="headline">',
        f"<h1>{_t(title)}</h1>",
        *_facts(results, data),
        f"<p>The same run: {' · '.join(own)}; the executed notebooks are in this folder.</p>",
        "</header>",
        "<main>",
        *(_since(data, source) if compare else []),
        *_notebooks(results, out),
        '<section id="each-s" aria-labelledby="each-h">',
        '<h2 id="each-h">Each notebook</h2>',
        *(line for i, r in enumerate(results, start=1) for line in _details(i, r, out)),
        "</section>",
        *_skips(results),
        *_others(results, data),
        "</main>",
        "</body>",
        "</html>",
    ]
    return "\n".join(lines) + "\n"
