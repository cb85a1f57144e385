"""``api.sim.snapshot()`` / ``api.sim.restore(snap)``: the simulator's whole state, saved and
brought back, tokens and sessions included."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

import kit
from kit._resources.sim import Snapshot
from kit._wire import as_dict
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


def test_snapshots_go_through_the_clients_own_transport(
    make_client: Callable[..., kit.Client], tmp_path: Path
) -> None:
    api = make_client(record=True)
    alice = onboard(api, 0)
    snap = api.sim.snapshot()
    api.sim.restore(snap)
    calls = api.history[["method", "path", "status"]].values.tolist()
    assert calls[-2:] == [["GET", "/_sim/snapshot", 200], ["POST", "/_sim/restore", 200]]
    assert api.drift.empty  # the control plane's answers keep the contract
    taken, given = api.wire(path="/_sim/snapshot").exchange, api.wire(path="/_sim/restore").exchange
    sent = given.attempts[0].request
    assert dict(sent.headers)["content-type"] == "application/vnd.sqlite3"
    described = f"<{len(snap.data)} bytes of application/vnd.sqlite3>"
    assert sent.body == described and taken.attempts[0].response.body == described  # type: ignore[union-attr]
    assert dict(sent.headers).get("svc-control-token") in (None, "<control-token>")
    session = api._requestor.current
    assert session is not None and session.token.reveal() not in json.dumps(
        [as_dict(e) for e in api.wire_log.exchanges()]  # type: ignore[union-attr]
    )
    api.export_har(tmp_path / "run.har")
    assert session.token.reveal() not in (tmp_path / "run.har").read_text()
    assert api.cards.create(alice.account_id, type="virtual").status == "active"
