"""A paired ``make bench``: this tree against an earlier commit, rounds alternating, medians.

Usage::

    .venv/bin/python -m benchmarks.paired 1ac31ee --rounds 5          # every figure, full rounds
    .venv/bin/python -m benchmarks.paired HEAD~3 --quick --only connect imports --rounds 9

The earlier commit is checked out as a detached ``git worktree`` in a temporary folder and
removed afterwards. Both sides run with **this** interpreter and its installed packages: only
the code differs. ``PYTHONPATH`` names each side's tree, so its ``kit`` and ``benchmarks`` are the
ones imported, in the bench and in every process it starts (kernels, workers, ``kit serve``).
Two virtual environments do not compare: here, one holding 22 more distributions (the
documentation site's) imported the same modules, with the same instruction count, about 6 %
slower in CPU time (15 alternating runs), enough to turn a figure's verdict.

Each side's record is kept in ``--out`` (``base_N.json``, ``new_N.json``); the table gives, per
figure, the median ratio of each side and how much worse the new side is. Whether a higher ratio
is better is read from the figure's target (``>= …``); a figure without one is a time: lower is
better.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def worse_by(figure: dict[str, Any], base: float, new: float) -> float:
    """How much worse ``new`` is than ``base`` for this figure, as a fraction (negative: better)."""
    higher_is_better = str(figure.get("target") or "").strip().startswith(">=")
    return (1 - new / base) if higher_is_better else (new / base - 1)


def summarize(records: dict[str, Iterable[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per figure both sides measured: the median ratio of each side, and ``worse_by``.

    ``records`` maps ``"base"`` and ``"new"`` to the bench records (``bench.json``'s form) of
    their rounds. A round whose figure failed (no ratio) is left out of that figure's median.
    """
    ratios: dict[str, dict[str, list[float]]] = {}
    shapes: dict[str, dict[str, Any]] = {}
    for side, runs in records.items():
        for record in runs:
            for name, figure in record.get("benchmarks", {}).items():
                if figure.get("ratio") is not None:
                    ratios.setdefault(name, {}).setdefault(side, []).append(float(figure["ratio"]))
                    shapes.setdefault(name, figure)
    rows = []
    for name, sides in ratios.items():
        if not sides.get("base") or not sides.get("new"):
            continue
        base, new = statistics.median(sides["base"]), statistics.median(sides["new"])
        rows.append(
            {
                "figure": name,
                "base": base,
                "new": new,
                "worse_by": worse_by(shapes[name], base, new),
                "rounds": (len(sides["base"]), len(sides["new"])),
            }
        )
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table."""
    lines = ["| figure | base (median) | new (median) | worse by | rounds |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['figure']} | {r['base']:.3f} | {r['new']:.3f} | {r['worse_by'] * 100:+.1f} % "
            f"| {r['rounds'][0]}/{r['rounds'][1]} |"
        )
    return "\n".join(lines)


def _bench(tree: Path, out: Path, options: list[str]) -> int:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-m", "benchmarks.bench", "--out", str(out), *options]
    with open(out.with_suffix(".log"), "w", encoding="utf-8") as log:
        return subprocess.run(command, cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="the commit to compare against (any git revision)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    parser.add_argument("--quick", action="store_true", help="the bench's fewer rounds inside each side")
    parser.add_argument("--only", nargs="+", help="only these figures (the bench's names)")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "paired", help="where the records go")
    args = parser.parse_args(argv)

    options = (["--quick"] if args.quick else []) + (["--only", *args.only] if args.only else [])
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="paired-") as tmp:
        base_tree = Path(tmp) / "base"
        add = ["git", "worktree", "add", "--detach", "-q", str(base_tree), args.base]
        subprocess.run(add, cwd=ROOT, check=True)
        try:
            records: dict[str, list[dict[str, Any]]] = {"base": [], "new": []}
            for n in range(1, args.rounds + 1):
                order = ("base", "new") if n % 2 else ("new", "base")  # neither side always first
                for side in order:
                    out = args.out / f"{side}_{n}.json"
                    code = _bench(base_tree if side == "base" else ROOT, out, options)
                    print(f"round {n}/{args.rounds} {side}: exit {code}", flush=True)
                    if out.is_file():
                        records[side].append(json.loads(out.read_text(encoding="utf-8")))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base_tree)], cwd=ROOT, check=False)
    print(table(summarize(records)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
