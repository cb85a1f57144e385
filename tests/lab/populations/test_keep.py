"""A population's result kept: ``result.save(DIR)`` and ``kit.simulate.load(DIR)`` in a later
kernel give the same summary, tables and plots; another format version is refused; the
personas of a sandbox run (PII) are never written.

Bounded: one 30-customer run in memory and one streamed to Parquet.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import kit.simulate
from kit.lab.populations import keep

CUSTOMERS = 30
MIX = {"lost": 2.0, "stolen": 1.0, None: 1.0}


@pytest.fixture(scope="module")
def result(sim_url: str) -> kit.simulate.SimulationResult:
    return kit.simulate.run(customers=CUSTOMERS, seed=5, reason_mix=MIX, shards=2, progress=False)


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))


@pytest.mark.slow  # a population run, saved and loaded: ≈6 s
def test_a_saved_result_loads_with_its_summary_tables_and_plots(
    result: kit.simulate.SimulationResult, tmp_path: Path
) -> None:
    assert result.save(tmp_path / "calm") == tmp_path / "calm"
    loaded = kit.simulate.load(tmp_path / "calm")
    assert repr(loaded.summary()) == repr(result.summary())
    for table in (
        "funnel",
        "errors",
        "retries",
        "latency",
        "steps",
        "ledger",
        "shards",
        "calls",
        "customers",
    ):
        _same(getattr(loaded, table), getattr(result, table))
    assert loaded.settings == result.settings and loaded.money_conserved is True
    assert loaded.elapsed_s == result.elapsed_s
    assert loaded.plot_funnel() is not None and loaded.plot_errors() is not None


def test_a_later_kernel_reads_it(result: kit.simulate.SimulationResult, tmp_path: Path) -> None:
    result.save(tmp_path / "calm")
    code = (
        "import sys, kit.simulate\n"
        "r = kit.simulate.load(sys.argv[1])\n"
        "print(repr(r.summary()))\n"
        "print(r.funnel.to_json())\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "calm")], capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == f"{result.summary()!r}\n{result.funnel.to_json()}\n"


def test_a_streamed_result_is_kept_with_its_parquet_parts(sim_url: str, tmp_path: Path) -> None:
    streamed = kit.simulate.run(customers=CUSTOMERS, seed=5, shards=2, progress=False, out=tmp_path / "run")
    streamed.save(tmp_path / "kept")
    loaded = kit.simulate.load(tmp_path / "kept")
    _same(loaded.steps, streamed.steps)
    _same(loaded.ledger, streamed.ledger)
    _same(loaded.latency, streamed.latency)  # the histograms' percentiles, as the streamed run's
    streamed.save(tmp_path / "run")  # into its own folder: the parts stay
    _same(kit.simulate.load(tmp_path / "run").steps, streamed.steps)


def test_another_format_version_is_refused_clearly(
    result: kit.simulate.SimulationResult, tmp_path: Path
) -> None:
    result.save(tmp_path / "old")
    head = json.loads((tmp_path / "old" / keep.FILE).read_text())
    (tmp_path / "old" / keep.FILE).write_text(json.dumps({**head, "format": 0}))
    with pytest.raises(kit.simulate.SavedResultError, match="format 0; this kit reads format 1"):
        kit.simulate.load(tmp_path / "old")
    with pytest.raises(kit.simulate.SavedResultError, match="no saved population result"):
        kit.simulate.load(tmp_path / "nothing")


def test_a_sandbox_runs_personas_are_never_written(
    result: kit.simulate.SimulationResult, tmp_path: Path
) -> None:
    persona = {"first_name": "Ada", "last_name": "Example", "national_id": "000-00-0001"}
    played = kit.simulate.SimulationResult(
        result.partial,
        {**result.settings, "personas": (persona,)},
        1.0,
        result.shards,
        steps=result.steps,
        ledger=result.ledger,
        calls=result.calls,
    )
    played.save(tmp_path / "sandbox")
    text = "".join(p.read_text(errors="replace") for p in (tmp_path / "sandbox").glob("*.json"))
    assert "000-00-0001" not in text and '"personas_omitted": 1' in text
    with pytest.raises(ValueError, match="saved without the 1 published personas"):
        _ = kit.simulate.load(tmp_path / "sandbox").plans
