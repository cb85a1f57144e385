"""The Mermaid diagrams of the notebooks, and the real Mermaid parser (node) to check them.

``mermaid_parse.mjs`` runs the ``mermaid`` npm package at the version JupyterLab bundles
(``package.json`` pins it; ``npm ci`` in this folder installs it, ``make e2e`` does that).

Example::

    >>> parse({"04#1": "sequenceDiagram\\n  A->>B: x; 2\\n"})["04#1"]     # doctest: +SKIP
    "Parse error on line 2: ... got 'NUM'"
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARSER = HERE / "mermaid_parse.mjs"
PARSE_TIMEOUT_S = 60.0


def mermaid_sources(path: Path) -> list[str]:
    """The source of every ```` ```mermaid ```` block in a notebook's markdown cells, in order."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return re.findall(r"```mermaid[ \t]*\n(.*?)```", text, flags=re.S)


def parser_missing() -> str | None:
    """Why the parser cannot run here (no node, or ``npm ci`` not run yet), or ``None``."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not (HERE / "node_modules" / "mermaid" / "package.json").is_file():
        return "the mermaid npm package is not installed (`npm ci --prefix tests/e2e`; `make e2e` runs it)"
    return None


def parse(diagrams: dict[str, str]) -> dict[str, str | None]:
    """Parse each diagram (id → source); returns id → the parser's error, ``None`` when it parses.

    Raises:
        RuntimeError: node failed (not a parse error: those are returned).
    """
    payload = json.dumps([{"id": k, "text": v} for k, v in diagrams.items()])
    done = subprocess.run(
        ["node", str(PARSER)],
        input=payload,
        capture_output=True,
        text=True,
        cwd=HERE,
        timeout=PARSE_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"node {PARSER.name} exited with {done.returncode}: {done.stderr[-2000:]}")
    return {r["id"]: r["error"] for r in json.loads(done.stdout)}
