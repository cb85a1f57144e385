"""A local population worker process: ``python -m kit.lab.populations._worker``, started by
:mod:`kit.lab.populations.pool`. Nothing imports it.

Its own interpreter, started by module name, so it never imports or re-runs the caller's main
module — a script without an ``if __name__ == "__main__":`` guard, a script on standard input,
``python -c``, a notebook's kernel — as multiprocessing's start methods do. It reads pickled
:class:`~kit.lab.populations.shard.ShardSpec` objects on standard input and writes pickled messages on its
standard output: ``("tick", customers)`` as batches finish, then ``("done", ShardResult)`` or
``("error", (exception, traceback text))``. Its own prints and logs go to standard error, which
the parent forwards and keeps the last lines of (to say why, if this process dies). It ends at
the end of its input: the parent closed it, or the parent died.

With ``--clients`` its shards are clients of a shared server (another profile than ``sim``),
whose settings are in its environment: it starts (and warms) no simulator.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import sys
import threading
import traceback
from typing import Any

from kit.errors import KitError


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a :class:`KitError` that names it."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return KitError(f"{type(exc).__name__}: {exc}")
    return exc


def main() -> None:
    faulthandler.enable()  # a crash (SIGSEGV, SIGABRT…) leaves its Python traceback on stderr
    wire = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints go to stderr, never into the messages
    sys.stdout = sys.stderr
    lock = threading.Lock()

    def send(message: tuple[str, Any]) -> None:
        with lock:
            pickle.dump(message, wire, protocol=pickle.HIGHEST_PROTOCOL)
            wire.flush()

    if "--clients" not in sys.argv[1:]:
        import kit.lab.populations._warm  # noqa: F401  (the shard's imports, once, before the first shard)
    from kit.lab.populations.shard import init_worker, run_shard

    init_worker(lambda customers: send(("tick", customers)))
    source = sys.stdin.buffer
    while True:
        try:
            spec = pickle.load(source)
        except EOFError:
            return
        try:
            result = run_shard(spec)
        except Exception as exc:
            send(("error", (_portable(exc), traceback.format_exc())))
        else:
            send(("done", result))


if __name__ == "__main__":
    main()
