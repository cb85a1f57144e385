"""Local worker processes for a population's shards, each its own interpreter started by module
name (``python -m kit.lab.populations._worker``).

Why not :mod:`multiprocessing`: each of its start methods prepares a worker by importing the
caller's main module again — a script without an ``if __name__ == "__main__":`` guard runs
twice (and starts workers from its workers), a script on standard input is looked for as a file
named ``<stdin>`` — and a worker that dies leaves only "terminated abruptly". A worker started
by module name never sees the caller's main module, from a script, standard input,
``python -c`` or a notebook's kernel alike; its standard error passes through this process,
which keeps the last lines of it, so a worker that dies is reported with its exit code or
signal and what it last wrote. In a kernel of ``kit regress`` the command is the run's own way
to start ``python -m`` (``KIT_REGRESS_PYTHON_M``, :func:`python_m`): the worker is forked from
the run's kernel fork server, its imports done, and is otherwise the same.

A :class:`Pool` is kept between runs by :mod:`kit.lab.populations.engine` (each worker keeps its
simulator); a worker runs one shard at a time, the next as soon as it is free. A pool for a run
against a shared server (another profile than ``sim``) is given that server's settings in its
workers' environment (``environ``: never their command line, never a file), starts no
simulator, and is not kept.

Example::

    >>> pool = Pool(2)                                           # doctest: +SKIP
    >>> results = pool.run(specs, advance=lambda n: None)        # doctest: +SKIP
    >>> pool.close()                                             # doctest: +SKIP
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from kit import _env as env
from kit.errors import KitError
from kit.lab.populations.shard import ShardResult, ShardSpec

__all__ = ["Pool", "WorkerDied", "python_m"]

#: Lines of a worker's standard error kept to say why it died.
TAIL = 40


class WorkerDied(KitError):
    """A population worker process ended while it ran a shard (the message says how)."""


class RemoteTraceback(Exception):
    """The traceback of a shard's error, as its worker printed it (chained under the error)."""

    def __str__(self) -> str:
        return "\n" + str(self.args[0])


def _environment(extra: Mapping[str, str]) -> dict[str, str]:
    """This process's environment and ``extra``, with the folder this ``kit`` comes from first
    on the path (unless it is an installed package's folder, which the worker finds by itself)."""
    environ = {**os.environ, **extra}
    root = str(Path(__file__).resolve().parents[3])
    if Path(root).name not in {"site-packages", "dist-packages"}:
        environ["PYTHONPATH"] = os.pathsep.join(p for p in (root, environ.get("PYTHONPATH")) if p)
    return environ


def python_m() -> list[str]:
    """How to start ``python -m MODULE``: this interpreter; in a kernel of ``kit regress``, forked
    from the run's kernel fork server instead (``KIT_REGRESS_PYTHON_M``), whose imports — the
    shard's, the simulator's — are done: a worker starts in milliseconds, not a second of CPU.
    Either way the worker is a new process that never sees the caller's main module."""
    with contextlib.suppress(ValueError):
        prefix = json.loads(os.environ.get(env.REGRESS_PYTHON_M) or "null")
        if isinstance(prefix, list) and prefix and all(isinstance(part, str) for part in prefix):
            return prefix
    return [sys.executable, "-m"]


