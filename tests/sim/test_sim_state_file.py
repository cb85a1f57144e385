"""``kit serve --state FILE``: the whole state in one SQLite file, snapshots, bad files.

The crash test (SIGKILL during traffic) is ``test_sim_crash.py`` (slow).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from kit._env import SIM_PARTNER_CLIENTS
from kit.cli import main as kit_main
from kit.sim import Settings, records
from kit.sim.durable import StateFile
from kit.sim.server import start_embedded
from kit.sim.state import IdempotencyRecord, Nonce, State
from kit.sim.statefile import VERSION, StateFileError, backup
from kit.sim.stores import Bounds
from tests.sim.helpers.journeys import journey, p2p_transfer
from tests.sim.helpers.resources import create_card
from tests.sim.helpers.statefiles import START, held
from tests.sim.helpers.wire import assert_problem, call


@contextmanager
def served(path: Path, **settings: Any) -> Iterator[httpx.Client]:
    server = start_embedded(Settings(seed=7, state_file=str(path), **settings))
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            yield http
    finally:
        server.stop()


#: How a snapshot is sent back (A71: its own media type).
SNAPSHOT = {"content-type": "application/vnd.sqlite3"}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rows(path: Path, home: str) -> int:
    """Records of ``home`` in the file's records table (the journal not folded in)."""
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT count(*) FROM records WHERE home = ?", (home,)).fetchone()[0])


def held_keys(path: Path, home: str) -> list[Any]:
    """The keys of ``home`` in the state the file holds: its records, then its journal."""
    return sorted(getattr(held(path), home))


# --- what survives a restart ------------------------------------------------------------------


def test_the_state_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "team.kitstate"
    with served(path) as http:
        a = journey(http, persona_index=0)
        b = journey(http, persona_index=1, token=a.token)
        sent = p2p_transfer(http, a, b.person_id, "3.00", idem="key-1")
        assert sent.status_code == 201, sent.text
        card = create_card(http, a.token, a.account_id, session=a.person_session)
        ledger = http.get("/_sim/ledger").json()
        clock = http.post("/_sim/clock/advance", json={"seconds": 90}).json()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with served(path) as http:
        assert http.get("/_sim/ledger").json() == ledger
        assert http.get("/_sim/clock").json() == clock
        # the partner token and the person session still work; the card is there
        got = call(http, "GET", f"/cards/{card['card_id']}", token=a.token, session=a.person_session)
        assert got.status_code == 200 and got.json()["status"] == "active", got.text
        # the key answered before the restart replays the same transfer
        again = p2p_transfer(http, a, b.person_id, "3.00", idem="key-1")
        assert again.headers.get("idempotent-replayed") == "true"
        assert again.json()["transfer_id"] == sent.json()["transfer_id"]
        # ids go on where they stopped: a new transfer is new
        other = p2p_transfer(http, a, b.person_id, "2.00", idem="key-2")
        assert other.status_code == 201 and other.json()["transfer_id"] != sent.json()["transfer_id"]


def test_a_restore_or_a_reset_on_a_durable_server_is_what_the_file_holds(tmp_path: Path) -> None:
    path = tmp_path / "team.kitstate"
    with served(path) as http:
        a = journey(http, persona_index=0)
        snap = http.get("/_sim/snapshot").content
        ledger = http.get("/_sim/ledger").json()
        journey(http, persona_index=1, token=a.token)
        assert http.post("/_sim/restore", content=snap, headers=SNAPSHOT).status_code == 200
    with served(path) as http:
        assert http.get("/_sim/ledger").json() == ledger
        create_card(http, a.token, a.account_id, session=a.person_session)
        assert http.post("/_sim/reset", json={"seed": 11}).status_code == 200
    with served(path) as http:
        assert http.get("/_sim/ledger").json() == {"accounts": [], "transfers": []}
        assert call(http, "GET", "/cards/nope", token=a.token).status_code == 401  # tokens revoked


