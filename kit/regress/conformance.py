"""What a run against another server tells of the register: ``OUT/conformance.md`` and ``.json``,
and ``--write-choices FILE``, the differences as a choice overlay.

Every ``kit regress`` run on a profile other than ``sim`` writes the conformance table
(:mod:`kit.notebook.conformity`) of its notebooks: a row per register entry — confirmed,
differs (the simulator's value, the server's answer, the notebook, cell and check or call), or
not observed and why — then the spec's statements checked, passed or violated. The first line
counts them: ``N entries: C confirmed, D differ, U not observed; S seed statements checked, V
violated``. A section follows with each entry's verdict from the run's traffic — confirmed,
contradicted or never exercised, and the exchange that showed it (:mod:`kit.regress.exercised`,
whose docstring gives the JSON form, ``verdicts``) — and the exchanges the contract could not
place (``unplaced``). ``kit proxy`` writes the same files through :func:`write`. Both files are
scanned for leaks like the other reports.

:func:`overlay_text` writes what differed as a choice overlay (:mod:`kit._choices`): one
``[Axx]`` table per differing entry, only the keys observed, a comment saying where. Only keys a
simulator can serve are written (:data:`kit._choices.SERVED`), so the same file loads in
``kit serve --choices FILE`` (a simulator that answers like that server) and ``kit regress
--choices FILE`` (a run that expects them); what differed otherwise is listed in comments.

Example::

    >>> table = from_results(report.results, notebooks_dir="notebooks")   # doctest: +SKIP
    >>> write(table, Path("out/regress"))                                # doctest: +SKIP
    (PosixPath('out/regress/conformance.md'), PosixPath('out/regress/conformance.json'))
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kit import _choices as choices
from kit import _files as files
from kit._dialect import DEFAULT, Dialect
from kit._tomltext import key as toml_key
from kit._tomltext import value as toml_value
from kit.notebook.conformity import Seen, Table, build, of_check, of_drift, shown
from kit.regress import exercised
from kit.regress.model import NotebookResult

__all__ = [
    "FILES",
    "checked_in",
    "expected_dialect",
    "from_results",
    "overlay_text",
    "report",
    "unobserved_lines",
    "write",
    "write_choices",
]

#: The files a run writes in its output folder (scanned for leaks with the other reports).
FILES = ("conformance.md", "conformance.json")
_CHOICE = re.compile(r"""choice\s*=\s*\\?["'](A\d\d)\\?["']""")


def checked_in(notebooks_dir: str | os.PathLike[str] | None) -> dict[str, list[str]]:
    """Entry id → the notebooks of ``notebooks_dir`` whose checks name it (``choice="A15"``)."""
    found: dict[str, list[str]] = {}
    if notebooks_dir is None or not Path(notebooks_dir).is_dir():
        return found
    for path in sorted(Path(notebooks_dir).glob("[0-9][0-9]_*.ipynb")):
        for entry in sorted(set(_CHOICE.findall(path.read_text(encoding="utf-8", errors="replace")))):
            found.setdefault(entry, []).append(path.name)
    return found


def from_results(
    results: Sequence[NotebookResult],
    notebooks_dir: str | os.PathLike[str] | None = None,
    expected: str | os.PathLike[str] | None = None,
) -> Table:
    """The conformance table of a run's results (checks and contract rows, in order); ``expected``
    the overlay file its choice checks expected (``--choices``).

    Raises:
        ChoicesError: ``expected`` is not a valid overlay.
    """
    seen: list[Seen | None] = []
    for r in results:
        seen += [of_check(c, f"{r.notebook} {c.cell}".strip()) for c in r.checks]
        seen += [of_drift(d, r.notebook) for d in r.drift]
    ran = {r.notebook.split("[", 1)[0] for r in results}
    elsewhere = {e: [nb for nb in nbs if nb not in ran] for e, nbs in checked_in(notebooks_dir).items()}
    overlay = choices.load(expected) if expected else None
    return build((s for s in seen if s is not None), elsewhere=elsewhere, expected=overlay)


def write(
    table: Table,
    out: Path,
    *,
    calls: Sequence[exercised.Call] = (),
    dialect: Dialect = DEFAULT,
    unplaced: Sequence[Mapping[str, Any]] = (),
) -> tuple[Path, Path]:
    """Write ``conformance.md`` and ``conformance.json`` in ``out``; their paths. Besides the
    table: the verdict per entry of the run's ``calls`` against ``dialect``, the one it expected
    (:mod:`kit.regress.exercised`: ``verdicts`` in the JSON), and the exchanges the contract
    could not place (``unplaced``: exchange, method, path, status)."""
    verdicts = exercised.judge(calls, dialect, table)
    md, js = out / FILES[0], out / FILES[1]
    files.write(md, table.markdown() + exercised.markdown(verdicts) + _unplaced_md(unplaced))
    data = {**table.data(), "verdicts": exercised.data(verdicts), "unplaced": list(unplaced)}
    files.write(js, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return md, js


def _unplaced_md(unplaced: Sequence[Mapping[str, Any]]) -> str:
    if not unplaced:
        return ""
    lines = [
        "",
        "## Exchanges the contract cannot place",
        "",
        "| exchange | method | path | status |",
        "|---|---|---|---|",
    ]
    lines += [f"| {u['exchange']} | {u['method']} | `{u['path']}` | {u['status']} |" for u in unplaced]
    return "\n".join(lines) + "\n"


def expected_dialect(expected: str | os.PathLike[str] | None) -> Dialect:
    """The dialect a run expected: its ``--choices`` file's, else the simulator's own.

    Raises:
        ChoicesError: ``expected`` is not a valid overlay.
    """
    return Dialect.of(choices.load(expected)) if expected else DEFAULT


def report(
    results: Sequence[NotebookResult],
    out: Path,
    notebooks_dir: str | os.PathLike[str],
    *,
    other: bool,
    expected: str | None = None,
    calls: Sequence[exercised.Call] = (),
) -> list[Path]:
    """What a run writes: the conformance files when it ran on ``other`` profiles than ``sim``
    (a stale copy from an earlier run is removed otherwise), ``calls`` the exchanges of its
    notebooks (:func:`kit.regress.exercised.calls`); the paths written."""
    if not other:
        for name in FILES:
            (out / name).unlink(missing_ok=True)
        return []
    table = from_results(results, notebooks_dir, expected)
    return list(write(table, out, calls=calls, dialect=expected_dialect(expected)))


def _served(entry: str, key: str) -> bool:
    keys = choices.SERVED.get(entry, frozenset())
    return keys is None or key in keys


#: The parts of the wire's spelling a run cannot observe (a path never reached, a name never
#: seen, a header never sent): written commented, with the simulator's value, to be filled in.
_SPELLING = (
    ("A67", "paths"),
    ("A68", "field_case"),
    ("A68", "renames"),
    ("A01", "client_auth"),
    ("A02", "header"),
    ("A02", "scheme"),
    ("A05", "session_types"),
    ("A06", "strategies"),
    ("A18", "role_header"),
    ("A20", "header"),
    ("A20", "replayed_header"),
    ("A24", "header"),
    ("A24", "algorithm"),
    ("A27", "header"),
    ("A28", "request_id"),
    ("A28", "session_expires_at"),
    ("A28", "assumptions"),
)


def unobserved_lines(data: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Commented lines of the spelling ``data`` does not re-choose (the simulator's values)."""
    lines = [
        "",
        "# Not observable by a run: how your server spells what the spec does not show. Each line is",
        "# the simulator's choice; uncomment and change what your server does differently",
        "# (kit choices check FILE validates the file).",
    ]
    entry_seen = ""
    for entry, key in _SPELLING:
        if key in data.get(entry, {}):
            continue
        value = choices.EMPTY.chosen(entry, key)
        if isinstance(value, Mapping) and value:
            lines += [f"# [{entry}.{toml_key(key)}]"] + [
                f"# {toml_key(k)} = {toml_value(v)}" for k, v in value.items()
            ]
            entry_seen = ""
            continue
        if entry != entry_seen:
            lines.append(f"# [{entry}]")
            entry_seen = entry
        lines.append(f"# {toml_key(key)} = {toml_value(value)}")
    return lines


def overlay_text(table: Table, *, source: str = "", expected: choices.Overlay | None = None) -> str:
    """The differing entries of ``table`` as a choice overlay (see the module docstring); with
    ``expected`` (the run's ``--choices``), that overlay's values too, the run's observations
    over them: running again with the file written converges on the server's answers.

    Raises:
        ValueError: the text would not be a valid overlay (a bug: every value was validated).
    """
    lines = [
        "# What differed from the simulator's choices"
        + (f" on {source}" if source else "")
        + ", written by kit regress --write-choices.",
        "# Load it in `kit serve --choices FILE` (answer like that server) or `kit regress --choices",
        "# FILE` (expect it). Each table re-chooses only the keys a run observed.",
        f"description = {toml_value('observed differences: ' + table.first_line())}",
    ]
    data: dict[str, dict[str, Any]] = {}
    notes: dict[str, str] = {}
    for entry in expected.entries() if expected is not None else []:
        data[entry] = expected.changes(entry) if expected is not None else {}
        notes[entry] = "expected (--choices), not contradicted by this run"
    unwritten: list[str] = []
    topics = {row.id: row.topic for row in table.entries}
    for row in table.entries:
        if row.status != "differs":
            continue
        keys = [o for o in row.observed if _served(row.id, o.key)]
        for o in row.observed:
            if not _served(row.id, o.key):
                answered = shown(o.answered, o.chosen)
                unwritten.append(f"{row.id} {o.key}: {answered} (a simulator cannot re-choose it)")
        if not keys:
            if not row.observed:
                unwritten.append(f"{row.id}: differs, no value observed ({'; '.join(row.seen[:2])})")
            continue
        notes[row.id] = "observed in " + "; ".join(row.seen[:2]).replace("\n", " ")
        for o in keys:
            base = choices.EMPTY.chosen(row.id, o.key)
            if isinstance(o.answered, Mapping) and isinstance(base, Mapping):  # only the items re-chosen
                data.setdefault(row.id, {})[o.key] = {k: v for k, v in o.answered.items() if base.get(k) != v}
            else:
                data.setdefault(row.id, {})[o.key] = o.answered
    for entry in (row.id for row in table.entries if row.id in data):
        lines += ["", f"[{entry}]  # {topics[entry]}; {notes[entry]}"]
        tables = []
        for key, value in data[entry].items():
            if isinstance(value, Mapping):
                tables += ["", f"[{entry}.{toml_key(key)}]"]
                tables += [f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()]
            else:
                lines.append(f"{toml_key(key)} = {toml_value(value)}")
        lines += tables
    if unwritten:
        lines += ["", "# Also differed, not written:"] + [f"#   {text}" for text in unwritten]
    lines += unobserved_lines(data)
    text = "\n".join(lines) + "\n"
    choices.parse(data)  # a ChoicesError (a ValueError) names entry and key
    return text


def write_choices(
    table: Table,
    path: str | os.PathLike[str],
    *,
    source: str = "",
    expected: str | os.PathLike[str] | None = None,
) -> list[str]:
    """Write :func:`overlay_text` to ``path`` (``expected``: the run's ``--choices`` file); the
    entries written.

    Raises:
        ChoicesError: ``expected`` is not a valid overlay.
    """
    overlay = choices.load(expected) if expected else None
    text = overlay_text(table, source=source, expected=overlay)
    files.write(path, text)
    return choices.load(path).entries()
