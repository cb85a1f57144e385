"""``api.sim.snapshot()`` / ``api.sim.restore(snap)``: the simulator's whole state, saved and
brought back, tokens and sessions included."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

import kit
from kit._resources.sim import Snapshot
from kit.errors import SnapshotInvalid
from tests.client.conftest import onboard


def test_a_snapshot_brings_the_state_back(api: kit.Client, tmp_path: Path) -> None:
    alice = onboard(api, 0)
    before = api.sim.ledger()
    snap = api.sim.snapshot()
    assert "bytes" in repr(snap) and len(repr(snap)) < 120  # never the content in an output
    path = tmp_path / "bug.kitstate"
    snap.save(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):
        snap.save(path)
    assert Snapshot.load(path).data == snap.data
    api.sim.fund(alice.account_id, "25.00")
    assert not api.sim.ledger().equals(before)
    history = len(api.history)
    api.sim.restore(path)
    assert api.sim.ledger().equals(before)
    card = api.cards.create(alice.account_id, type="virtual")  # its session, in the snapshot, works
    assert card.status == "active"
    calls = api.history.iloc[history:]
    assert list(calls["path"]).count("/sessions") == 0  # no new session was needed


def test_a_bad_snapshot_is_refused_and_changes_nothing(api: kit.Client) -> None:
    onboard(api, 0)
    before = api.sim.ledger()
    with pytest.raises(SnapshotInvalid) as refused:
        api.sim.restore(b"not a snapshot")
    assert refused.value.status == 400 and refused.value.code == "snapshot-invalid"
    assert api.sim.ledger().equals(before)
