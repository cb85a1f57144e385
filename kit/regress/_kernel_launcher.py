"""The command of ``kit regress``'s pinned kernelspec: run by path, never imported (standard library
only, started with ``python -S``: a few milliseconds).

It asks ``kit regress``'s kernel fork server (:mod:`kit.regress.kernels`, its socket named in
:data:`SOCKET_ENV`) for a kernel forked from a process that has the kernel's and the notebooks'
imports done, handing over its standard streams, environment, working folder and arguments;
then it stands in for that kernel towards the kernel manager that started it: a signal it gets
(an interrupt, a terminate) goes to the kernel's process group, it ends with the kernel's exit
code, and when it is killed the fork server kills the kernel. Without the variable, or when the
server cannot be reached, it becomes an ordinary kernel (``python -m ipykernel_launcher``).
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
#: Signals passed on to the kernel's process group (SIGKILL cannot be: the server sees us go).
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def _ordinary() -> NoReturn:
    os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", *sys.argv[1:]])


def main() -> None:
    path = os.environ.pop(SOCKET_ENV, None)
    if not path:
        _ordinary()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.connect(path)
        socket.send_fds(server, [b"F"], [0, 1, 2])
        request = {"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}
        server.sendall(json.dumps(request).encode("utf-8") + b"\n")
        answers = server.makefile("rb")
        started = answers.readline().split()
    except OSError:
        started = []
    if len(started) != 2 or started[0] != b"pid":  # no server, or it could not fork: a kernel here
        server.close()
        _ordinary()
    pid = int(started[1])

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(OSError):
            os.killpg(pid, signum)

    for signum in FORWARDED:
        signal.signal(signum, forward)
    ended = answers.readline().split()  # "exit CODE" when the kernel ends
    code = int(ended[1]) if len(ended) == 2 and ended[0] == b"exit" else 1
    os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
