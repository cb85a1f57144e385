"""A durable simulator: its whole state in one SQLite file (``kit serve --state FILE``).

One table of records (``home``, ``key``, ``seq``, ``value``) holds every home of state
(``kit.sim.state.HOMES``: tokens, nonces, sessions and their keys, idempotency records and
their stored answers, subscriptions and deliveries, accounts, persons, cards, transfers,
document requests…); one table of settings holds the format, its version and the clock, id
counters and random state. The file is in WAL mode with ``synchronous=NORMAL``: a commit is
durable against a crash of the process (a power loss may lose the last commits, never
corrupt the file). :meth:`StateFile.save` runs before every answer leaves (the
``ServiceHeaders`` middleware), in one transaction, writing what the request touched
(``kit.sim.journal``).

A snapshot is the same database, made from the state in memory (``GET /_sim/snapshot``) or
copied from a running server's file with SQLite's online backup (``kit state snapshot``). It
never holds a client secret (they come from the server's settings). Values are pickled and
read back by an unpickler that knows only the simulator's record classes: a snapshot from
elsewhere cannot run code.

    >>> state_file = StateFile.open("/tmp/team.kitstate")  # doctest: +SKIP
    >>> state_file.load(state)  # doctest: +SKIP
"""

from __future__ import annotations

import copyreg
import fcntl
import io
import json
import os
import pickle
import sqlite3
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from joserfc.jwk import ECKey

from kit.sim import state as records
from kit.sim.journal import Journal
from kit.sim.state import HOMES, State
from kit.sim.stores import Store