def test_the_same_seed_and_calls_give_the_same_ids_with_or_without_a_file(tmp_path: Path) -> None:
    def run(**settings: Any) -> list[str]:
        server = start_embedded(Settings(seed=7, **settings))
        try:
            with httpx.Client(base_url=server.base_url, timeout=30) as http:
                a = journey(http, persona_index=0)
                return [a.account_id, str(a.person_id)]
        finally:
            server.stop()

    assert run(state_file=str(tmp_path / "s.kitstate")) == run()


def test_an_idempotency_record_in_flight_at_death_is_dropped_at_start(tmp_path: Path) -> None:
    path = str(tmp_path / "s.kitstate")
    state = State(7, START)
    state_file = StateFile.open(path)
    state_file.load(state)
    state.idempotency[("sim-partner", "in-flight")] = IdempotencyRecord(
        "POST", "/p2p/transfers", b"x", state.now
    )
    done = IdempotencyRecord("POST", "/p2p/transfers", b"y", state.now, in_flight=False, status=201)
    state.idempotency[("sim-partner", "answered")] = done
    state.commit()
    state_file.close()  # as a crash leaves it: the record of a request that never answered
    again = State(7, START)
    reopened = StateFile.open(path)
    try:
        reopened.load(again)
        assert ("sim-partner", "in-flight") not in again.idempotency
        assert again.idempotency[("sim-partner", "answered")].status == 201
    finally:
        reopened.close()
    assert rows(Path(path), "idempotency") == 1  # and gone from the file too


def test_capped_stores_stay_capped_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.kitstate"
    state = State(7, START, Bounds.from_register().replace(nonces=3))
    state_file = StateFile.open(str(path))
    try:
        state_file.load(state)
        for n in range(10):
            state.nonces[f"n{n}"] = Nonce("sim-partner", state.now + timedelta(minutes=5))
            state.commit()
        assert held_keys(path, "nonces") == sorted(state.nonces) == ["n7", "n8", "n9"]
        state_file.fold(state)
        assert rows(path, "nonces") == 3 and held_keys(path, "nonces") == ["n7", "n8", "n9"]
        state.clock.advance(600)
        state.sweep(lambda s: s.created_at, timedelta(minutes=1))
        state.commit()
        assert held_keys(path, "nonces") == []  # expiry acts in the file as in memory
        state_file.fold(state)
        assert rows(path, "nonces") == 0
    finally:
        state_file.close()


def test_in_memory_the_homes_are_the_plain_ones() -> None:
    state = State(7, START)
    assert type(state.cards) is dict and state.journal is None
    assert type(state.nonces).__name__ == "Store" and type(state.deliveries).__name__ == "DeliveryLog"


# --- bad files ------------------------------------------------------------------------------


def _text_file(path: Path) -> None:
    path.write_text("not a database\n")


def _other_sqlite(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")


def _other_version(path: Path) -> None:
    StateFile.open(str(path)).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE kit_state SET value = ? WHERE name = 'version'", (VERSION + 1,))


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (_text_file, "is not a kit state file"),
        (_other_sqlite, "not a kit state"),
        (_other_version, f"state format version {VERSION + 1}, this kit reads versions 1, 2, 3, {VERSION}"),
    ],
    ids=["text", "other-sqlite", "other-version"],
)
def test_a_bad_file_is_refused_naming_it_and_left_unchanged(tmp_path: Path, make: Any, words: str) -> None:
    path = tmp_path / "bad.kitstate"
    make(path)
    before = digest(path)
    with pytest.raises(StateFileError) as refused:
        StateFile.open(str(path))
    assert str(path) in str(refused.value) and words in str(refused.value)
    assert digest(path) == before


def test_two_servers_on_one_file_are_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "s.kitstate")
    first = StateFile.open(path)
    try:
        with pytest.raises(StateFileError, match="in use by another running kit serve"):
            StateFile.open(path)
    finally:
        first.close()
    StateFile.open(path).close()  # free again once the first one stops


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.kitstate"
    StateFile.open(str(path)).close()
    path.chmod(0o400)
    with pytest.raises(StateFileError, match="cannot read and write"):
        StateFile.open(str(path))


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StateFileError, match="is a directory"):
        StateFile.open(str(tmp_path))


