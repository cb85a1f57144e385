"""One notebook in one worker process: papermill, a pinned kernel, stderr captured.

Kernels are ``python3`` pinned to this interpreter (``sys.executable``), whatever other
``python3`` kernelspec the user has installed (:func:`pinned_kernelspec`), and talk to
papermill over IPC sockets (no "running over TCP without encryption" warning on stderr).
:func:`execute` never raises: what went wrong comes back as a plain dict (it crosses a
process boundary), which :mod:`kit.regress.results` turns into a result.

Example::

    >>> outcome = execute("notebooks/00_quickstart.ipynb", "/tmp/00.ipynb", "notebooks",
    ...                   {"seed": 7}, 120.0, "/tmp/ipc")  # doctest: +SKIP
    >>> sorted(outcome)                                     # doctest: +SKIP
    ['error', 'notes', 'seconds', 'stderr']
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from kit._lazy import imported_past
from kit.notebook.wire import WIRE_ENV
from kit.regress.model import RegressError

__all__ = [
    "KERNEL_NAME",
    "execute",
    "import_papermill",
    "init_worker",
    "pinned_kernelspec",
    "without_iri_checks",
]

KERNEL_NAME = "python3"
#: papermill's settings for every notebook: the pinned kernel, quiet, a minute to start it. The
#: kernel is shut down in order (not killed): a cell over the time-out gets its interrupt's error
#: output only then, which names the cell in the report; a forked kernel
#: (:mod:`kit.regress.kernels`) skips the interpreter's teardown when it exits.
_PAPERMILL = {"kernel_name": KERNEL_NAME, "progress_bar": False, "log_output": False, "start_timeout": 60}


def init_worker(environ: Mapping[str, str]) -> None:
    """A worker process's initializer: the kernels' environment (``KIT_REGRESS``, the token);
    papermill imported (:func:`import_papermill`: inherited when the worker was forked)."""
    os.environ.update(environ)
    import_papermill()


def import_papermill() -> None:
    """Import papermill in a process of ``kit regress``'s own (its workers) without jsonschema's
    ``iri`` format checks (:func:`without_iri_checks`)."""
    if "papermill" in sys.modules:
        return
    with without_iri_checks():
        import papermill  # noqa: F401


def without_iri_checks() -> contextlib.AbstractContextManager[None]:
    """For a block, jsonschema imported without its ``iri`` format checks: jsonschema imports
    ``rfc3987_syntax`` eagerly when it is installed, and that module builds its Lark parsers as
    it is imported (python-jsonschema/jsonschema#1428; benchmarks/bench.py FIXES: "eager iri checker").
    Nothing ``kit regress`` validates is an ``iri``: nbformat's notebook schemas use no such
    format. The module is importable again after the block."""
    return imported_past("rfc3987_syntax")


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def _captured_stderr() -> Iterator[list[str]]:
    """Route fd 2 (this worker's and its kernel's stderr) to a file; yield its lines after."""
    lines: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield lines
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            lines.extend(sink.read().decode("utf-8", errors="replace").splitlines())


def execute(
    source: str,
    output: str,
    cwd: str,
    parameters: dict[str, Any],
    cell_timeout: float,
    ipc_dir: str,
    wire: str | None = None,
) -> dict[str, Any]:
    """Run one notebook with papermill in this worker process.

    Returns ``seconds``, ``error`` (``ename``, ``evalue``, ``traceback``, or ``None``), ``notes``
    (papermill's warnings), ``stderr`` (the non-blank lines the worker and kernel wrote) and
    ``wire``: the prefix of the files where the kernel's notebook companion wrote its wire and
    its tokens' fingerprints (given to the kernel as :data:`kit.notebook.wire.WIRE_ENV`).

    Raises:
        Nothing: a failing cell, a time-out, a dead kernel or an unreadable notebook is reported.
    """
    import papermill
    from jupyter_client.kernelspec import KernelSpecManager
    from papermill.exceptions import PapermillExecutionError
    from traitlets.config import Config

    collect = _Collect()
    pm_log = logging.getLogger("papermill")
    pm_log.addHandler(collect)
    pm_log.propagate = False
    error: dict[str, Any] | None = None
    start = time.perf_counter()
    if wire is not None:  # the kernel inherits it; this worker runs one notebook at a time
        os.environ[WIRE_ENV] = wire
    with _captured_stderr() as stderr:
        try:
            argv0 = KernelSpecManager().get_kernel_spec(KERNEL_NAME).argv[0]
            if argv0 != sys.executable:  # the pinned spec must win over any user-installed one
                raise RegressError(f"kernel {KERNEL_NAME!r} resolves to {argv0}, not {sys.executable}")
            # IPC sockets in a private folder: no TCP ports, no plain-text warning on stderr
            ipc = Config({"KernelManager": {"transport": "ipc", "ip": f"{ipc_dir}/{os.getpid()}"}})
            papermill.execute_notebook(
                source,
                output,
                parameters=parameters,
                cwd=cwd,
                execution_timeout=cell_timeout,
                config=ipc,
                kernel_manager_class=_manager(),
                engine_name=_engine(),
                **_PAPERMILL,
            )
        except PapermillExecutionError as exc:
            error = {"ename": exc.ename, "evalue": str(exc.evalue), "traceback": list(exc.traceback)}
        except Exception as exc:  # a time-out, a dead kernel, an unreadable notebook: all reported
            error = {"ename": type(exc).__name__, "evalue": str(exc), "traceback": []}
        finally:
            pm_log.removeHandler(collect)
            os.environ.pop(WIRE_ENV, None)
    return {
        "seconds": time.perf_counter() - start,
        "error": error,
        "notes": collect.messages,
        "stderr": [line for line in stderr if line.strip()],
        "wire": wire,
    }


#: How often the kernel manager looks whether a kernel it asked to shut down has ended
#: (jupyter_client's default: every 100 ms, ~50 ms lost per notebook on average).
SHUTDOWN_POLL_S = 0.01
#: How long the kernel manager waits for a kernel that answered its shutdown request to end
#: before it terminates it (jupyter_client's default: 5 s, the terminate at half of it). All a
#: notebook's outputs are in by then; ipykernel 7.4 now and then hangs in its own close (its
#: control thread flushing stdout to the IOPub thread the close just stopped: a py-spy dump of
#: one), which cost ~2.5 s of a notebook's time, about one notebook in a suite.
SHUTDOWN_WAIT_S = 1.0
#: The quiet on IOPub after which a started kernel's start-up messages count as drained
#: (jupyter_client waits 200 ms of it at every kernel start).
IOPUB_QUIET_S = 0.02


def _manager() -> type[Any]:
    """papermill's kernel manager: jupyter_client's, without its fixed waits — it looks every
    :data:`SHUTDOWN_POLL_S` for a kernel's end (terminating one still there after
    :data:`SHUTDOWN_WAIT_S`), and its client drains IOPub after
    :data:`IOPUB_QUIET_S` of quiet once the kernel answered (nbclient takes a cell's outputs from
    the messages answering that cell's request: a late start-up message never lands in a cell)."""
    from queue import Empty

    from jupyter_client.asynchronous import AsyncKernelClient
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class Client(AsyncKernelClient):  # type: ignore[misc]
        async def wait_for_ready(self, timeout: float | None = None) -> None:
            """jupyter_client's wait for a kernel's ``kernel_info_reply`` (IOPub connected too)."""
            deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
            while True:
                self.kernel_info()
                try:
                    reply = await self.shell_channel.get_msg(timeout=1)
                except Empty:
                    pass
                else:
                    if reply["msg_type"] == "kernel_info_reply":
                        try:  # the reply's status message: IOPub is connected (else ask again)
                            await self.iopub_channel.get_msg(timeout=0.2)
                        except Empty:
                            pass
                        else:
                            self._handle_kernel_info_reply(reply)
                            break
                if not await self._async_is_alive():
                    raise RuntimeError("Kernel died before replying to kernel_info")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")
            while True:  # drain what the start left on IOPub
                try:
                    await self.iopub_channel.get_msg(timeout=IOPUB_QUIET_S)
                except Empty:
                    return

    class Manager(AsyncKernelManager):  # type: ignore[misc]
        @default("client_factory")
        def _client_factory_default(self) -> type[Any]:
            return Client

        async def _async_finish_shutdown(  # jupyter_client's wait for the end (its poll: a keyword)
            self, waittime: float | None = None, pollinterval: float = 0.1, restart: bool = False
        ) -> None:
            wait = SHUTDOWN_WAIT_S if waittime is None else min(waittime, SHUTDOWN_WAIT_S)
            await super()._async_finish_shutdown(wait, min(pollinterval, SHUTDOWN_POLL_S), restart)

    return Manager


#: How often papermill writes the executed notebook while it runs (its default: at the start and
#: the end of every cell, the whole notebook each time — a third of kit regress's own CPU); it is
#: always written when the notebook ends, however it ends.
SAVE_EVERY_S = 5.0
ENGINE = "kit-regress"


def _engine() -> str:
    """papermill's engine for kit regress (registered by this name): nbclient's, writing the
    executed notebook at most every :data:`SAVE_EVERY_S` while the cells run, and skipping the
    tagged sections that cannot run here (:mod:`kit.regress.sections`)."""
    from papermill.engines import NBClientEngine, papermill_engines

    from kit.regress import sections

    class Engine(sections.engine(NBClientEngine)):  # type: ignore[misc]
        @classmethod
        def execute_managed_notebook(cls, nb_man: Any, kernel_name: str, **kwargs: Any) -> Any:
            full = nb_man.save

            def save(**how: Any) -> None:
                if (nb_man.now() - nb_man.last_save_time).total_seconds() >= SAVE_EVERY_S:
                    full(**how)

            nb_man.save = save
            try:
                return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)
            finally:
                nb_man.save = full  # the end (papermill's notebook_complete, next) writes it in full

    papermill_engines.register(ENGINE, Engine)
    return ENGINE


def pinned_kernelspec(folder: Path, *, forked: bool = False) -> Path:
    """A ``python3`` kernelspec running this interpreter; its parent goes first on JUPYTER_PATH.
    ``forked``: its command is :mod:`kit.regress._kernel_launcher`, which asks the run's kernel
    fork server (:mod:`kit.regress.kernels`) for a kernel, or starts an ordinary one.

    Example::

        >>> jupyter_path = pinned_kernelspec(Path(tmp) / "jupyter")  # doctest: +SKIP

    Raises:
        FileExistsError: when ``folder`` already holds a ``python3`` kernelspec.
    """
    from ipykernel.kernelspec import get_kernel_dict

    from kit.regress.kernels import LAUNCHER

    spec = get_kernel_dict()
    spec["argv"][0] = sys.executable
    if forked and spec["argv"][1:3] == ["-m", "ipykernel_launcher"]:
        spec["argv"][1:3] = ["-S", str(LAUNCHER)]
    spec["display_name"] = "Python 3 (kit regress)"
    target = folder / "kernels" / KERNEL_NAME
    target.mkdir(parents=True)
    (target / "kernel.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
    return folder
