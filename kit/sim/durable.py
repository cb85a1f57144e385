"""The state file of a running durable simulator (``kit serve --state FILE``).

:class:`StateFile` holds the file for this process (an exclusive lock: two servers on one
file are refused, not corrupted), loads it at start and writes what changed:

- before an answer leaves, :meth:`StateFile.flush` (the ``ServiceHeaders`` middleware): one
  row of the file's journal, in one transaction, holding every record the request touched and
  every record any request still open has touched (``kit.sim.journal``), so that what is
  written is always a state the simulator was in. A request alone writes at once; requests
  finishing while others are open share one transaction (a group commit), cut
  :data:`GROUP_WINDOW_S` later, between two awaits; their answers wait for it;
- outside a request (a webhook attempt, the wall clock's rounds, start and stop),
  :meth:`StateFile.save`, at once.

A write that moved nothing (no record touched, the clock and counters as the last row left
them) writes no row. Every request moves the request-id counter, so a request always writes.

Every :data:`FOLD_EVERY` journal rows, at the next turn of the loop (after the answers),
:meth:`StateFile.fold` brings the records up to date (each record touched since the last
fold, once, as in memory then; a record born and gone since then costs nothing) and empties
the journal, in one transaction; so does closing. Why a journal: a transaction that appends one
row costs a server about half of one that updates each record in place
(``benchmarks/results/state_cost.json``).

A commit runs on the event loop: handing it to a thread cost more in hand-offs of the GIL than
the write itself (SQLite releases the GIL while it writes).

The file is in WAL mode with ``synchronous=NORMAL``: a commit survives a crash of the process;
a power loss may lose the last commits, never corrupt the file. Checkpoints (moving the WAL
into the file, with an fsync) run in a thread of their own, once a second; when the WAL has
grown past :data:`WAL_RESTART_PAGES` under steady traffic, a checkpoint that restarts it (a
short wait for the next commit) keeps the file bounded.

    >>> state_file = StateFile.open("/tmp/team.kitstate")  # doctest: +SKIP
    >>> state_file.load(state)  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable

from kit.sim import untrusted
from kit.sim.journal import Journal, Key
from kit.sim.state import State
from kit.sim.statefile import (
    MAGIC,
    Batch,
    StateFileError,
    changes,
    check,
    clock_and_counters,
    entry,
    everything,
    load,
    schema,
    write,
)

#: How often a background thread moves the WAL into the file (seconds).
CHECKPOINT_EVERY_S = 1.0
#: A WAL longer than this (pages) after a checkpoint is restarted from its beginning.
WAL_RESTART_PAGES = 2000
#: Journal rows written between two folds into the records.
FOLD_EVERY = 256
#: How long a transaction gathers the requests that finish while others are open (seconds).
GROUP_WINDOW_S = 0.002


def _empty_journal(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM journal")


class StateFile:
    """A kit state file held by this process."""

    def __init__(
        self, path: str, conn: sqlite3.Connection, lock_fd: int, budget: int = untrusted.BUDGET
    ) -> None:
        self.path = path
        self.budget = budget  # of a statement reading the file at start (A71)
        self.journal = Journal()
        self._conn = conn
        self._lock_fd = lock_fd
        self._seq = int(conn.execute("SELECT coalesce(max(seq), 0) FROM records").fetchone()[0])
        self._next: asyncio.Future[None] | None = None  # the transaction requests are joining
        self._settings: dict[str, bytes] = {}  # as last written: an unchanged one is not written again
        self._last_meta: dict[str, object] | None = None  # the clock and counters of the last journal row
        self._logged: dict[Key, None] = {}  # the keys of the journal's rows (the next fold's)
        self._rows = 0  # journal rows since the last fold
        self._stored: set[tuple[str, str]] = set()  # the keys in the records (home, key text)
        self._folding = False  # a fold is due at the next turn of the loop
        self._state: State | None = None
        self._waiters = 0  # requests waiting for the transaction gathering
        self._timer: asyncio.TimerHandle | None = None  # when it is cut at the latest
        conn.execute("PRAGMA wal_autocheckpoint=0")
        conn.execute(f"PRAGMA journal_size_limit={WAL_RESTART_PAGES * 4096}")
        self._stop = threading.Event()
        self._checkpoints = threading.Thread(
            target=self._checkpoint_loop, name="kit-state-checkpoint", daemon=True
        )
        self._checkpoints.start()

    @classmethod
    def open(cls, path: str, budget: int = untrusted.BUDGET) -> StateFile:
        """Open (or create, owner-only) the state file at ``path``; StateFileError naming the
        file and what to do when it is not a kit state, of another version, in use by another
        server or not writable. A refused file is left as it was."""
        try:
            import fcntl  # POSIX only: the lock that keeps a second server off the file
        except ImportError:
            raise StateFileError(
                "kit serve --state needs Linux or macOS (the state file is locked with flock): "
                "run kit serve without --state here"
            ) from None
        path = os.path.abspath(path)
        if os.path.isdir(path):
            raise StateFileError(f"{path} is a directory: give a file path for --state")
        if not os.access(os.path.dirname(path), os.W_OK | os.X_OK):
            raise StateFileError(
                f"cannot write beside {path} (the folder is not writable): choose another place"
            )
        if os.path.exists(path):
            if not os.access(path, os.R_OK | os.W_OK):
                raise StateFileError(
                    f"cannot read and write {path}: fix its permissions or give another path"
                )
            with open(path, "rb") as f:
                head = f.read(len(MAGIC))
            if head and head != MAGIC:
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
        conn = None
        try:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            with untrusted.guarded(conn, budget):
                new = not conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
                if not new:
                    check(conn, path)  # before anything is written, even the journal mode
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            if new:
                conn.execute("BEGIN")
                schema(conn)
                conn.execute("COMMIT")
        except (sqlite3.DatabaseError, StateFileError, untrusted.Refused) as exc:
            if conn is not None:
                conn.close()
            os.close(lock_fd)
            if isinstance(exc, StateFileError):
                raise
            raise StateFileError(f"{path} is not a kit state file ({exc}): give another path") from None
        return cls(path, conn, lock_fd, budget)

    def holds_state(self) -> bool:
        return self._conn.execute("SELECT 1 FROM kit_state WHERE name = 'meta'").fetchone() is not None

    def load(self, state: State) -> None:
        """Make ``state`` durable here, starting from what the file holds."""
        state.attach(self.journal, self)
        load(self._conn, state, self.path, self.budget)
        self._state = state
        # The whole state, in the records (dropped in-flight keys go too), with the tables an
        # older version lacks and this version, in one transaction: an older file's journal
        # rows are gone when its version changes.
        self._write(self._collect(everything(state)), schema)
        self.journal.written()

    # -- writing -------------------------------------------------------------------------------

    def _collect(self, batch: Batch) -> Batch:
        """``batch`` without the settings that did not move; the records' keys followed."""
        self._seq = len(batch.upserts) if batch.everything else self._seq + len(batch.upserts)
        if not batch.everything:  # the clock and counters move only now and then
            batch.settings = [(k, v) for k, v in batch.settings if self._settings.get(k) != v]
        self._settings.update(batch.settings)
        if batch.everything:
            self._stored = {(home, key) for home, key, _, _ in batch.upserts}
        else:  # a record born and gone since the last fold was never in the records
            stored = self._stored
            batch.gone = [item for item in batch.gone if item in stored]
            stored.difference_update(batch.gone)
            stored.update((home, key) for home, key, _, _ in batch.upserts)
        return batch

    def _write(self, batch: Batch, first: Callable[[sqlite3.Connection], None] | None = None) -> None:
        """``batch`` in one transaction, after ``first`` in the same transaction (a new version's
        tables, emptying the journal); on failure nothing is written and the next write starts over."""
        conn = self._conn
        conn.execute("BEGIN")
        try:
            if first is not None:
                first(conn)
            write(conn, batch)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            self._lost()
            raise

    def _lost(self) -> None:
        """A write failed: the next one starts over from memory."""
        self.journal.everything = True
        self._last_meta = None
        self._settings.clear()
        self._stored.clear()

    def save(self, state: State) -> None:
        """Write what changed, now: one journal row (the whole state, in the records, after
        a reset or a restore)."""
        journal = self.journal
        if journal.everything:
            self._write(self._collect(everything(state)))
            journal.written()
            self._logged.clear()
            self._rows = 0
            return
        keys = journal.changed()
        meta = clock_and_counters(state)
        if not keys and meta == self._last_meta:  # nothing moved since the last row: nothing to write
            journal.written()
            return
        data = entry(state, keys, meta)
        journal.written()
        try:
            self._conn.execute("INSERT INTO journal (data) VALUES (?)", (data,))
        except BaseException:
            self._lost()
            raise
        self._logged.update(dict.fromkeys(keys))
        self._last_meta = meta
        self._rows += 1
        if self._rows >= FOLD_EVERY and not self._folding:
            self._folding = True
            try:
                asyncio.get_running_loop().call_soon(self._fold_soon, state)
            except RuntimeError:  # no loop (a test, a tool): at once
                self.fold(state)

    def _fold_soon(self, state: State) -> None:
        with contextlib.suppress(Exception):  # failed: the next write starts over from memory
            self.fold(state)

    def fold(self, state: State) -> None:
        """Bring the records up to date and empty the journal, in one transaction: every record
        the journal's rows hold, and every one a request still open has touched, as in memory
        now (a state the simulator is in)."""
        self._folding = False
        journal = self.journal
        if journal.everything:
            self.save(state)
            return
        keys = list({**self._logged, **dict.fromkeys(journal.changed())})
        self._write(self._collect(changes(state, keys, self._seq)), _empty_journal)
        journal.written()
        self._logged.clear()
        self._rows = 0

    async def flush(self, state: State) -> None:
        """Write what changed, in a transaction the requests finishing now share; return
        when it is on disk. A request alone (no other open, no transaction gathering) writes
        at once; otherwise the transaction is cut :data:`GROUP_WINDOW_S` after the first
        request joined it, or as soon as no other request is open."""
        if self._next is None and self.journal.alone():
            self.save(state)
            return
        loop = asyncio.get_running_loop()
        if self._next is None:
            self._next = loop.create_future()
            self._timer = loop.call_later(GROUP_WINDOW_S, self._cut, state)
        self._waiters += 1
        if self._timer is not None and self._waiters >= self.journal.open_requests():
            self._timer.cancel()  # every open request waits for it: nobody else to wait for
            self._timer = None
            loop.call_soon(self._cut, state)
        await asyncio.shield(self._next)

    def _cut(self, state: State) -> None:
        waiting, self._next = self._next, None
        if waiting is None:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._waiters, self._timer = 0, None
        try:
            self.save(state)
        except Exception as exc:
            waiting.set_exception(exc)
        else:
            waiting.set_result(None)

    # -- checkpoints and closing ---------------------------------------------------------------

    def _checkpoint_loop(self) -> None:
        conn = sqlite3.connect(self.path, check_same_thread=False)
        try:
            while not self._stop.wait(CHECKPOINT_EVERY_S):
                _, pages, _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                if pages > WAL_RESTART_PAGES:  # steady traffic: the next commit starts it over
                    conn.execute("PRAGMA wal_checkpoint(RESTART)")
        except sqlite3.Error:
            pass  # the next start checkpoints what is left; a commit never depends on this
        finally:
            conn.close()

    def close(self) -> None:
        """Fold the journal into the records, checkpoint, let the file go (once)."""
        if self._stop.is_set():
            return
        if self._state is not None and self._rows:
            with contextlib.suppress(sqlite3.Error):
                self.fold(self._state)
        self._stop.set()
        self._checkpoints.join(timeout=10)
        with contextlib.suppress(sqlite3.Error):
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._conn.close()
        os.close(self._lock_fd)  # after the connection: closing it drops SQLite's own locks
