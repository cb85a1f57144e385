"""``kit serve`` in a subprocess, run as users run it: the one launcher the tests and the
benchmarks share (``from tests.support.launcher import serve_process``, from the repository root).

The server prints ``Serving on http://127.0.0.1:PORT`` (``https://`` with ``--ssl-certfile``) as
its first line once it listens;
:func:`serve_process` waits for that line (bounded), hands back the base URL and the process,
and stops the process afterwards whatever happened.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

__all__ = ["Served", "proxy_process", "serve_exits", "serve_process", "stop"]

#: The repository's root, which holds the ``kit`` package: ``python -m kit`` runs from there.
_ROOT = Path(__file__).resolve().parents[2]
_FIRST_LINE = re.compile(r"Serving on (https?://127\.0\.0\.1:\d+)\s*")
_PROXY_LINE = re.compile(r"Proxying on (http://127\.0\.0\.1:\d+) to \S+\s*")
_STOP_TIMEOUT_S = 10.0
_KILL_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Served:
    """A running ``kit serve``: where it listens, its process (ours to stop) and the last lines
    of its stderr so far (its log) and of its stdout (the line it started with, then uvicorn's
    access log)."""

    base_url: str
    process: subprocess.Popen[str]
    stderr: Callable[[], str] = str
    stdout: Callable[[], str] = str

    @property
    def port(self) -> int:
        """The port ``--port 0`` picked."""
        return int(self.base_url.rsplit(":", 1)[1])


class _Lines:
    """Every line of a pipe, read in a daemon thread so that the pipe never fills up and
    blocks the server: the first line, and the last few for an error message."""

    def __init__(self, stream: IO[str], keep: int = 40) -> None:
        self.first: str | None = None
        self.tail: collections.deque[str] = collections.deque(maxlen=keep)
        self._first_seen = threading.Event()
        self._stream = stream
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for line in self._stream:
                if self.first is None:
                    self.first = line
                    self._first_seen.set()
                self.tail.append(line)
        except (OSError, ValueError):  # the stream was closed under us
            pass
        finally:
            self._first_seen.set()

    def first_line(self, timeout: float) -> str:
        """The first line, or ``""`` when none came within ``timeout`` seconds."""
        self._first_seen.wait(timeout)
        return self.first or ""

    def text(self) -> str:
        return "".join(self.tail)

    def finish(self, timeout: float = _KILL_TIMEOUT_S) -> None:
        """Wait (bounded) for the end of the stream, then close it."""
        self._thread.join(timeout)
        if not self._thread.is_alive():  # closing under a blocked reader would block too
            self._stream.close()


def stop(process: subprocess.Popen[Any]) -> None:
    """Stop a process we started, by its own handle: terminate, then kill if it lingers.

    Example::

        stop(subprocess.Popen(["sleep", "60"]))
    """
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=_KILL_TIMEOUT_S)


@contextmanager
def serve_process(
    *args: str, seed: int = 7, env: Mapping[str, str] | None = None, timeout: float = 30.0
) -> Iterator[Served]:
    """Run ``python -m kit serve --host 127.0.0.1 --port 0 --seed SEED *args`` until the block ends.

    ``env`` is added to this process's environment. The process is stopped on the way out
    (terminate, then kill), even when the block raised or stopped it itself.

    Raises:
        RuntimeError: the first line was not ``Serving on http://127.0.0.1:PORT`` within
            ``timeout`` seconds (the process is killed; the message ends with its stderr).

    Example::

        with serve_process("--no-control") as served:
            httpx.get(served.base_url + "/webhooks/jwks")
    """
    with _launched(
        ["serve", "--host", "127.0.0.1", "--port", "0", "--seed", str(seed), *args], _FIRST_LINE, env, timeout
    ) as served:
        yield served


@contextmanager
def proxy_process(
    to: str, *args: str, env: Mapping[str, str] | None = None, timeout: float = 30.0
) -> Iterator[Served]:
    """Run ``python -m kit proxy --to TO --host 127.0.0.1 --port 0 *args`` until the block ends
    (its first line: ``Proxying on http://127.0.0.1:PORT to TO``); stopped as :func:`serve_process`
    stops ``kit serve`` (SIGTERM first: the proxy writes its files then).

    Example::

        with serve_process() as served, proxy_process(served.base_url, "--har", "run.har") as proxy:
            httpx.get(proxy.base_url + "/webhooks/jwks")
    """
    arguments = ["proxy", "--to", to, "--host", "127.0.0.1", "--port", "0", *args]
    with _launched(arguments, _PROXY_LINE, env, timeout) as proxied:
        yield proxied


@contextmanager
def _launched(
    arguments: list[str], first: re.Pattern[str], env: Mapping[str, str] | None, timeout: float
) -> Iterator[Served]:
    """``python -m kit ARGUMENTS``, its first line matched by ``first``, until the block ends."""
    process = subprocess.Popen(
        [sys.executable, "-m", "kit", *arguments],
        cwd=_ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )
    assert process.stdout is not None and process.stderr is not None
    out, err = _Lines(process.stdout), _Lines(process.stderr)
    try:
        line = out.first_line(timeout)
        match = first.fullmatch(line)
        if match is None:
            process.kill()
            process.wait(timeout=_KILL_TIMEOUT_S)
            err.finish()
            raise RuntimeError(f"kit {arguments[0]} printed {line!r} first; stderr: {err.text()[-800:]}")
        yield Served(match.group(1), process, err.text, out.text)
    finally:
        stop(process)
        out.finish()
        err.finish()


def serve_exits(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m kit serve --port 0 *args`` that is expected to end by itself (a refusal
    to start), bounded; its exit status and output. ``env`` is added to this process's."""
    return subprocess.run(
        [sys.executable, "-m", "kit", "serve", "--port", "0", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=_ROOT,
        env={**os.environ, **(env or {})},
    )
