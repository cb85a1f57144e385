"""``OUT/results.json``: a run as data, and :func:`load` to read one back as DataFrames.

The file holds the run's parameters (and parameter sets), the kit's version and the API
version the notebooks spoke, when it started and ended, its exit status, and one record per
notebook (status — ``passed``, ``failed``, ``leaked`` or ``flaky`` —, seconds, failing cell,
error, earlier failed attempts), per named check (notebook, cell, title, basis — a spec
statement id or a register entry —, outcome — ``passed``, ``failed``, ``skipped``, ``differs``
or ``flaky`` —, expected and got when the check compared, message), per difference from a
register entry and per contract drift; ``since_last_run`` is the comparison with the previous
run (:mod:`kit.regress.history`) or ``null``. Its JSON Schema is
``data/schemas/results.schema.json`` (:data:`SCHEMA`); ``format`` is :data:`FORMAT`.

Every text in it comes redacted from the analysis of the executed notebooks, and the file is
scanned for leaks like the other reports.

Example::

    >>> run = load("out/regress")                     # doctest: +SKIP
    >>> run.notebooks[["notebook", "status", "seconds"]]  # doctest: +SKIP
    >>> run.checks.query("outcome == 'differs'")        # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from kit import _files as files
from kit import register
from kit.regress.model import NotebookResult, RegressError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FILE", "FORMAT", "SCHEMA", "Loaded", "build", "load", "read", "write"]

#: The file's name in OUT.
FILE = "results.json"
#: The version of the file's shape; :func:`load` refuses another.
FORMAT = 1
#: The JSON Schema the file follows.
SCHEMA = register.data_dir() / "schemas" / "results.schema.json"

_COMPARED = re.compile(r"expected (?P<expected>.*), got (?P<got>.*)$", re.DOTALL)


class Loaded(NamedTuple):
    """A run read back: ``notebooks`` and ``checks`` as DataFrames, ``run`` the rest (the
    parameters, versions, times, exit status, ``since_last_run``)."""

    notebooks: pd.DataFrame
    checks: pd.DataFrame
    run: dict[str, Any]


def _set_of(label: str) -> str | None:
    return label.partition("[")[2].rstrip("]") or None


def _notebook(r: NotebookResult) -> dict[str, Any]:
    return {
        "notebook": r.notebook,
        "set": _set_of(r.notebook),
        "status": r.status,
        "seconds": r.seconds,
        "cell": r.cell,
        "error": r.error,
        "leaks": len(r.findings),
        "attempts": [{"message": a.message, "seconds": a.seconds} for a in r.attempts],
    }


def _checks(r: NotebookResult) -> list[dict[str, Any]]:
    found = []
    for c in r.checks:
        compared = _COMPARED.search(c.reason) if c.outcome in ("failed", "flaky", "differs") else None
        found.append(
            {
                "notebook": r.notebook,
                "cell": c.cell,
                "title": c.name,
                "kind": c.kind or None,
                "basis": c.basis or None,
                "outcome": c.outcome,
                "expected": compared["expected"] if compared else None,
                "got": compared["got"] if compared else None,
                "message": c.reason,
            }
        )
    return found


def build(
    results: Sequence[NotebookResult],
    *,
    parameters: Mapping[str, Any],
    sets: Mapping[str, Mapping[str, Any]],
    started: datetime,
    ended: datetime,
    exit_code: int,
    settings: Mapping[str, Any],
    since: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The record of a run (see the module docstring); ``settings`` are the run's options
    (jobs, cell time-out, reruns…).

    Raises:
        Nothing.
    """
    from kit import __version__

    api = parameters.get("api_version") or register.value("A27")["version"]
    return {
        "format": FORMAT,
        "kit_version": __version__,
        "api_version": str(api),
        "started": started.isoformat(timespec="seconds"),
        "ended": ended.isoformat(timespec="seconds"),
        "parameters": dict(parameters),
        "sets": {name: dict(values) for name, values in sets.items()},
        "settings": dict(settings),
        "exit_code": exit_code,
        "notebooks": [_notebook(r) for r in results],
        "checks": [c for r in results for c in _checks(r)],
        "differences": [
            {"notebook": r.notebook, "entry": entry, "what": what, "where": where, "how": how}
            for r in results
            for entry, what, where, how in r.differences
        ],
        "drift": [
            {
                "notebook": r.notebook,
                "operation": d.operation,
                "field": d.field,
                "expected": d.expected,
                "got": d.got,
                "request_id": d.request_id,
                "basis": d.basis,
            }
            for r in results
            for d in r.seed_drift
        ],
        "since_last_run": dict(since) if since is not None else None,
    }


def write(out: Path, record: Mapping[str, Any]) -> Path:
    """Write ``record`` to ``out/results.json``; its path.

    Raises:
        OSError: the file cannot be written.
    """
    path = out / FILE
    return files.write(path, json.dumps(record, indent=1, ensure_ascii=False, default=str) + "\n")


def read(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A ``results.json`` (or the one in a folder ``path``) as a dict, of this :data:`FORMAT`.

    Raises:
        RegressError: no such file, not JSON, or another format version (named).
    """
    file = Path(path)
    if file.is_dir():
        file = file / FILE
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RegressError(f"cannot read {str(file)!r}: {exc.strerror or exc}") from None
    except ValueError:
        raise RegressError(f"{str(file)!r} is not JSON: not a kit regress results.json") from None
    found = data.get("format") if isinstance(data, dict) else None
    if found != FORMAT:
        raise RegressError(
            f"{str(file)!r} is results format {found!r}; this kit reads format {FORMAT} "
            "(run kit regress again with this version)"
        )
    return dict(data)


def load(out: str | os.PathLike[str]) -> Loaded:
    """The run in ``out`` (an OUT folder, or its ``results.json``) as DataFrames.

    Example::

        >>> run = load("out/regress")                           # doctest: +SKIP
        >>> run.notebooks.set_index("notebook")["status"].to_dict()  # doctest: +SKIP
        {'00_quickstart.ipynb': 'passed', ...}

    Raises:
        RegressError: no such file, not JSON, or another format version.
    """
    import pandas as pd

    data = read(out)
    columns = ["notebook", "set", "status", "seconds", "cell", "error", "leaks", "attempts"]
    notebooks = pd.DataFrame(data["notebooks"], columns=columns)
    checks = pd.DataFrame(
        data["checks"],
        columns=["notebook", "cell", "title", "kind", "basis", "outcome", "expected", "got", "message"],
    )
    run = {k: v for k, v in data.items() if k not in ("notebooks", "checks")}
    return Loaded(notebooks, checks, run)
