"""Kernels forked from a warm process: ``kit regress``'s kernel fork server.

Every notebook runs in a fresh kernel, and every fresh kernel used to import the same things
again — ipykernel and IPython, pandas, the kit and its companion, the simulator's FastAPI app —
about a second of CPU each (``benchmarks/results/notebooks_profile.json``). The fork server
(:func:`main`, one per ``kit regress`` run, started by :func:`serving`)
imports them once and then forks one child per kernel asked for; the child takes the asking
process's standard streams, environment, working folder and arguments and becomes an ordinary
ipykernel. The server never runs notebook code and starts no thread, no simulator and no event
loop, so each kernel starts from the same state a fresh interpreter would reach by importing:
notebooks cannot see each other. The pinned kernelspec's command
(:mod:`kit.regress._kernel_launcher`) asks for the kernel and stands in for it towards the
kernel manager; without the server it starts an ordinary kernel.

The server ends when its standard input closes (the run ended, or died), killing any kernel
still running; a kernel whose launcher is killed is killed with its process group.

Example::

    >>> with serving(tmp_dir, environ) as extra:   # doctest: +SKIP
    ...     kernel_env.update(extra)                # names the socket to the launchers
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = ["LAUNCHER", "PYTHON_M_ENV", "SOCKET_ENV", "WARM", "available", "serving"]

#: The kernelspec's command, run by path (see :mod:`kit.regress._kernel_launcher`).
LAUNCHER = Path(__file__).with_name("_kernel_launcher.py")
#: The environment variable naming the server's socket to the launchers.
SOCKET_ENV = "KIT_REGRESS_KERNELS"
#: Set by the launcher in each kernel's environment: how to start ``python -m MODULE`` forked from
#: this server too (``kit._env.REGRESS_PYTHON_M``; a population's workers start so).
PYTHON_M_ENV = "KIT_REGRESS_PYTHON_M"
#: What the server imports before it forks: what every notebook's kernel imports first. Never a
#: module that looks at its surroundings when imported: one that acts on the IPython it finds
#: (ipywidgets, matplotlib.pyplot, tqdm.auto) or reads the environment into its defaults. pandas
#: does one such thing, handled in :func:`_warm`.
WARM = (
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "ipykernel.zmqshell",
    "pandas",
    "httpx",
    "kit.notebook",
    "kit._client",
    "kit.simulate",
    "kit.sim.app",
    "kit.sim.server",
)


class _KernelShell:
    """What pandas sees of IPython while the server imports it: a Jupyter kernel's shell."""

    kernel = True


def _warm() -> None:
    import builtins
    import importlib

    # pandas chooses its display.max_columns default when imported: 0 (fit the terminal) unless
    # get_ipython() is a kernel's shell (then 20). Imported here as a kernel imports it.
    builtins.get_ipython = _KernelShell  # type: ignore[attr-defined]
    try:
        for name in WARM:
            with contextlib.suppress(ImportError):  # a light install lacks some: its kernels import less
                importlib.import_module(name)
    finally:
        del builtins.get_ipython  # type: ignore[attr-defined]
    kit = sys.modules.get("kit")
    for name in getattr(kit, "__all__", ()):  # the lazy public names' modules
        with contextlib.suppress(Exception):
            getattr(kit, name)


