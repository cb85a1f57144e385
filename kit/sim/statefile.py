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
holds no client secret and no usable token (``kit.sim.atrest``). Values are pickled and read
back knowing only the record classes (``kit.sim.statecodec``), from a file read as untrusted
input (``kit.sim.untrusted``): a snapshot from elsewhere cannot run code, nor hold the server.
"""

from __future__ import annotations

import dataclasses
import io
import os
import sqlite3
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kit._env import SNAPSHOT_MEDIA_TYPE
from kit.sim import untrusted
from kit.sim.atrest import Sealer, is_digest
from kit.sim.state import _KEPT, HOMES, State
from kit.sim.statecodec import _key, _key_text, _Pickler, decode, encode
from kit.sim.stores import Store
from kit.sim.untrusted import SCHEMAS, TABLES, schema_of

FORMAT = "kit-sim-state"
#: The version of the file's format; a file of another version is refused. Versions 1 (no
#: journal table) and 2 (the codec's functions named in ``kit.sim.statefile``) are read too,
#: and 3 (the tokens themselves, not their digests: ``kit.sim.atrest``), and the file is
#: written as version 4 from then on (its journal folded into the records at once, in the
#: transaction that changes its version).
VERSION = 4
_READS = (1, 2, 3, VERSION)
MEDIA_TYPE = SNAPSHOT_MEDIA_TYPE
MAGIC = b"SQLite format 3\x00"
#: The tables, as :data:`kit.sim.untrusted.TABLES` defines them (and expects to find them).
_SCHEMA = tuple(sql.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1) for sql in TABLES)
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


def check(conn: sqlite3.Connection, where: str) -> int:
    """Refuse a database that is not exactly a kit state of a version this kit reads (its
    tables as the kit writes them, nothing else: :mod:`kit.sim.untrusted`); its version."""
    try:
        found_schema = schema_of(conn)
        if not any(row[1] == "kit_state" and row[0] == "table" for row in found_schema):
            raise StateFileError(f"{where} is a SQLite database but not a kit state: give another path")
        found = dict(conn.execute("SELECT name, value FROM kit_state WHERE name IN ('format', 'version')"))
    except sqlite3.DatabaseError as exc:
        raise StateFileError(f"{where} is not a kit state ({exc}): give another path") from None
    if found.get("format") != FORMAT:
        raise StateFileError(f"{where} is not a kit state: give another path")
    version = found.get("version")
    if version not in _READS:
        raise StateFileError(
            f"{where} has state format version {version}, this kit reads versions "
            f"{', '.join(map(str, _READS))}: "
            "use the kit that wrote it, or start from a new file"
        )
    if found_schema != SCHEMAS[version]:
        raise StateFileError(
            f"{where} is not a kit state: its schema is not the one the kit writes "
            "(tables only, as written: no views, triggers or other indexes)"
        )
    return int(version)


@dataclasses.dataclass
class Loaded:
    """A state read from a file and validated, not yet in any :class:`State` (:func:`apply`)."""

    version: int
    meta: dict[str, Any] | None
    random_state: Any
    homes: dict[str, dict[Any, Any]]


def read(conn: sqlite3.Connection, where: str, budget: int = untrusted.BUDGET) -> Loaded:
    """What ``conn`` holds, checked and validated (:mod:`kit.sim.untrusted`); StateFileError
    naming what is wrong. Nothing is changed, in the file or anywhere else."""
    try:
        with untrusted.guarded(conn, budget):
            version = check(conn, where)
            (verdict,) = conn.execute("PRAGMA quick_check(1)").fetchone()
            if verdict != "ok":
                raise StateFileError(f"{where} is damaged (SQLite: {verdict})")
            loaded = _read(conn, version)
    except untrusted.Refused as exc:
        raise StateFileError(f"{where}: cannot be read: {exc}") from None
    except StateFileError:
        raise
    except sqlite3.DatabaseError as exc:
        raise StateFileError(f"{where} cannot be read ({exc}): it is damaged") from None
    except Exception as exc:  # a value that does not unpickle into its record: any error at all
        raise StateFileError(f"{where}: cannot be read ({type(exc).__name__}): it is damaged") from None
    reason = untrusted.invalid(loaded.meta, loaded.random_state, loaded.homes, loaded.version)
    if reason:
        raise StateFileError(f"{where}: holds a value that is not valid: {reason}")
    return loaded


def _read(conn: sqlite3.Connection, version: int) -> Loaded:
    meta_row = conn.execute("SELECT value FROM kit_state WHERE name = 'meta'").fetchone()
    random_row = conn.execute("SELECT value FROM kit_state WHERE name = 'random'").fetchone()
    random_state = decode(random_row[0]) if random_row else None
    rows = conn.execute("SELECT home, key, value FROM records ORDER BY seq").fetchall()
    meta = decode(meta_row[0]) if meta_row else None
    homes: dict[str, dict[Any, Any]] = defaultdict(dict)
    for home, key, value in rows:
        if home in HOMES:
            homes[home][_key(key)] = decode(value)
    for (data,) in conn.execute("SELECT data FROM journal ORDER BY id") if version > 1 else ():
        values, meta, moved = decode(data)  # a record already there keeps its place
        random_state = moved if moved is not None else random_state
        for home, key, value in values:
            if home in HOMES:
                if value is None:
                    homes[home].pop(key, None)
                else:
                    homes[home][key] = value
    return Loaded(version, meta, random_state, dict(homes))


def load(conn: sqlite3.Connection, state: State, where: str, budget: int = untrusted.BUDGET) -> None:
    """Replace ``state`` with what ``conn`` holds (checked first: nothing changes if refused)."""
    apply(state, read(conn, where, budget))


def apply(state: State, loaded: Loaded) -> None:
    """Replace ``state`` with ``loaded`` (validated by :func:`read`: this does not fail). Tokens a
    file of format 3 or older kept themselves are kept as digests; stored answers sealed by
    another server's key are dropped (:mod:`kit.sim.atrest`)."""
    meta, homes = loaded.meta, loaded.homes
    if meta is None:
        return  # a new file: nothing written yet
    if loaded.version < 4:
        _digest_tokens(state, homes)
    state.reset(int(meta["seed"]))
    state.clock._now, state.clock._offset = meta["now"], meta["offset"]
    state.ids._counters.update(meta["counters"])
    if loaded.random_state is not None:
        state.random.setstate(loaded.random_state)
    sealer = state.sealer
    for home, kept in homes.items():
        target = getattr(state, home)
        items = list(kept.items())
        for key, value in items:
            if home == "idempotency" and (value.in_flight or value.sealed_by not in (None, sealer.key_id)):
                continue  # never answered (the key may be retried), or sealed by another server's key
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


