"""``kit regress --scheduler ADDRESS``: the notebooks on a Dask cluster's workers.

Each (notebook, parameter set) is one Dask task. The task carries the notebook's text, not a
path — a worker may be another machine — and runs it with papermill in a private temporary
folder of the worker (the working directory too), on a ``python3`` kernel pinned to the
worker's interpreter with ``KIT_REGRESS=1`` in the kernel's own environment (its kernelspec:
the worker's environment is left alone). The executed notebook comes back as text; the caller
writes it to the output folder, analyses it and scans it for leaks exactly as a local run does.

A worker runs one notebook at a time (papermill and the stderr capture are per process):
start workers with one thread each (``dask worker ADDRESS --nworkers N --nthreads 1``).
Secrets never travel: a sandbox run (``profile=sandbox``) is refused on a cluster.

Needs ``dask[distributed]`` (``pip install 'partner-api-kit[dask]'``), imported only here.

Example::

    >>> client = connect("tcp://127.0.0.1:8786")                        # doctest: +SKIP
    >>> outcome, text = client.submit(execute_text, "00.ipynb", source, {"seed": 7}, 120.0).result()
    ...                                                                   # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from kit import _env as env
from kit.regress.model import RegressError

__all__ = ["CONNECT_TIMEOUT_S", "as_completed", "connect", "execute_text", "threads"]

#: How long to keep trying a scheduler that does not answer.
CONNECT_TIMEOUT_S = 10.0

_ONE_AT_A_TIME = threading.Lock()
_PINNED: dict[str, str] = {}


def connect(scheduler: Any) -> tuple[Any, Callable[[], None]]:
    """A ``distributed.Client`` for ``scheduler`` (an address, or a client given as is) and
    how to let go of it (closing only a client made here).

    Raises:
        RegressError: Dask is not installed, or the scheduler cannot be reached.
    """
    try:
        import distributed
    except ImportError:
        raise RegressError(
            "--scheduler needs Dask: pip install 'partner-api-kit[dask]' (dask[distributed])"
        ) from None
    if isinstance(scheduler, distributed.Client):
        return scheduler, lambda: None
    try:
        client = distributed.Client(str(scheduler), timeout=f"{CONNECT_TIMEOUT_S}s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise RegressError(f"cannot reach the Dask scheduler at {scheduler!r}: {exc}") from None
    return client, client.close


def threads(client: Any) -> int:
    """The cluster's worker threads (what a summary calls its jobs)."""
    return max(1, sum(client.nthreads().values()))


def _pinned_jupyter_path() -> str:
    """A folder (once per worker process) holding a ``python3`` kernelspec pinned to this
    interpreter with ``KIT_REGRESS=1`` in the kernel's environment; first on ``JUPYTER_PATH``."""
    if "path" not in _PINNED:
        from kit.regress.worker import pinned_kernelspec

        folder = Path(tempfile.mkdtemp(prefix="kit-regress-kernel-")) / "jupyter"
        pinned_kernelspec(folder)
        spec_file = folder / "kernels" / "python3" / "kernel.json"
        spec = json.loads(spec_file.read_text(encoding="utf-8"))
        spec["env"] = {env.REGRESS: "1"}
        spec_file.write_text(json.dumps(spec, indent=1), encoding="utf-8")
        before = os.environ.get("JUPYTER_PATH")
        os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(folder), before]))
        _PINNED["path"] = str(folder)
    return _PINNED["path"]


def execute_text(
    name: str, source: str, parameters: Mapping[str, Any], cell_timeout: float
) -> tuple[dict[str, Any], str | None]:
    """Run one notebook given as text on this (worker) process; its outcome and executed text.

    The outcome is :func:`kit.regress.worker.execute`'s; the text is ``None`` when papermill
    wrote no notebook.

    Raises:
        Nothing: every failure is in the outcome.
    """
    from kit.regress.worker import execute

    with _ONE_AT_A_TIME, tempfile.TemporaryDirectory(prefix="kit-regress-") as tmp:
        _pinned_jupyter_path()
        folder = Path(tmp)
        src, out = folder / name, folder / f"executed-{name}"
        src.write_text(source, encoding="utf-8")
        ipc = folder / "ipc"
        ipc.mkdir()
        outcome = execute(str(src), str(out), str(folder), dict(parameters), cell_timeout, str(ipc))
        text = out.read_text(encoding="utf-8") if out.is_file() else None
    return outcome, text


def as_completed(client: Any, futures: Sequence[Any]) -> Iterator[Any]:
    """``distributed.as_completed`` over ``futures`` (imported here, with Dask)."""
    import distributed

    yield from distributed.as_completed(list(futures), loop=client.loop)
