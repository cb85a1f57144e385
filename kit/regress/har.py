"""What a notebook's kernel left for the runner: its wire and its tokens' fingerprints.

Each kernel ``kit regress`` starts gets a file prefix (:data:`kit.notebook.wire.WIRE_ENV`);
its notebook companion writes there the redacted exchanges of every client the notebook made
(``PREFIX.wire.jsonl``) and the salted fingerprints of the tokens they used
(``PREFIX.tokens.json``). The runner reads the fingerprints for the leak scan (every
notebook), and with ``--har`` writes ``OUT/NN_name.har`` beside the executed notebook (HAR 1.2,
:func:`kit._wire_view.write_har`) and scans it too: a leak in it makes the notebook ``leaked``.

Example::

    >>> prints = fingerprints({"wire": "/tmp/kit-regress-x/wire/ab12"})   # doctest: +SKIP
    >>> path = write(Path("out/regress/00_quickstart.ipynb"), {"wire": ...})  # doctest: +SKIP
    >>> path.name                                                          # doctest: +SKIP
    '00_quickstart.har'
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kit import _files as files
from kit._wire import Exchange, from_dict
from kit.regress import leaks
from kit.regress.model import NotebookResult

__all__ = ["attach", "exchanges", "fingerprints", "prefix", "write"]


def prefix(folder: Path, output: Path) -> str:
    """The wire files' prefix for the notebook executed into ``output``, in ``folder``."""
    return str(folder / hashlib.sha256(str(output.resolve()).encode()).hexdigest()[:16])


def fingerprints(outcome: Mapping[str, Any]) -> list[leaks.Fingerprints]:
    """The token fingerprints the kernel wrote (none when it wrote none)."""
    wire = outcome.get("wire")
    found = leaks.read_fingerprints(f"{wire}.tokens.json") if wire else None
    return [found] if found is not None else []


def _exchanges(path: Path) -> list[Exchange]:
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            found.append(from_dict(json.loads(line)))
        except (ValueError, KeyError, TypeError):
            continue  # a line cut short by a dying kernel
    return found


def exchanges(outcome: Mapping[str, Any]) -> list[Exchange]:
    """Every exchange the kernel recorded (none when it was given no wire prefix)."""
    wire = outcome.get("wire")
    source = Path(f"{wire}.wire.jsonl") if wire else None
    return _exchanges(source) if source is not None and source.exists() else []


def write(output: Path, outcome: Mapping[str, Any]) -> Path | None:
    """``output`` with ``.har``: every exchange the kernel recorded (an empty log when it
    recorded none); ``None`` when the kernel was given no wire prefix."""
    from kit._wire_view import write_har

    if not outcome.get("wire"):
        return None
    target = output.with_suffix(".har")
    write_har(target, exchanges(outcome), comment=f"kit regress: {output.stem}")
    return target


def attach(result: NotebookResult, har: Path, secrets: Sequence[Any]) -> NotebookResult:
    """``result`` with the leaks found in its HAR file (which is then rewritten redacted)."""
    found = tuple(leaks.scan_file(har, secrets=secrets))
    if not found:
        return result
    text = har.read_text(encoding="utf-8")
    files.write(har, leaks.redact(text, secrets=secrets))
    kinds = ", ".join(sorted({f.kind for f in found}))
    details = "\n".join([result.details, *map(str, found)]).strip()
    if result.status == "passed":
        return dataclasses.replace(
            result,
            status="leaked",
            cell=har.name,
            error=f"leak in {har.name}: {kinds} ({len(found)})",
            details=details,
            findings=result.findings + found,
        )
    return dataclasses.replace(
        result,
        error=f"{result.error} — and leaks in {har.name}: {kinds}",
        details=details,
        findings=result.findings + found,
    )