def _digest_tokens(state: State, homes: dict[str, dict[Any, Any]]) -> None:
    """A file of format 3 or older: its tokens as this server's digests, its stored answers
    holding a clear token sealed with this server's key."""
    digest = state.sealer.digest
    for home in ("partner_tokens", "sessions"):
        kept = homes.get(home, {})
        homes[home] = {k if is_digest(k) else digest(k): v for k, v in kept.items()}
    for session in homes.get("sessions", {}).values():
        if not is_digest(session.token):
            session.token = digest(session.token)
    for record in homes.get("idempotency", {}).values():
        if record.sealed_by is None and b'"session_token"' in record.response_body:
            record.response_body = state.sealer.seal(record.response_body)
            record.sealed_by = state.sealer.key_id


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


def read_snapshot_bytes(data: bytes, budget: int = untrusted.BUDGET, where: str = "the snapshot") -> Loaded:
    """A snapshot's state, checked and validated (:func:`read`), or StateFileError. Safe to run
    off the event loop: it touches no :class:`State`."""
    if not data.startswith(MAGIC):
        raise StateFileError(f"{where} is not a kit state (not a SQLite database)")
    conn = sqlite3.connect(":memory:")
    try:
        try:
            conn.deserialize(data)
        except sqlite3.DatabaseError as exc:
            raise StateFileError(f"{where} is not a kit state ({exc})") from None
        return read(conn, where, budget)
    finally:
        conn.close()


def sealer_beside(path: str) -> Sealer:
    """The sealing key kept beside the state file ``path`` (:meth:`Sealer.beside`)."""
    try:
        return Sealer.beside(path)
    except OSError as exc:
        raise StateFileError(f"cannot keep the key beside {path}: {exc.strerror}") from None


def restore(state: State, data: bytes, before: Callable[[], None] | None = None) -> None:
    """Replace ``state`` with a snapshot's; StateFileError (and ``state`` unchanged) if it is not one.
    ``before`` runs once the snapshot has been read whole, just before ``state`` changes."""
    loaded = read_snapshot_bytes(data)
    if before is not None:
        before()
    apply(state, loaded)


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


def read_snapshot(path: str, limit: int | None = None) -> bytes:
    """The bytes of the snapshot file ``path``, refused past ``limit`` bytes (A71) unread."""
    try:
        with open(path, "rb") as f:
            if limit is not None and os.fstat(f.fileno()).st_size > limit:
                raise StateFileError(f"{path}: larger than the snapshot cap of {limit:,} bytes (A71)")
            return f.read()
    except OSError as exc:
        raise StateFileError(f"cannot read the snapshot {path}: {exc.strerror}") from None
