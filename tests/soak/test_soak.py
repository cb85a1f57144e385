"""A short run of the soak (``make soak`` runs the long one, ``python -m benchmarks.soak``): the
same code and checks, 15,000 requests over a week of simulator time."""

from __future__ import annotations

import sys

import pytest

from tests.soak.harness import SoakConfig, run_soak
from tests.soak.memory import PROC, growth

pytestmark = pytest.mark.skipif(not PROC.is_dir() or sys.platform != "linux", reason="reads /proc")


@pytest.mark.slow  # 15,000 requests through kit serve: ≈40 s
def test_a_short_soak_keeps_memory_flat_with_every_answer_right() -> None:
    result = run_soak(SoakConfig(requests=15_000, samples=60, time_limit_s=240))
    assert result.ok, result.failures()
    figures = result.figures()
    assert figures["processes_measured"] >= 2, "the crypto worker is measured with the server"
    stores = result.stores
    for name, store in stores.items():
        if store["bound"] is not None:
            assert store["size"] <= 2 * store["bound"], name  # per partner, two partners
    # The bounds acted: nonces never used, sessions and keys past their time were forgotten.
    assert stores["nonces"]["dropped"] > 0 and stores["sessions"]["dropped"] > 0
    assert stores["idempotency"]["dropped"] > 0 and stores["partner_tokens"]["dropped"] > 0
    assert result.operations.keys() >= {"unused_init_data", "event_replayed", "card_closed", "refused"}


def test_growth_is_judged_robustly() -> None:
    flat = [(x, 100.0 + (5.0 if x == 3 else 0.0)) for x in range(10)]  # one outlier
    assert growth(flat).theil_sen == 0.0
    rising = [(x, 100.0 + x) for x in range(10)]
    assert growth(rising).theil_sen == pytest.approx(9 / 100.5, abs=1e-3)  # rise / start (median)
    with pytest.raises(ValueError):
        growth(rising[:4])


@pytest.mark.slow
def test_a_short_soak_with_a_state_file_keeps_the_bounds_in_the_file() -> None:
    result = run_soak(SoakConfig(requests=8_000, samples=40, time_limit_s=300, state=True))
    assert result.ok, result.failures()
    stores, rows = result.stores, result.file_rows
    for name, store in stores.items():
        # the file holds what memory held at the end: capped homes stay capped (two partners)
        assert rows.get(name, 0) == store["size"], name
        assert store["bound"] is None or store["size"] <= 2 * store["bound"], name
    assert stores["nonces"]["dropped"] > 0 and stores["sessions"]["dropped"] > 0
