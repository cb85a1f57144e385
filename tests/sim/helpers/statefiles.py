"""What a state file holds, read by another connection: its records, then its journal."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kit.sim import statefile
from kit.sim.state import State

#: The simulator's seeded clock start, the state tests' ``State(7, START)``.
START = "2025-01-06T09:00:00Z"


def held(path: Path) -> State:
    """The state the file at ``path`` holds now, loaded into a fresh ``State`` (seed 7)."""
    probe = State(7, START)
    conn = sqlite3.connect(path)
    try:
        statefile.load(conn, probe, str(path))
    finally:
        conn.close()
    return probe
