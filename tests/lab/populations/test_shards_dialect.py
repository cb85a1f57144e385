"""A shard's simulator serves the dialect its clients speak: the one the ``sim`` profile's
embedded simulator would (``choices=``, else ``PARTNER_API_CHOICES``, else ``KIT_SIM_CHOICES``).
Under a dialect the shard's customers take the same steps as under the register's spelling.

Bounded: one shard of 8 customers, four times, in this process."""

from __future__ import annotations

import pandas as pd
import pytest

from kit import register
from kit._env import PARTNER_CHOICES, SIM_CHOICES
from kit.lab.populations.planning import Draws
from kit.lab.populations.shard import ShardSpec, run_shard, served_dialect

CAMEL = str(register.data_dir() / "choices" / "camel.toml")


def _steps(**client_options: str) -> pd.DataFrame:
    result = run_shard(ShardSpec(index=0, first=0, end=8, draws=Draws(seed=7), client_options=client_options))
    assert result.steps is not None
    return result.steps.drop(columns="latency_ms")


@pytest.fixture(scope="module")
def plain() -> pd.DataFrame:
    steps = _steps()
    assert (steps["step"] == "anonymous_session").sum() == 8
    assert steps.loc[steps["step"] == "anonymous_session", "outcome"].eq("ok").all()
    return steps


def test_a_shard_given_a_dialect_file_takes_the_plain_steps(
    plain: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PARTNER_CHOICES, raising=False)
    monkeypatch.delenv(SIM_CHOICES, raising=False)
    pd.testing.assert_frame_equal(_steps(choices=CAMEL), plain)


@pytest.mark.parametrize("variable", [PARTNER_CHOICES, SIM_CHOICES])
def test_a_shard_under_a_dialect_variable_takes_the_plain_steps(
    plain: pd.DataFrame, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.delenv(PARTNER_CHOICES, raising=False)
    monkeypatch.delenv(SIM_CHOICES, raising=False)
    monkeypatch.setenv(variable, CAMEL)
    overlay = served_dialect(None)
    assert overlay is not None and overlay.source == CAMEL
    pd.testing.assert_frame_equal(_steps(), plain)


def test_without_a_dialect_the_shard_serves_the_register_spelling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PARTNER_CHOICES, raising=False)
    monkeypatch.delenv(SIM_CHOICES, raising=False)
    assert served_dialect(None) is None