FORMAT = "kit-sim-state"
#: The version of the file's format; a file of another version is refused.
VERSION = 1
MEDIA_TYPE = "application/vnd.sqlite3"
_MAGIC = b"SQLite format 3\x00"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS kit_state (name TEXT PRIMARY KEY, value BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS records (home TEXT NOT NULL, key TEXT NOT NULL, seq INTEGER NOT NULL,"
    " value BLOB NOT NULL, PRIMARY KEY (home, key)) WITHOUT ROWID",
)
_UPSERT = (
    "INSERT INTO records (home, key, seq, value) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (home, key) DO UPDATE SET value = excluded.value"
)


class StateFileError(Exception):
    """A state file or snapshot that cannot be used; the message names it and what to do."""


# --- values: pickled, read back knowing only the record classes ----------------------------------


def _ec_key(jwk: dict[str, Any]) -> ECKey:
    return ECKey.import_key(jwk)


def _reduce_ec_key(key: ECKey) -> tuple[Any, ...]:
    return _ec_key, (key.as_dict(private=False),)


_TABLE = copyreg.dispatch_table.copy()
_TABLE[type(ECKey.generate_key("P-256"))] = _reduce_ec_key
_ALLOWED = {
    ("datetime", "datetime"),
    ("datetime", "timezone"),
    ("datetime", "timedelta"),
    ("decimal", "Decimal"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    (__name__, "_ec_key"),
    *((records.__name__, name) for name in vars(records) if isinstance(getattr(records, name), type)),
}


def encode(value: Any) -> bytes:
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=5)
    pickler.dispatch_table = _TABLE
    pickler.dump(value)
    return out.getvalue()


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not a record of a kit state")
        return super().find_class(module, name)


def decode(data: bytes) -> Any:
    return _Unpickler(io.BytesIO(data)).load()


def _key_text(key: Any) -> str:
    return json.dumps(key, separators=(",", ":"))


def _key(text: str) -> Any:
    value = json.loads(text)
    return tuple(value) if isinstance(value, list) else value


# --- writing and reading a state ----------------------------------------------------------------


def _meta(state: State) -> dict[str, Any]:
    clock = state.clock
    return {
        "seed": state.seed,
        "now": clock._now,
        "offset": clock._offset,
        "counters": dict(state.ids._counters),
        "random": state.random.getstate(),
    }


def _schema(conn: sqlite3.Connection) -> None:
    for statement in _SCHEMA:
        conn.execute(statement)
    conn.executemany(
        "INSERT OR REPLACE INTO kit_state (name, value) VALUES (?, ?)",
        [("format", FORMAT), ("version", VERSION)],
    )


def _write_all(conn: sqlite3.Connection, state: State) -> int:
    conn.execute("DELETE FROM records")
    seq = 0
    rows = []
    for home in HOMES:
        for key, value in getattr(state, home).items() if home != "deliveries" else _deliveries(state):
            seq += 1
            rows.append((home, _key_text(key), seq, encode(value)))
    conn.executemany("INSERT INTO records (home, key, seq, value) VALUES (?, ?, ?, ?)", rows)
    conn.execute("INSERT OR REPLACE INTO kit_state (name, value) VALUES ('meta', ?)", (encode(_meta(state)),))
    return seq


def _deliveries(state: State) -> list[tuple[str, Any]]:
    """The delivery log, finished ones first (the order the bound forgets them in)."""
    log = state.deliveries
    pending = dict(log.pending())
    return [(k, v) for k, v in dict.items(log._data) if k not in pending] + list(pending.items())


def _check(conn: sqlite3.Connection, where: str) -> None:
    """Refuse a database that is not a kit state of this version."""
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "kit_state" not in tables:
            raise StateFileError(f"{where} is a SQLite database but not a kit state: give another path")
        found = dict(conn.execute("SELECT name, value FROM kit_state WHERE name IN ('format', 'version')"))
    except sqlite3.DatabaseError as exc:
        raise StateFileError(f"{where} is not a kit state ({exc}): give another path") from None
    if found.get("format") != FORMAT:
        raise StateFileError(f"{where} is not a kit state: give another path")
    if found.get("version") != VERSION:
        raise StateFileError(
            f"{where} has state format version {found.get('version')}, this kit reads version {VERSION}: "
            "use the kit that wrote it, or start from a new file"
        )


def _load(conn: sqlite3.Connection, state: State, where: str) -> None:
    """Replace ``state`` with what ``conn`` holds (checked first: nothing changes if refused)."""
    _check(conn, where)
    try:
        meta_row = conn.execute("SELECT value FROM kit_state WHERE name = 'meta'").fetchone()
        rows = conn.execute("SELECT home, key, value FROM records ORDER BY seq").fetchall()
        meta = decode(meta_row[0]) if meta_row else None
        homes: dict[str, list[tuple[Any, Any]]] = defaultdict(list)
        for home, key, value in rows:
            if home in HOMES:
                homes[home].append((_key(key), decode(value)))
    except (sqlite3.DatabaseError, pickle.UnpicklingError, ValueError, TypeError, EOFError) as exc:
        raise StateFileError(f"{where} cannot be read ({type(exc).__name__}): it is damaged") from None
    if meta is None:
        return  # a new file: nothing written yet
    state.reset(int(meta["seed"]))
    state.clock._now, state.clock._offset = meta["now"], meta["offset"]
    state.ids._counters.update(meta["counters"])
    state.random.setstate(meta["random"])
    for home, items in homes.items():
        target = getattr(state, home)
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
            _schema(conn)
            _write_all(conn, state)
        return bytes(conn.serialize())
    finally:
        conn.close()


def restore(state: State, data: bytes, before: Callable[[], None] | None = None) -> None:
    """Replace ``state`` with a snapshot's; StateFileError (and ``state`` unchanged) if it is not one.
    ``before`` runs once the snapshot has been read whole, just before ``state`` changes."""
    if not data.startswith(_MAGIC):
        raise StateFileError("the snapshot is not a kit state (not a SQLite database)")
    conn = sqlite3.connect(":memory:")
    try:
        try:
            conn.deserialize(data)
        except sqlite3.DatabaseError as exc:
            raise StateFileError(f"the snapshot is not a kit state ({exc})") from None
        probe = State(7, "2025-01-06T09:00:00Z", state.bounds)
        _load(conn, probe, "the snapshot")  # refused before anything of ``state`` changes
        if before is not None:
            before()
        _load(conn, state, "the snapshot")
    finally:
        conn.close()


# --- the file of a running server ---------------------------------------------------------------


class StateFile:
    """A kit state file held by this process (an exclusive lock: one server per file)."""

    def __init__(self, path: str, conn: sqlite3.Connection, lock_fd: int) -> None:
        self.path = path
        self._conn = conn
        self._lock_fd = lock_fd
        self._seq = int(conn.execute("SELECT coalesce(max(seq), 0) FROM records").fetchone()[0])
        self.journal = Journal()

    @classmethod
    def open(cls, path: str) -> StateFile:
        """Open (or create, owner-only) the state file at ``path``; StateFileError naming the
        file and what to do when it is not a kit state, of another version, in use by another
        server or not writable. A refused file is left as it was."""
        path = os.path.abspath(path)
        if os.path.isdir(path):
            raise StateFileError(f"{path} is a directory: give a file path for --state")
        folder = os.path.dirname(path)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise StateFileError(
                f"cannot write beside {path} (the folder is not writable): choose another place"
            )
        if os.path.exists(path):
            if not os.access(path, os.R_OK | os.W_OK):
                raise StateFileError(
                    f"cannot read and write {path}: fix its permissions or give another path"
                )
            with open(path, "rb") as f:
                head = f.read(len(_MAGIC))
            if head and head != _MAGIC:
                raise StateFileError(
                    f"{path} is not a kit state file: give another path (nothing was changed)"
                )
        try:
            lock_fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StateFileError(f"cannot open {path}: {exc.strerror}") from None
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(lock_fd)
            raise StateFileError(
                f"{path} is in use by another running kit serve: stop it first, or give another path"
            ) from None
        try:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            new = not conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if not new:
                _check(conn, path)  # before anything is written, even the journal mode
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            if new:
                conn.execute("BEGIN")
                _schema(conn)
                conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            os.close(lock_fd)
            raise StateFileError(f"{path} is not a kit state file ({exc}): give another path") from None
        except StateFileError:
            conn.close()
            os.close(lock_fd)
            raise
        return cls(path, conn, lock_fd)

    def holds_state(self) -> bool:
        return self._conn.execute("SELECT 1 FROM kit_state WHERE name = 'meta'").fetchone() is not None

    def load(self, state: State) -> None:
        """Make ``state`` durable here, starting from what the file holds."""
        state.attach(self.journal, self.save)
        _load(self._conn, state, self.path)
        self.save(state)  # dropped in-flight keys go from the file too

    def save(self, state: State) -> None:
        """Write what changed since the last save, in one transaction."""
        journal = self.journal
        conn = self._conn
        conn.execute("BEGIN")
        try:
            if journal.everything:
                self._seq = _write_all(conn, state)
            else:
                ups, gone = [], []
                for home, key in journal.changed():
                    where = getattr(state, home)
                    value = dict.get(where if home in _KEPT_HOMES else where._data, key)
                    if value is None:
                        gone.append((home, _key_text(key)))
                    else:
                        self._seq += 1
                        ups.append((home, _key_text(key), self._seq, encode(value)))
                if gone:
                    conn.executemany("DELETE FROM records WHERE home = ? AND key = ?", gone)
                if ups:
                    conn.executemany(_UPSERT, ups)
                conn.execute(
                    "INSERT OR REPLACE INTO kit_state (name, value) VALUES ('meta', ?)",
                    (encode(_meta(state)),),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        journal.written()

    def close(self) -> None:
        self._conn.close()
        os.close(self._lock_fd)  # after the connection: closing it drops SQLite's own locks


_KEPT_HOMES = frozenset(records._KEPT)


def backup(path: str, out: str) -> None:
    """Copy the state file of a (running) server to ``out`` (owner-only), with SQLite's online
    backup: a consistent copy while the server keeps writing. Refuses an existing ``out``."""
    if os.path.exists(out):
        raise StateFileError(f"{out} exists: give a new path for the snapshot")
    if not os.path.exists(path):
        raise StateFileError(f"{path} does not exist: give the --state file of a kit serve")
    source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        _check(source, path)
        os.close(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        target = sqlite3.connect(out)
        try:
            source.backup(target)
            target.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
        finally:
            target.close()
    finally:
        source.close()


def read_snapshot(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise StateFileError(f"cannot read the snapshot {path}: {exc.strerror}") from None