def _child(
    selector: selectors.BaseSelector, conn: socket.socket, fds: list[int], request: dict[str, Any]
) -> None:
    """In the forked child: become the kernel the launcher asked for, or run the module it named
    as ``__main__`` (``python -m MODULE``: a kernel's own child, see :data:`PYTHON_M_ENV`); never
    returns."""
    code = 1
    try:
        os.setsid()  # its own process group: its workers go with it, as an ordinary kernel's do
        for key in list(selector.get_map().values()):  # the server's socket, other kernels'
            if key.fd > 2:
                with contextlib.suppress(OSError):
                    os.close(key.fd)
        selector.close()
        conn.close()
        for target, fd in zip((0, 1, 2), fds, strict=True):
            os.dup2(fd, target)
            os.close(fd)
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        argv = list(request["argv"])
        if request.get("module"):  # python -m MODULE: a kernel's child (a population's worker)
            import runpy

            sys.argv = [request["module"], *argv]
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
            code = 0
            return
        if os.environ.get("JPY_PARENT_PID"):  # the app read it at import, in the server
            argv.append(f"--IPKernelApp.parent_handle={int(os.environ['JPY_PARENT_PID'])}")
        import importlib.util

        from ipykernel import kernelapp

        launcher = importlib.util.find_spec("ipykernel_launcher")
        sys.argv = [getattr(launcher, "origin", None) or "ipykernel_launcher", *argv]  # as with -m

        kernelapp.launch_new_instance(argv=argv)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        if not isinstance(exc.code, int | None):  # as the interpreter does: the message on stderr
            print(exc.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
    finally:
        # The process ends with os._exit, without the interpreter's teardown: a collection of
        # what it holds would free nothing. IPython's exit handler collects all the same (its
        # reset: ~70 ms a kernel); frozen objects are left out of every collection.
        gc.freeze()
        with contextlib.suppress(BaseException):
            atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        os._exit(code)


def _fork(selector: selectors.BaseSelector, conn: socket.socket) -> int | None:
    """Read one launcher's request and fork its kernel; the child's pid, or ``None``."""
    conn.settimeout(10)
    try:
        _, fds, _, _ = socket.recv_fds(conn, 1, 3)
        line = conn.makefile("rb").readline()
        request = json.loads(line)
    except (OSError, ValueError):
        return None
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return None
    pid = os.fork()
    if pid == 0:
        _child(selector, conn, fds, request)
    for fd in fds:
        os.close(fd)
    return pid


def serve(listener: socket.socket) -> None:
    """The server's loop: a kernel per connection, until standard input closes."""
    _warm()
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, ("accept",))
    selector.register(0, selectors.EVENT_READ, ("stdin",))
    kernels: dict[int, socket.socket] = {}
    while True:
        for key, _ in selector.select():
            kind = key.data[0]
            if kind == "accept":
                conn, _ = listener.accept()
                pid = _fork(selector, conn)
                if pid is None:
                    conn.close()
                    continue
                conn.settimeout(None)
                kernels[pid] = conn
                conn.sendall(f"pid {pid}\n".encode())
                selector.register(os.pidfd_open(pid), selectors.EVENT_READ, ("ended", pid))
                selector.register(conn, selectors.EVENT_READ, ("launcher", pid))
            elif kind == "ended":  # the kernel exited: tell its launcher how
                pid = key.data[1]
                selector.unregister(key.fd)
                os.close(key.fd)
                code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
                conn = kernels.pop(pid)
                with contextlib.suppress(OSError):
                    conn.sendall(f"exit {code}\n".encode())
                with contextlib.suppress(KeyError, ValueError):
                    selector.unregister(conn)
                conn.close()
            elif kind == "launcher":  # it went away (killed): the kernel goes too
                selector.unregister(key.fd)
                with contextlib.suppress(OSError):
                    os.killpg(key.data[1], signal.SIGKILL)
            elif not os.read(0, 1024):  # the run ended
                for pid in kernels:
                    with contextlib.suppress(OSError):
                        os.killpg(pid, signal.SIGKILL)
                return


@contextlib.contextmanager
def serving(folder: Path, environ: Mapping[str, str]) -> Iterator[dict[str, str]]:
    """A fork server for this block, its socket in ``folder``; yields what the launchers need in
    their environment. The socket listens before the server has imported anything, so the
    first kernels wait for it (at most its imports) rather than start without it."""
    path = folder / "kernels.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(64)
    env = {**os.environ, **environ}
    process = subprocess.Popen(
        [sys.executable, "-c", "from kit.regress.kernels import main; main()", str(listener.fileno())],
        stdin=subprocess.PIPE,
        pass_fds=(listener.fileno(),),
        env=env,
    )
    listener.close()
    try:
        yield {SOCKET_ENV: str(path)}
    finally:
        with contextlib.suppress(OSError):
            process.stdin.close()  # type: ignore[union-attr]
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def available() -> bool:
    """Whether this platform can fork kernels (Linux: ``fork``, ``pidfd_open``, passing fds)."""
    return all(hasattr(os, name) for name in ("fork", "pidfd_open", "setsid")) and hasattr(socket, "send_fds")


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the run's to handle; stdin ends us
    if sys.path and Path(sys.path[0] or ".").resolve() == Path.cwd():
        del sys.path[0]  # as ipykernel_launcher does: IPython puts '' back in each kernel
    serve(socket.socket(fileno=int(sys.argv[1])))
