"""The state file of a running durable simulator (``kit serve --state FILE``).

:class:`StateFile` holds the file for this process (an exclusive lock: two servers on one
file are refused, not corrupted), loads it at start and writes what changed:

- before an answer leaves, :meth:`StateFile.flush` (the ``ServiceHeaders`` middleware): the
  requests that reach that point in one turn of the event loop share one transaction (a group
  commit), written at the next turn, between two awaits, so what is written is always a state
  the simulator was in; their answers wait for it. Under load the file costs about one commit
  per turn of the loop, not one per request;
- outside a request (a webhook attempt, the wall clock's rounds, start and stop),
  :meth:`StateFile.save`, at once.

A commit runs on the event loop: handing it to a thread cost more in hand-offs of the GIL than
the write itself (SQLite releases the GIL while it writes).

The file is in WAL mode with ``synchronous=NORMAL``: a commit survives a crash of the process;
a power loss may lose the last commits, never corrupt the file. Checkpoints (moving the WAL
into the file, with an fsync) run in a thread of their own, once a second.

    >>> state_file = StateFile.open("/tmp/team.kitstate")  # doctest: +SKIP
    >>> state_file.load(state)  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import sqlite3
import threading

from kit.sim.journal import Journal
from kit.sim.state import State
from kit.sim.statefile import MAGIC, Batch, StateFileError, changes, check, everything, load, schema, write

#: How often a background thread moves the WAL into the file (seconds).
CHECKPOINT_EVERY_S = 1.0


class StateFile:
    """A kit state file held by this process."""

    def __init__(self, path: str, conn: sqlite3.Connection, lock_fd: int) -> None:
        self.path = path
        self.journal = Journal()
        self._conn = conn
        self._lock_fd = lock_fd
        self._seq = int(conn.execute("SELECT coalesce(max(seq), 0) FROM records").fetchone()[0])
        self._next: asyncio.Future[None] | None = None  # the transaction requests are joining
        self._settings: dict[str, bytes] = {}  # as last written: an unchanged one is not written again
        conn.execute("PRAGMA wal_autocheckpoint=0")
        self._stop = threading.Event()
        self._checkpoints = threading.Thread(
            target=self._checkpoint_loop, name="kit-state-checkpoint", daemon=True
        )
        self._checkpoints.start()

    @classmethod
    def open(cls, path: str) -> StateFile:
        """Open (or create, owner-only) the state file at ``path``; StateFileError naming the
        file and what to do when it is not a kit state, of another version, in use by another
        server or not writable. A refused file is left as it was."""
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
            new = not conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if not new:
                check(conn, path)  # before anything is written, even the journal mode
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            if new:
                conn.execute("BEGIN")
                schema(conn)
                conn.execute("COMMIT")
        except (sqlite3.DatabaseError, StateFileError) as exc:
            if conn is not None:
                conn.close()
            os.close(lock_fd)
            if isinstance(exc, StateFileError):
                raise
            raise StateFileError(f"{path} is not a kit state file ({exc}): give another path") from None
        return cls(path, conn, lock_fd)

    def holds_state(self) -> bool:
        return self._conn.execute("SELECT 1 FROM kit_state WHERE name = 'meta'").fetchone() is not None

    def load(self, state: State) -> None:
        """Make ``state`` durable here, starting from what the file holds."""
        state.attach(self.journal, self)
        load(self._conn, state, self.path)
        self.save(state)  # dropped in-flight keys go from the file too

    # -- writing -------------------------------------------------------------------------------

    def _collect(self, state: State) -> Batch:
        journal = self.journal
        batch = everything(state) if journal.everything else changes(state, journal.changed(), self._seq)
        self._seq = len(batch.upserts) if batch.everything else self._seq + len(batch.upserts)
        journal.written()
        if not batch.everything:  # the clock and counters move only now and then
            batch.settings = [(k, v) for k, v in batch.settings if self._settings.get(k) != v]
        self._settings.update(batch.settings)
        return batch

    def _write(self, batch: Batch) -> None:
        conn = self._conn
        conn.execute("BEGIN")
        try:
            write(conn, batch)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            self.journal.everything = True  # the next write starts over from memory
            self._settings.clear()
            raise

    def save(self, state: State) -> None:
        """Write what changed, now."""
        self._write(self._collect(state))

    async def flush(self, state: State) -> None:
        """Write what changed, in a transaction the requests finishing now share; return
        when it is on disk. A request alone (no other open, no transaction gathering) writes
        at once, without waiting for a turn of the loop."""
        if self._next is None and self.journal.alone():
            self.save(state)
            return
        if self._next is None:
            self._next = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().call_soon(self._cut, state)
        await asyncio.shield(self._next)

    def _cut(self, state: State) -> None:
        waiting, self._next = self._next, None
        assert waiting is not None
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
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            pass  # the next start checkpoints what is left; a commit never depends on this
        finally:
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._checkpoints.join(timeout=10)
        with contextlib.suppress(sqlite3.Error):
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._conn.close()
        os.close(self._lock_fd)  # after the connection: closing it drops SQLite's own locks
