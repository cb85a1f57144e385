"""The command of ``kit regress``'s pinned kernelspec: run by path, never imported (standard library
only, started with ``python -S``: a few milliseconds).

It asks ``kit regress``'s kernel fork server (:mod:`kit.regress.kernels`, its socket named in
:data:`SOCKET_ENV`) for a kernel forked from a process that has the kernel's and the notebooks'
imports done, handing over its standard streams, environment, working folder and arguments;
then it stands in for that kernel towards the kernel manager that started it: a signal it gets
(an interrupt, a terminate) goes to the kernel's process group, it ends with the kernel's exit
code, and when it is killed the fork server kills the kernel. Without the variable, or when the
server cannot be reached, it becomes an ordinary kernel (``python -m ipykernel_launcher``).

It tells the kernel how to start ``python -m MODULE`` the same way (:data:`PYTHON_M_ENV`, read by
a population's worker pool): ``_kernel_launcher.py --socket PATH -m MODULE ARGS...`` asks the
server for a child that runs the module as ``__main__`` (its imports done, so it starts in
milliseconds), stands in for it likewise and ends as it ended (a signal as that signal); without
the server it becomes ``python -m MODULE ARGS...``.
"""

import contextlib
import json
import os
import signal
import socket
import sys
from typing import NoReturn

#: The environment variable naming the fork server's socket (kept in step with kit.regress.kernels).
SOCKET_ENV = "KIT_REGRESS_KERNELS"
#: Set in the kernel's environment: how to start ``python -m`` forked from the same server (a JSON
#: list; kept in step with kit._env.REGRESS_PYTHON_M).
PYTHON_M_ENV = "KIT_REGRESS_PYTHON_M"
#: Signals passed on to the kernel's process group (SIGKILL cannot be: the server sees us go).
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def _ordinary(module: str, argv: list[str]) -> NoReturn:
    os.execv(sys.executable, [sys.executable, "-m", module, *argv])


def _ended(code: int, module: str | None) -> NoReturn:
    """End as the child ended: a module's child killed by a signal, by that signal."""
    if module is not None and code < 0:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
    os._exit(code if code >= 0 else 128 - code)


def main() -> None:
    argv, module = sys.argv[1:], None
    path = os.environ.pop(SOCKET_ENV, None)
    if argv[:1] == ["--socket"] and len(argv) >= 4 and argv[2] == "-m":  # python -m MODULE, forked
        path, module, argv = argv[1], argv[3], argv[4:]
    if not path:
        _ordinary(module or "ipykernel_launcher", argv)
    env = dict(os.environ)
    if module is None:  # the kernel's own python -m, from the same server
        here = os.path.abspath(__file__)
        env[PYTHON_M_ENV] = json.dumps([sys.executable, "-S", here, "--socket", path, "-m"])
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.connect(path)
        socket.send_fds(server, [b"F"], [0, 1, 2])
        request = {"argv": argv, "env": env, "cwd": os.getcwd(), "module": module}
        server.sendall(json.dumps(request).encode("utf-8") + b"\n")
        answers = server.makefile("rb")
        started = answers.readline().split()
    except OSError:
        started = []
    if len(started) != 2 or started[0] != b"pid":  # no server, or it could not fork: run it here
        server.close()
        _ordinary(module or "ipykernel_launcher", argv)
    pid = int(started[1])

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(OSError):
            os.killpg(pid, signum)

    for signum in FORWARDED:
        signal.signal(signum, forward)
    ended = answers.readline().split()  # "exit CODE" when the kernel ends
    _ended(int(ended[1]) if len(ended) == 2 and ended[0] == b"exit" else 1, module)


if __name__ == "__main__":
    main()
