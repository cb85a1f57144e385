"""A durable simulator: its whole state in one SQLite file (``kit serve --state FILE``).

One table of records (``home``, ``key``, ``seq``, ``value``) holds every home of state
(``kit.sim.state.HOMES``: tokens, nonces, sessions and their keys, idempotency records and
their stored answers, subscriptions and deliveries, accounts, persons, cards, transfers,
document requests…); one table of settings holds the format, its version and the clock, id
counters and random state; a third, ``journal``, holds the changes written since the records
were last brought up to date, one row per transaction (:func:`entry`: every record a request
touched, and the clock and counters, in one value). A state is the records, then the journal
rows in order (:func:`load`). The file is in WAL mode with ``synchronous=NORMAL``: a commit is
durable against a crash of the process (a power loss may lose the last commits, never
corrupt the file). ``kit.sim.durable`` writes a journal row before every answer leaves (the
``ServiceHeaders`` middleware) and folds the journal into the records now and then.

A snapshot is the same database, made from the state in memory (``GET /_sim/snapshot``) or
copied from a running server's file with SQLite's online backup (``kit state snapshot``). It
never holds a client secret (they come from the server's settings). Values are pickled and
read back by an unpickler that knows only the simulator's record classes
(``kit.sim.statecodec``): a snapshot from elsewhere cannot run code.
"""

from __future__ import annotations

import dataclasses
import io
import os
import pickle
import sqlite3
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kit.sim.state import _KEPT, HOMES, State
from kit.sim.statecodec import _key, _key_text, _Pickler, decode, encode
from kit.sim.stores import Store

