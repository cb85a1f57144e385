"""The wire of a notebook's clients, seen by the companion: each exchange's notebook cell, and
— in a kernel ``kit regress`` started — the exchanges and the tokens' fingerprints written for
the runner.

``kit regress`` names a file prefix in the kernel's environment (:data:`WIRE_ENV`). The
companion then appends every exchange its clients complete (redacted when recorded,
:mod:`kit._wire`) to ``PREFIX.wire.jsonl``, from which the runner writes the notebook's HAR
(``--har``), and keeps ``PREFIX.tokens.json``: salted SHA-256 fingerprints of the partner,
session and control tokens its clients used, never a token, with which the runner's leak scan
finds those tokens in any format (:class:`kit.regress.scanner.Fingerprints`). Only the process
that read the variable writes (it is removed from the environment: a worker process a notebook
starts, such as a population shard, does not inherit it).
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import threading
from pathlib import Path
from typing import Any

from kit._wire import Exchange, Recorder, as_dict

__all__ = ["TOKEN_KINDS", "WIRE_ENV", "Sink", "cell"]

#: The environment variable ``kit regress`` sets in a kernel: the prefix of its wire files.
WIRE_ENV = "KIT_REGRESS_WIRE"
#: The kinds of secret whose fingerprints are written (kinds of :mod:`kit._redaction`).
TOKEN_KINDS = ("partner-token", "session-token", "control-token", "token")


def cell() -> str | None:
    """The notebook cell running now (``notebook cell In [5]``), or ``None`` outside IPython."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None  # type: ignore[attr-defined]
    count = getattr(shell, "execution_count", None)  # already the next cell's while one runs
    return f"notebook cell In [{count - 1}]" if isinstance(count, int) and count > 1 else None


class Sink:
    """Where one kernel writes its wire for ``kit regress`` (see the module docstring)."""

    def __init__(self, prefix: str) -> None:
        self.wire_path = Path(prefix + ".wire.jsonl")
        self.tokens_path = Path(prefix + ".tokens.json")
        self._salt = secrets.token_bytes(16)
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._recorders: list[Recorder] = []
        self._written = 0

    @classmethod
    def from_env(cls) -> Sink | None:
        """The sink ``kit regress`` named, taken out of the environment; ``None`` when unset."""
        prefix = os.environ.pop(WIRE_ENV, None)
        return cls(prefix) if prefix else None

    def watch(self, recorder: Recorder | None) -> None:
        """Write the fingerprints of ``recorder``'s tokens too."""
        if recorder is not None:
            with self._lock:
                self._recorders.append(recorder)

    def write(self, exchange: Exchange) -> None:
        """Append ``exchange`` and refresh the fingerprints (this process only)."""
        if os.getpid() != self._pid:
            return
        line = json.dumps(as_dict(exchange), ensure_ascii=False)
        with self._lock:
            with self.wire_path.open("a", encoding="utf-8") as out:
                out.write(line + "\n")
            found: set[str] = set()
            for recorder in self._recorders:
                found |= recorder.redactor.fingerprints(self._salt, TOKEN_KINDS)
            if len(found) != self._written:
                data: dict[str, Any] = {"salt": self._salt.hex(), "fingerprints": sorted(found)}
                partial = self.tokens_path.with_suffix(".part")
                partial.write_text(json.dumps(data), encoding="utf-8")
                partial.replace(self.tokens_path)
                self._written = len(found)