class Worker:
    """One worker process: sends it a shard, reads its ticks and its result. With
    ``environ`` (a shared server's settings, added to its environment) it starts no simulator."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        command = [*python_m(), "kit.lab.populations._worker"]
        self.process = subprocess.Popen(
            command + (["--clients"] if environ else []),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_environment(environ or {}),
        )
        self.tail: collections.deque[str] = collections.deque(maxlen=TAIL)
        self.busy = threading.Lock()
        self._forwarder = threading.Thread(target=self._forward, name="kit-population-stderr", daemon=True)
        self._forwarder.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def _forward(self) -> None:
        """The worker's standard error, passed on to this process's as it comes; its tail kept.
        At its end (the worker ended) the worker is reaped at once: a Jupyter kernel's shutdown
        signals the children of its process group and waits until none is left, and a worker
        ended but not reaped (a zombie) still counts: the kernel would wait seconds, then be
        killed (``benchmarks/results/notebooks_profile.json``, notebook 12's end)."""
        stream: IO[bytes] = self.process.stderr  # type: ignore[assignment]
        for line in iter(stream.readline, b""):
            self.tail.append(line.decode("utf-8", "replace").rstrip("\n"))
            with contextlib.suppress(OSError):
                os.write(2, line)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=30)  # closed its standard error: it is ending

    def why(self) -> str:
        """How the worker ended (it has, or is ended now) and the last of its standard error."""
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self._forwarder.join(timeout=5)
        if code < 0:
            try:
                how = f"killed by signal {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exit code {code}"
        said = "\n".join(self.tail) or "(nothing)"
        return f"pid {self.pid}, {how}; the last of its standard error:\n{said}"

    def run(self, spec: ShardSpec, tick: Callable[[int], None]) -> ShardResult:
        """Run ``spec`` on this worker (waiting while it finishes another run's shard).

        Raises:
            WorkerDied: the worker ended before it answered.
            Exception: the shard's own error (its traceback chained as :class:`RemoteTraceback`).
        """
        with self.busy:
            try:
                pickle.dump(spec, self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)  # type: ignore[arg-type]
                self.process.stdin.flush()  # type: ignore[union-attr]
                while True:
                    kind, value = pickle.load(self.process.stdout)  # type: ignore[arg-type]
                    if kind == "tick":
                        tick(value)
                    elif kind == "done":
                        return value  # type: ignore[no-any-return]
                    else:
                        error, text = value
                        raise error from RemoteTraceback(text)
            except (EOFError, OSError, pickle.UnpicklingError):
                raise WorkerDied(
                    f"a population worker process died running shard {spec.index} ({self.why()})"
                ) from None

    def close(self, *, kill: bool = False) -> None:
        """End the worker: at the end of its input (it finishes its shard first), or at once."""
        if kill:
            self.process.kill()
        with contextlib.suppress(OSError):
            self.process.stdin.close()  # type: ignore[union-attr]
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]


class Pool:
    """``size`` worker processes; :meth:`run` spreads shards over them. ``environ``: added to
    their environment (a shared server's settings; see :class:`Worker`)."""

    def __init__(self, size: int, environ: Mapping[str, str] | None = None) -> None:
        self.workers = [Worker(environ) for _ in range(size)]

    @property
    def alive(self) -> bool:
        return all(w.alive for w in self.workers)

    def run(self, specs: Sequence[ShardSpec], advance: Callable[[int], None]) -> list[ShardResult]:
        """Every shard's result, in shard order; ``advance`` called (in this thread) with the
        customers done as batches finish. On the first error no further shard is started.

        Raises:
            WorkerDied: a worker process ended while it ran a shard.
            Exception: a shard's own error.
        """
        events: queue.Queue[tuple[str, int, Any]] = queue.Queue()
        todo = collections.deque(range(len(specs)))
        taking, stop = threading.Lock(), threading.Event()

        def ticker(index: int) -> Callable[[int], None]:
            return lambda customers: events.put(("tick", index, customers))

        def drive(worker: Worker) -> None:
            while not stop.is_set():
                with taking:
                    if not todo:
                        return
                    index = todo.popleft()
                try:
                    result = worker.run(specs[index], ticker(index))
                except BaseException as exc:
                    events.put(("error", index, exc))
                    return
                events.put(("done", index, result))

        for worker in self.workers:
            threading.Thread(target=drive, args=(worker,), name="kit-population", daemon=True).start()
        results: dict[int, ShardResult] = {}
        while len(results) < len(specs):
            with contextlib.suppress(queue.Empty):
                kind, index, value = events.get(timeout=0.2)  # short waits: Ctrl-C gets through
                if kind == "tick":
                    advance(value)
                elif kind == "done":
                    results[index] = value
                else:
                    stop.set()
                    raise value
        return [results[i] for i in range(len(specs))]

    def close(self, *, kill: bool = False) -> None:
        for worker in self.workers:
            worker.close(kill=kill)
