"""``kit serve --state``: when a request's changes reach the file, and with what.

Every answer leaves only once what its request changed is committed, whatever its status;
requests finishing while others are open share one transaction (a group commit), each
request's changes whole in it (an idempotency record beside its effect); the journal is
folded into the records now and then, and a state is the same before and after a fold.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from kit.sim import durable, statefile, versions
from kit.sim.durable import StateFile
from kit.sim.guard import Guard
from kit.sim.middleware import ServiceHeaders
from kit.sim.settings import Settings
from kit.sim.state import IdempotencyRecord, Nonce, State
from tests.sim.helpers.statefiles import START, held
from tests.sim.helpers.wire import IN_PROCESS

PARTNER = "sim-partner"


@pytest.fixture
def durable_state(tmp_path: Path) -> Iterator[tuple[State, StateFile, Path]]:
    path = tmp_path / "s.kitstate"
    state = State(7, START)
    state_file = StateFile.open(str(path))
    try:
        state_file.load(state)
        yield state, state_file, path
    finally:
        state_file.close()


def journal_rows(path: Path) -> list[set[tuple[str, Any]]]:
    """The keys each journal row holds, in order."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT data FROM journal ORDER BY id").fetchall()
    finally:
        conn.close()
    return [{(home, key) for home, key, _ in statefile.decode(data)[0]} for (data,) in rows]


def _change(state: State, n: int) -> None:
    """An effect (a nonce) and the idempotency record of the request that made it."""
    state.nonces[f"n{n}"] = Nonce(PARTNER, state.now + timedelta(minutes=5))
    state.idempotency[(PARTNER, f"k{n}")] = IdempotencyRecord(
        "POST", "/p2p/transfers", b"digest", state.now, in_flight=False, status=201
    )


def test_each_answer_leaves_after_its_commit_and_requests_finishing_together_share_one(
    durable_state: tuple[State, StateFile, Path],
) -> None:
    state, _, path = durable_state
    count = 6
    everyone_in = asyncio.Event()
    arrived = 0
    seen_at_answer: dict[int, tuple[bool, bool]] = {}

    async def endpoint(scope: Any, receive: Any, send: Any) -> None:
        nonlocal arrived
        n = int(scope["path"].rsplit("/", 1)[1])
        _change(state, n)
        arrived += 1
        if arrived == count:
            everyone_in.set()
        await everyone_in.wait()  # all open at once: they finish together
        await asyncio.sleep(0.001 * (n % 3))
        status = 400 if n % 2 else 201  # a refusal is written all the same
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    app = ServiceHeaders(endpoint, state, versions.CURRENT, guard=Guard(Settings(allowed_hosts=IN_PROCESS)))

    async def watching(scope: Any, receive: Any, send: Any) -> None:
        async def answer(message: Any) -> None:
            if message["type"] == "http.response.start":  # the answer starts to leave: what holds the file?
                n = int(scope["path"].rsplit("/", 1)[1])
                on_disk = held(path)
                seen_at_answer[n] = (f"n{n}" in on_disk.nonces, (PARTNER, f"k{n}") in on_disk.idempotency)
            await send(message)

        await app(scope, receive, answer)

    async def run() -> list[int]:
        transport = httpx.ASGITransport(app=watching)
        async with httpx.AsyncClient(transport=transport, base_url="http://sim") as client:
            answers = await asyncio.gather(*(client.post(f"/x/{n}") for n in range(count)))
        return [a.status_code for a in answers]

    assert sorted(asyncio.run(run())) == [201] * 3 + [400] * 3
    assert seen_at_answer == {n: (True, True) for n in range(count)}
    rows = journal_rows(path)
    assert len(rows) < count, "requests finishing together share a transaction"
    for n in range(count):  # each request's effect and idempotency record in one transaction
        first = next(i for i, keys in enumerate(rows) if ("nonces", f"n{n}") in keys)
        assert ("idempotency", (PARTNER, f"k{n}")) in rows[first]


def test_a_request_alone_writes_at_once(durable_state: tuple[State, StateFile, Path]) -> None:
    state, _, path = durable_state

    async def request() -> None:
        assert state.journal is not None
        with state.journal.unit():
            _change(state, 1)
            await state.flush()
            assert "n1" in held(path).nonces  # before the answer could leave

    asyncio.run(request())
    assert journal_rows(path) == [{("nonces", "n1"), ("idempotency", (PARTNER, "k1"))}]


