"""Helpers for the notebook tests: the fixture notebooks, running ``kit regress`` in-process."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from kit import regress

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]


def run_cli(*argv: str) -> tuple[int, str, str]:
    """``kit regress`` in this process: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = regress.main(list(argv))
    return code, out.getvalue(), err.getvalue()


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def stream_text(nb: dict[str, Any]) -> str:
    """Every stdout/stderr stream of a notebook, joined."""
    return "".join(
        "".join(o.get("text", ""))
        for cell in nb["cells"]
        for o in cell.get("outputs", [])
        if o.get("output_type") == "stream"
    )