FORMAT = "kit-sim-state"
#: The version of the file's format; a file of another version is refused. Versions 1 (no
#: journal table) and 2 (the codec's functions named in ``kit.sim.statefile``) are read too,
#: and the file is written as version 3 from then on (its journal folded into the records at
#: once, in the transaction that changes its version).
VERSION = 3
_READS = (1, 2, VERSION)
MEDIA_TYPE = "application/vnd.sqlite3"
MAGIC = b"SQLite format 3\x00"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS kit_state (name TEXT PRIMARY KEY, value BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS records (home TEXT NOT NULL, key TEXT NOT NULL, seq INTEGER NOT NULL,"
    " value BLOB NOT NULL, PRIMARY KEY (home, key)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS journal (id INTEGER PRIMARY KEY, data BLOB NOT NULL)",
)
_KEPT_HOMES = frozenset(_KEPT)
_UPSERT = (
    "INSERT INTO records (home, key, seq, value) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (home, key) DO UPDATE SET value = excluded.value"
)


class StateFileError(Exception):
    """A state file or snapshot that cannot be used; the message names it and what to do."""


# --- writing and reading a state ----------------------------------------------------------------


def clock_and_counters(state: State) -> dict[str, Any]:
    """The seed, the clock and the id counters."""
    clock = state.clock
    return {
        "seed": state.seed,
        "now": clock._now,
        "offset": clock._offset,
        "counters": dict(state.ids._counters),
    }


def schema(conn: sqlite3.Connection) -> None:
    """Create the tables of a new state, or those a version 1 state lacks (in the caller's
    transaction)."""
    for statement in _SCHEMA:
        conn.execute(statement)
    conn.executemany(
        "INSERT OR REPLACE INTO kit_state (name, value) VALUES (?, ?)",
        [("format", FORMAT), ("version", VERSION)],
    )


def entry(state: State, keys: list[tuple[str, Any]], meta: dict[str, Any]) -> bytes:
    """One journal row: the records under ``keys`` as they are now (None: gone), the clock and
    counters (``meta``: :func:`clock_and_counters`), and the random state when a fault may have
    drawn from it, in one pickle (a pickle per record costs more: each pays for naming its
    classes again)."""
    values = []
    faults = False
    for home, key in keys:
        where = getattr(state, home)
        values.append((home, key, dict.get(where if home in _KEPT_HOMES else where._data, key)))
        faults = faults or home == "faults"
    return encode((values, meta, state.random.getstate() if faults else None))


@dataclasses.dataclass
class Batch:
    """What one transaction writes, collected on the event loop (a state the simulator was in)
    and written by the writer thread. ``everything``: the records replace the file's."""

    everything: bool
    upserts: list[tuple[str, str, int, bytes]]
    gone: list[tuple[str, str]]
    settings: list[tuple[str, bytes]]


def _settings(state: State, with_random: bool) -> list[tuple[str, bytes]]:
    """The clock and id counters; the random state too when it may have moved (it moves only
    when a fault is drawn, and a draw touches the faults: ``pipeline.draw_fault``)."""
    rows = [("meta", encode(clock_and_counters(state)))]
    if with_random:
        rows.append(("random", encode(state.random.getstate())))
    return rows


def everything(state: State) -> Batch:
    """The whole state, in the order the bounds forget records (``seq``)."""
    rows: list[tuple[str, str, int, bytes]] = []
    for home in HOMES:
        items = _deliveries(state) if home == "deliveries" else getattr(state, home).items()
        for key, value in items:
            rows.append((home, _key_text(key), len(rows) + 1, encode(value)))
    return Batch(True, rows, [], _settings(state, with_random=True))


def changes(state: State, keys: list[tuple[str, Any]], seq: int) -> Batch:
    """The records under ``keys`` as they are now (gone when no longer there), numbered from
    ``seq`` + 1 (a new record goes last; an existing one keeps its place), pickled by one
    pickler (a fresh one per record costs a tenth more)."""
    ups, gone = [], []
    faults = False
    out = io.BytesIO()
    pickler = _Pickler(out, protocol=5)
    for home, key in keys:
        where = getattr(state, home)
        value = dict.get(where if home in _KEPT_HOMES else where._data, key)
        faults = faults or home == "faults"
        if value is None:
            gone.append((home, _key_text(key)))
            continue
        out.seek(0)
        out.truncate()
        pickler.clear_memo()
        pickler.dump(value)
        seq += 1
        ups.append((home, _key_text(key), seq, out.getvalue()))
    return Batch(False, ups, gone, _settings(state, with_random=faults))


def write(conn: sqlite3.Connection, batch: Batch) -> None:
    """Write ``batch`` in the transaction the caller opened."""
    if batch.everything:
        conn.execute("DELETE FROM records")
        conn.execute("DELETE FROM journal")
        conn.executemany("INSERT INTO records (home, key, seq, value) VALUES (?, ?, ?, ?)", batch.upserts)
    else:
        if batch.gone:
            conn.executemany("DELETE FROM records WHERE home = ? AND key = ?", batch.gone)
        if batch.upserts:
            conn.executemany(_UPSERT, batch.upserts)
    if batch.settings:
        conn.executemany("INSERT OR REPLACE INTO kit_state (name, value) VALUES (?, ?)", batch.settings)


def _deliveries(state: State) -> list[tuple[str, Any]]:
    """The delivery log, finished ones first (the order the bound forgets them in)."""
    log = state.deliveries
    pending = dict(log.pending())
    return [(k, v) for k, v in dict.items(log._data) if k not in pending] + list(pending.items())


def check(conn: sqlite3.Connection, where: str) -> None:
    """Refuse a database that is not a kit state of a version this kit reads."""
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "kit_state" not in tables:
            raise StateFileError(f"{where} is a SQLite database but not a kit state: give another path")
        found = dict(conn.execute("SELECT name, value FROM kit_state WHERE name IN ('format', 'version')"))
    except sqlite3.DatabaseError as exc:
        raise StateFileError(f"{where} is not a kit state ({exc}): give another path") from None
    if found.get("format") != FORMAT:
        raise StateFileError(f"{where} is not a kit state: give another path")
    if found.get("version") not in _READS:
        raise StateFileError(
            f"{where} has state format version {found.get('version')}, this kit reads versions "
            f"{', '.join(map(str, _READS))}: "
            "use the kit that wrote it, or start from a new file"
        )


def load(conn: sqlite3.Connection, state: State, where: str) -> None:
    """Replace ``state`` with what ``conn`` holds (checked first: nothing changes if refused)."""
    check(conn, where)
    try:
        meta_row = conn.execute("SELECT value FROM kit_state WHERE name = 'meta'").fetchone()
        random_row = conn.execute("SELECT value FROM kit_state WHERE name = 'random'").fetchone()
        random_state = decode(random_row[0]) if random_row else None
        rows = conn.execute("SELECT home, key, value FROM records ORDER BY seq").fetchall()
        meta = decode(meta_row[0]) if meta_row else None
        homes: dict[str, dict[Any, Any]] = defaultdict(dict)
        for home, key, value in rows:
            if home in HOMES:
                homes[home][_key(key)] = decode(value)
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for (data,) in conn.execute("SELECT data FROM journal ORDER BY id") if "journal" in tables else ():
            values, meta, moved = decode(data)  # a record already there keeps its place
            random_state = moved if moved is not None else random_state
            for home, key, value in values:
                if home in HOMES:
                    if value is None:
                        homes[home].pop(key, None)
                    else:
                        homes[home][key] = value
    except (sqlite3.DatabaseError, pickle.UnpicklingError, ValueError, TypeError, EOFError) as exc:
        raise StateFileError(f"{where} cannot be read ({type(exc).__name__}): it is damaged") from None
    if meta is None:
        return  # a new file: nothing written yet
    state.reset(int(meta["seed"]))
    state.clock._now, state.clock._offset = meta["now"], meta["offset"]
    state.ids._counters.update(meta["counters"])
    if random_state is not None:
        state.random.setstate(random_state)
    for home, kept in homes.items():
        target = getattr(state, home)
        items = list(kept.items())
        for key, value in items:
            if home == "idempotency" and value.in_flight:
                continue  # its request never answered: the key may be retried
            if home == "deliveries":
                value.in_progress = False
            if isinstance(target, dict):
                dict.__setitem__(target, key, value)
            else:
                Store.__setitem__(target, key, value)  # the base class's: no tracking
        if home == "deliveries":
            for key, value in items:
                if value.status != "pending":
                    target.finished(key)
    if state.journal is not None:
        state.journal.everything = True


def snapshot(state: State) -> bytes:
    """The state as a snapshot: a SQLite database, made in memory."""
    conn = sqlite3.connect(":memory:")
    try:
        with conn:
            schema(conn)
            write(conn, everything(state))
        return bytes(conn.serialize())
    finally:
        conn.close()


def restore(state: State, data: bytes, before: Callable[[], None] | None = None) -> None:
    """Replace ``state`` with a snapshot's; StateFileError (and ``state`` unchanged) if it is not one.
    ``before`` runs once the snapshot has been read whole, just before ``state`` changes."""
    if not data.startswith(MAGIC):
        raise StateFileError("the snapshot is not a kit state (not a SQLite database)")
    conn = sqlite3.connect(":memory:")
    try:
        try:
            conn.deserialize(data)
        except sqlite3.DatabaseError as exc:
            raise StateFileError(f"the snapshot is not a kit state ({exc})") from None
        probe = State(7, "2025-01-06T09:00:00Z", state.bounds)
        load(conn, probe, "the snapshot")  # refused before anything of ``state`` changes
        if before is not None:
            before()
        load(conn, state, "the snapshot")
    finally:
        conn.close()


def backup(path: str, out: str) -> None:
    """Copy the state file of a (running) server to ``out`` (owner-only), with SQLite's online
    backup: a consistent copy while the server keeps writing. Refuses an existing ``out``."""
    if os.path.exists(out):
        raise StateFileError(f"{out} exists: give a new path for the snapshot")
    if not os.path.exists(path):
        raise StateFileError(f"{path} does not exist: give the --state file of a kit serve")
    source = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True)
    try:
        check(source, path)
        try:
            os.close(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except OSError as exc:
            raise StateFileError(f"cannot write {out}: {exc.strerror}") from None
        target = sqlite3.connect(out)
        try:
            source.backup(target)
            target.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
        except sqlite3.Error as exc:
            target.close()
            os.unlink(out)
            raise StateFileError(f"no copy of {path}: {exc}") from None
        target.close()
    finally:
        source.close()


def read_snapshot(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise StateFileError(f"cannot read the snapshot {path}: {exc.strerror}") from None
