"""Where a population's shards run: worker processes of this machine, or a Dask cluster.

:func:`run_shards` sends every :class:`~kit.lab.shard.ShardSpec` to :func:`kit.lab.shard.run_shard`
and returns the results in shard order, advancing a progress callback as customers finish.

- **Local processes** (the default; nothing to install or start): a pool of ``workers``
  processes started from a fork server (each worker imports the kit once, before it is forked)
  and kept for the next run — its simulators too; :func:`shutdown` ends it (it also ends with
  the interpreter). Workers report customers done every batch.
- **Dask**: ``cluster`` is a ``distributed.Client`` or a scheduler address; each shard is one
  task (``pure=False``), so shards spread over the cluster's workers. Progress moves a shard at
  a time. Needs ``dask[distributed]`` (``pip install 'partner-api-kit[dask]'``), imported only
  then. The workers need the kit installed (the same version).

Example::

    >>> results = run_shards(specs, workers=2, advance=lambda n: None)        # doctest: +SKIP
    >>> results = run_shards(specs, cluster="tcp://10.0.0.5:8786", advance=print)  # doctest: +SKIP
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import importlib
import multiprocessing
import os
import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any

from kit.errors import KitError
from kit.lab.shard import ShardResult, ShardSpec, init_worker, run_shard

__all__ = ["default_workers", "run_shards", "shutdown"]

_POOL: dict[str, Any] = {}
_POOL_LOCK = threading.Lock()


def default_workers() -> int:
    """The cores this process may use."""
    with contextlib.suppress(AttributeError):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _context() -> multiprocessing.context.BaseContext:
    """A fork server where the platform has one (workers forked from a clean, single-threaded
    process that imported the kit once), else spawn."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["kit.lab._warm"])
        return ctx
    return multiprocessing.get_context("spawn")


def _pool(workers: int) -> tuple[concurrent.futures.ProcessPoolExecutor, Any]:
    """The kept pool of ``workers`` processes and its progress queue (a new one if the size
    changed or the last one broke)."""
    with _POOL_LOCK:
        pool = _POOL.get("pool")
        if pool is not None and (_POOL["workers"] != workers or getattr(pool, "_broken", False)):
            pool.shutdown(wait=False, cancel_futures=True)
            pool = None
        if pool is None:
            ctx = _context()
            progress = ctx.Queue()
            pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=workers, mp_context=ctx, initializer=init_worker, initargs=(progress,)
            )
            _POOL.update(pool=pool, workers=workers, progress=progress)
        return pool, _POOL["progress"]


def shutdown() -> None:
    """End the kept worker processes (and their simulators); the next run starts new ones.

    Example::

        >>> import kit.simulate
        >>> kit.simulate.shutdown()
    """
    with _POOL_LOCK:
        pool = _POOL.pop("pool", None)
        _POOL.clear()
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


atexit.register(shutdown)


def _drain(progress: Any, advance: Callable[[int], None]) -> None:
    with contextlib.suppress(queue.Empty, OSError, ValueError):
        while True:
            advance(progress.get_nowait())


def _local(specs: Sequence[ShardSpec], workers: int, advance: Callable[[int], None]) -> list[ShardResult]:
    pool, progress = _pool(workers)
    _drain(progress, lambda n: None)  # ticks a cancelled run may have left behind
    futures = [pool.submit(run_shard, spec) for spec in specs]
    try:
        pending = set(futures)
        while pending:
            _, pending = concurrent.futures.wait(pending, timeout=0.2, return_when="FIRST_COMPLETED")
            _drain(progress, advance)
        return [f.result() for f in futures]
    except concurrent.futures.process.BrokenProcessPool as exc:
        shutdown()
        raise KitError(f"a population worker process died: {exc}") from exc
    except KeyboardInterrupt:  # the workers ignore Ctrl-C: end them, and their shards, here
        for process in list(getattr(pool, "_processes", {}).values()):
            process.terminate()
        shutdown()
        raise
    except BaseException:  # a shard that raised: do not start the others
        for f in futures:
            f.cancel()
        raise


def _dask(specs: Sequence[ShardSpec], cluster: Any, advance: Callable[[int], None]) -> list[ShardResult]:
    try:
        import distributed
    except ImportError:
        raise KitError(
            "cluster= needs Dask: pip install 'partner-api-kit[dask]' (dask[distributed])"
        ) from None
    own = not isinstance(cluster, distributed.Client)
    client = distributed.Client(str(cluster), timeout="10s", set_as_default=False) if own else cluster
    try:
        client.run(importlib.import_module, "kit.lab._warm")  # every worker at once, before any shard
        futures = client.map(run_shard, list(specs), pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        for future in distributed.as_completed(futures, loop=client.loop):
            advance(specs[index[future.key]].end - specs[index[future.key]].first)
        return list(client.gather(futures))
    finally:
        if own:
            client.close()


def run_shards(
    specs: Sequence[ShardSpec],
    *,
    workers: int | None = None,
    cluster: Any = None,
    advance: Callable[[int], None],
) -> list[ShardResult]:
    """Run every shard, locally (``workers`` processes, default one per core, at most one per
    shard) or on ``cluster``; the results in shard order.

    Raises:
        KitError: a worker process died, Dask is missing, or a shard raised (its error chained).
    """
    if cluster is not None:
        return _dask(specs, cluster, advance)
    count = max(1, min(workers or default_workers(), len(specs)))
    return _local(specs, count, advance)