def test_a_fold_keeps_the_state_and_empties_the_journal(
    durable_state: tuple[State, StateFile, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    state, state_file, path = durable_state
    monkeypatch.setattr(durable, "FOLD_EVERY", 5)
    for n in range(4):
        _change(state, n)
        state.commit()
    del state.nonces["n0"]
    state.commit()  # the fifth row: folded at once (no loop running)
    assert journal_rows(path) == []
    on_disk = held(path)
    assert sorted(on_disk.nonces) == ["n1", "n2", "n3"] and len(on_disk.idempotency) == 4
    _change(state, 9)
    state.commit()
    assert len(journal_rows(path)) == 1 and "n9" in held(path).nonces
    state_file.close()  # closing folds what is left
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT count(*) FROM journal").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM records WHERE home = 'nonces'").fetchone()[0] == 4
    finally:
        conn.close()


def test_a_fold_writes_a_record_an_open_request_changed_after_its_row_as_it_is_now(
    durable_state: tuple[State, StateFile, Path],
) -> None:
    state, state_file, path = durable_state
    _change(state, 1)
    state.commit()
    assert state.journal is not None
    with state.journal.unit():
        _change(state, 2)
        state.commit()
        state.journal.flushed()  # its answer's write: done
        state.nonces["n2"].used = True  # changed again, after its row
        state_file.fold(state)
    on_disk = held(path)
    assert journal_rows(path) == [] and on_disk.nonces["n2"].used and not on_disk.nonces["n1"].used
    assert sorted(on_disk.idempotency) == [(PARTNER, "k1"), (PARTNER, "k2")]


def test_a_write_that_changes_nothing_writes_no_row(durable_state: tuple[State, StateFile, Path]) -> None:
    state, _, path = durable_state
    _change(state, 1)
    state.commit()
    state.commit()  # nothing moved since
    assert len(journal_rows(path)) == 1
    state.ids.next("req")  # a counter moved (a request's id): written
    state.commit()
    assert len(journal_rows(path)) == 2
    state.clock.advance(5)  # the clock moved: written
    state.commit()
    state.commit()
    assert len(journal_rows(path)) == 3
    assert held(path).now == state.now and held(path).ids._counters["req"] == 1


def _write_version_2(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the file at ``path`` what version 2 wrote: a journal row holding the records
    themselves, and the codec's functions named in ``kit.sim.statefile``."""
    from kit.sim import statecodec

    with monkeypatch.context() as m:
        for name in ("_utc", "_ec_key"):
            m.setattr(getattr(statecodec, name), "__module__", "kit.sim.statefile")
            m.setattr(statefile, name, getattr(statecodec, name), raising=False)
        state = held(path)
        state.nonces["n2"] = Nonce(PARTNER, state.now + timedelta(minutes=5))
        nonce = [("nonces", "n2", state.nonces["n2"])]
        row = statefile.encode((nonce, statefile.clock_and_counters(state), None))
        with sqlite3.connect(path) as conn:
            values = conn.execute("SELECT home, key, value FROM records").fetchall()
            conn.executemany(
                "UPDATE records SET value = ? WHERE home = ? AND key = ?",
                [(statefile.encode(held_value), home, key) for home, key, held_value in _decoded(values)],
            )
            conn.execute("INSERT INTO journal (data) VALUES (?)", (row,))
            conn.execute("UPDATE kit_state SET value = 2 WHERE name = 'version'")
        with sqlite3.connect(path) as conn:
            assert b"kit.sim.statefile" in conn.execute("SELECT data FROM journal").fetchone()[0]


def _decoded(rows: list[tuple[str, str, bytes]]) -> list[tuple[str, str, Any]]:
    return [(home, key, statefile.decode(value)) for home, key, value in rows]


def _one_change_written(path: Path) -> Path:
    """A state file (this version) holding one request's changes."""
    state = State(7, START)
    state_file = StateFile.open(str(path))
    state_file.load(state)
    _change(state, 1)
    state.commit()
    state_file.close()
    return path


def test_a_version_2_file_is_read_and_carried_on_as_the_current_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _one_change_written(tmp_path / "old.kitstate")
    _write_version_2(path, monkeypatch)
    again = State(7, START)
    state_file = StateFile.open(str(path))
    try:
        state_file.load(again)
        assert sorted(again.nonces) == ["n1", "n2"] and (PARTNER, "k1") in again.idempotency
    finally:
        state_file.close()
    with sqlite3.connect(path) as conn:
        version = conn.execute("SELECT value FROM kit_state WHERE name = 'version'").fetchone()[0]
        assert conn.execute("SELECT count(*) FROM journal").fetchone()[0] == 0
        stored = [value for (value,) in conn.execute("SELECT value FROM records")]
    assert version == statefile.VERSION == 4
    assert stored and not any(b"kit.sim.statefile" in value for value in stored)
    assert sorted(held(path).nonces) == ["n1", "n2"]


def test_a_version_1_file_is_read_and_carried_on_as_the_current_version(tmp_path: Path) -> None:
    path = _one_change_written(tmp_path / "old.kitstate")
    with sqlite3.connect(path) as conn:  # what version 1 wrote: no journal table
        conn.execute("DROP TABLE journal")
        conn.execute("UPDATE kit_state SET value = 1 WHERE name = 'version'")
    again = State(7, START)
    state_file = StateFile.open(str(path))
    try:
        state_file.load(again)
        assert "n1" in again.nonces and (PARTNER, "k1") in again.idempotency
        _change(again, 2)
        again.commit()
        assert sorted(held(path).nonces) == ["n1", "n2"]
    finally:
        state_file.close()
    with sqlite3.connect(path) as conn:
        version = conn.execute("SELECT value FROM kit_state WHERE name = 'version'").fetchone()[0]
    assert version == statefile.VERSION == 4


def test_a_fold_deletes_a_record_it_wrote_and_never_writes_one_born_and_gone_since(
    durable_state: tuple[State, StateFile, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    state, state_file, path = durable_state
    monkeypatch.setattr(durable, "FOLD_EVERY", 3)
    for n in range(3):
        _change(state, n)
        state.commit()  # the third row: folded, n0..n2 in the records
    statements: list[str] = []
    state_file._conn.set_trace_callback(statements.append)
    _change(state, 5)
    state.commit()
    del state.nonces["n5"]  # born and gone before the next fold
    state.commit()
    del state.nonces["n0"]  # in the records: the fold deletes it
    state.commit()
    deletes = [s for s in statements if s.startswith("DELETE FROM records")]
    assert len(deletes) == 1 and "'\"n0\"'" in deletes[0]
    assert journal_rows(path) == []
    assert sorted(held(path).nonces) == ["n1", "n2"]
    with sqlite3.connect(path) as conn:
        keys = {k for (k,) in conn.execute("SELECT key FROM records WHERE home = 'nonces'")}
    assert keys == {'"n1"', '"n2"'}


def test_records_are_pickled_as_their_fields_and_older_files_read_back() -> None:
    import pickle
    from datetime import UTC, datetime
    from decimal import Decimal

    from kit.sim.state import Account, Attempt, Delivery

    at = datetime(2025, 1, 6, 9, tzinfo=UTC)
    values = [
        Nonce(PARTNER, at, used=True),
        Account("acc_1", PARTNER, "spending", Decimal("500.00"), at, ("dev-1", "thumb")),
        IdempotencyRecord("POST", "/x", b"d", at, False, 201, b"{}", {"a": "b"}),
        Delivery("d1", "e1", "t", "s1", PARTNER, "http://h", b"{}", at, attempts=[Attempt(at, 500, "x")]),
    ]
    for value in values:
        assert statefile.decode(statefile.encode(value)) == value
        older = pickle.dumps(value, protocol=5)  # what a file written before holds
        assert statefile.decode(older) == value
        assert b"expires_at" not in statefile.encode(value) and b"created_at" not in statefile.encode(value)
        # a record is named by the module defining it (the kept ones: kit.sim.records, on first
        # use); a file naming them kit.sim.state's: test_sim_state_file's earlier snapshot
        assert type(value).__module__.encode() in statefile.encode(value)
