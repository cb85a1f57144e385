"""The paired bench's arithmetic: medians per side, and which way is worse for each figure."""

from __future__ import annotations

import pytest

from benchmarks.paired import summarize, table, worse_by


def record(**ratios: float | None) -> dict:
    targets = {"sessions": ">= 0.85", "connect": "<= 1.0", "imports": "none set"}
    return {"benchmarks": {k: {"ratio": v, "target": targets[k]} for k, v in ratios.items()}}


def test_worse_by_reads_the_direction_from_the_target() -> None:
    assert worse_by({"target": ">= 0.85"}, 1.0, 0.9) == pytest.approx(0.10)  # fewer sessions/s: worse
    assert worse_by({"target": "<= 1.0"}, 1.0, 0.9) == pytest.approx(-0.10)  # less time: better
    assert worse_by({"target": "none set"}, 0.05, 0.06) == pytest.approx(0.20)  # a time without target


def test_summarize_takes_each_sides_median_and_skips_failed_rounds() -> None:
    base = [
        record(sessions=0.90, connect=1.00, imports=0.050),
        record(sessions=0.80, connect=1.20, imports=None),
        record(sessions=0.85, connect=1.10, imports=0.070),
    ]
    new = [
        record(sessions=0.81, connect=1.30, imports=0.060),
        record(sessions=0.99, connect=1.00),
        record(sessions=0.90, connect=1.21),
    ]
    rows = {r["figure"]: r for r in summarize({"base": base, "new": new})}
    assert rows["sessions"]["base"] == 0.85 and rows["sessions"]["new"] == 0.90
    assert rows["sessions"]["worse_by"] == pytest.approx(1 - 0.90 / 0.85)  # better: negative
    assert rows["connect"]["worse_by"] == pytest.approx(1.21 / 1.10 - 1)
    assert rows["imports"]["rounds"] == (2, 1) and rows["imports"]["base"] == pytest.approx(0.060)
    assert "| connect | 1.100 | 1.210 | +10.0 % | 3/3 |" in table(list(rows.values()))


def test_a_figure_one_side_never_measured_is_left_out() -> None:
    rows = summarize({"base": [record(connect=1.0)], "new": [record(sessions=0.9)]})
    assert rows == []