def test_kit_serve_refuses_a_bad_file_before_listening(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    _text_file(path)
    done = subprocess.run(
        [sys.executable, "-m", "kit", "serve", "--port", "0", "--state", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "Serving on" not in done.stdout
    assert f"refusing to start: {path} is not a kit state file" in done.stderr
    assert path.read_text() == "not a database\n"


# --- snapshots ------------------------------------------------------------------------------


def test_snapshot_and_restore_on_the_control_plane(http: httpx.Client) -> None:
    a = journey(http, persona_index=0)
    b = journey(http, persona_index=1, token=a.token)
    p2p_transfer(http, a, b.person_id, "3.00", idem="before")
    snap = http.get("/_sim/snapshot")
    assert snap.status_code == 200 and snap.headers["content-type"] == "application/vnd.sqlite3"
    assert snap.headers["svc-state-version"] == str(VERSION)
    for secret in SIM_PARTNER_CLIENTS.values():  # the client secrets come from settings only
        assert secret.encode() not in snap.content
    ledger = http.get("/_sim/ledger").json()
    p2p_transfer(http, a, b.person_id, "4.00", idem="after")
    assert http.get("/_sim/ledger").json() != ledger
    restored = http.post("/_sim/restore", content=snap.content, headers=SNAPSHOT)
    assert restored.status_code == 200, restored.text
    assert http.get("/_sim/ledger").json() == ledger
    # tokens and sessions of the snapshot work again; its keys replay
    replay = p2p_transfer(http, a, b.person_id, "3.00", idem="before")
    assert replay.headers.get("idempotent-replayed") == "true"
    assert p2p_transfer(http, a, b.person_id, "4.00", idem="after").headers.get("idempotent-replayed") is None


@pytest.mark.parametrize(
    ("body", "words"),
    [(b"", "not a SQLite database"), (b"SQLite format 3\x00" + b"\x00" * 100, "not a kit state")],
    ids=["empty", "damaged"],
)
def test_a_bad_snapshot_is_refused_and_changes_nothing(http: httpx.Client, body: bytes, words: str) -> None:
    journey(http, persona_index=0, until="account")
    ledger = http.get("/_sim/ledger").json()
    refused = http.post("/_sim/restore", content=body, headers=SNAPSHOT)
    assert words in assert_problem(refused, 400, "snapshot-invalid")["detail"]
    assert http.get("/_sim/ledger").json() == ledger


def test_a_snapshot_of_another_version_is_refused(http: httpx.Client, tmp_path: Path) -> None:
    path = tmp_path / "old.kitstate"
    path.write_bytes(http.get("/_sim/snapshot").content)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE kit_state SET value = ? WHERE name = 'version'", (VERSION + 1,))
    ledger = http.get("/_sim/ledger").json()
    refused = http.post("/_sim/restore", content=path.read_bytes(), headers=SNAPSHOT)
    detail = assert_problem(refused, 400, "snapshot-invalid")["detail"]
    assert f"version {VERSION + 1}" in detail
    assert http.get("/_sim/ledger").json() == ledger


def test_kit_state_snapshot_copies_a_running_server_and_serve_restores_it(tmp_path: Path) -> None:
    path, out = tmp_path / "team.kitstate", tmp_path / "bug.kitstate"
    with served(path) as http:
        a = journey(http, persona_index=0)
        ledger = http.get("/_sim/ledger").json()
        assert kit_main(["state", "snapshot", str(path), str(out)]) == 0  # while it runs
        assert kit_main(["state", "snapshot", str(path), str(out)]) == 2  # never over a file
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    with served(tmp_path / "colleague.kitstate", restore=str(out)) as http:
        assert http.get("/_sim/ledger").json() == ledger
        refused = call(http, "GET", "/webhooks/jwks", token=a.token)  # another server's token
        assert_problem(refused, 401, "invalid-partner-token")
    before = digest(path)
    with pytest.raises(StateFileError, match="already holds state: pass --replace"):
        start_embedded(Settings(state_file=str(path), restore=str(out)))
    assert digest(path) == before
    with served(path, restore=str(out), replace=True) as http:
        assert http.get("/_sim/ledger").json() == ledger
        create_card(http, a.token, a.account_id, session=a.person_session)  # its own token and session


def test_kit_state_snapshot_refuses_what_is_not_a_state_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    _text_file(path)
    with pytest.raises(StateFileError):
        backup(str(path), str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_kit_state_snapshot_refuses_an_unwritable_target(tmp_path: Path) -> None:
    path = tmp_path / "s.kitstate"
    StateFile.open(str(path)).close()
    with pytest.raises(StateFileError, match="cannot write"):
        backup(str(path), str(tmp_path / "no" / "such" / "folder" / "out"))


# --- files an earlier kit wrote ---------------------------------------------------------------

#: A snapshot written by the kit at f24a833 (two journeys, a transfer, a card), when the kept
#: records were pickled as ``kit.sim.state``'s classes; beside it, that server's ledger.
EARLIER = Path(__file__).parent / "data" / "state_f24a833.kitstate"
EARLIER_LEDGER = json.loads(EARLIER.with_suffix(".json").read_text(encoding="utf-8"))["ledger"]


def test_a_state_file_naming_the_records_as_kit_sim_states_loads_as_their_own_classes(tmp_path: Path) -> None:
    path = tmp_path / "earlier.kitstate"
    path.write_bytes(EARLIER.read_bytes())
    with sqlite3.connect(path) as conn:
        cards = [value for (value,) in conn.execute("SELECT value FROM records WHERE home = 'cards'")]
    assert cards and all(b"kit.sim.state" in value and b"kit.sim.records" not in value for value in cards)
    state = held(path)
    homes = ("accounts", "persons", "cards", "transfers")
    kinds = {type(r) for home in homes for r in getattr(state, home).values()}
    assert kinds == {records.Account, records.Person, records.Card, records.Transfer}
    assert {kind.__module__ for kind in kinds} == {"kit.sim.records"}  # named as defined, no rewrite
    with served(path) as http:  # served from it, then written with the records' own names
        assert http.get("/_sim/ledger").json() == EARLIER_LEDGER
        journey(http, persona_index=2, until="account")
    assert len(held(path).accounts) == len(state.accounts) + 1


def test_a_snapshot_an_earlier_kit_wrote_is_restored(http: httpx.Client) -> None:
    restored = http.post("/_sim/restore", content=EARLIER.read_bytes(), headers=SNAPSHOT)
    assert restored.status_code == 200, restored.text
    assert http.get("/_sim/ledger").json() == EARLIER_LEDGER


# --- token digests: what earlier files hold ---------------------------------------------------


@pytest.mark.parametrize(
    ("token", "expected"),
    [  # made by the kit before its digests moved to cryptography's HMAC (the standard library's)
        ("ses_abc", "26c1763c2d3b38ccb9c4c48acf4fe792b7c42dfc810e6ab7dcd9e3beb0b14e47"),
        ("tok_\udc80x", "908a80f5c49332d347e896e455ccf9fa1e2882422e8045969468f24ccd92390f"),
        ("", "c999c4abe9cdaa48101faca6929e0fbe54fa6f13ff196e5b1d68123642310700"),
    ],
)
def test_a_token_digest_is_the_one_earlier_state_files_hold(token: str, expected: str) -> None:
    from kit.sim.atrest import Sealer, is_digest

    sealer = Sealer(bytes(range(32)))
    assert sealer.digest(token) == expected and is_digest(expected)
    assert sealer.digest(token) == sealer.digest(token)  # a copy of the keyed state each time
