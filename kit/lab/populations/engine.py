"""Where a population's shards run: worker processes of this machine, or a Dask cluster.

:func:`run_shards` sends every :class:`~kit.lab.populations.shard.ShardSpec` to
:func:`kit.lab.populations.shard.run_shard` and returns the results in shard order, advancing a
progress callback as customers finish.

- **Local processes** (the default; nothing to install or start): a :class:`~kit.lab.populations.pool.Pool`
  of ``workers`` processes, each started by module name (so never re-running the caller's main
  module: scripts without a main guard, standard input, ``python -c`` and notebooks alike), kept
  for the next run — its simulators too; :func:`shutdown` ends it (it also ends with the
  interpreter). Workers report customers done every batch; one that dies is reported with its
  exit code or signal and the last of its standard error. A run against a shared server (another
  profile than ``sim``) gets a pool of its own instead, its workers given the server's settings
  in their environment (``environ``), ended with the run: nothing of it is kept.
- **Dask**: ``cluster`` is a ``distributed.Client`` or a scheduler address; each shard is one
  task (``pure=False``), so shards spread over the cluster's workers. Progress moves a shard at
  a time. Needs ``dask[distributed]`` (``pip install 'partner-api-kit[dask]'``), imported only
  then. The workers need the kit installed (the same version). Dask's own worker processes are
  Dask's: a ``LocalCluster`` made in a script needs that script's main guard; without one, a
  ``distributed.deploy.subprocess.SubprocessCluster`` (workers started as commands) or a
  cluster started elsewhere, given by address.

Example::

    >>> results = run_shards(specs, workers=2, advance=lambda n: None)        # doctest: +SKIP
    >>> results = run_shards(specs, cluster="tcp://10.0.0.5:8786", advance=print)  # doctest: +SKIP
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kit.errors import KitError
from kit.lab.populations.pool import Pool, WorkerDied
from kit.lab.populations.shard import ShardResult, ShardSpec, run_shard

__all__ = ["default_workers", "run_shards", "shutdown"]

_POOL: dict[str, Any] = {}
_POOL_LOCK = threading.Lock()


def default_workers() -> int:
    """The cores this process may use."""
    with contextlib.suppress(AttributeError):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _pool(workers: int) -> Pool:
    """The kept pool of ``workers`` processes (a new one if the size changed or a worker ended)."""
    with _POOL_LOCK:
        pool: Pool | None = _POOL.get("pool")
        if pool is not None and (len(pool.workers) != workers or not pool.alive):
            pool.close(kill=True)
            pool = None
        if pool is None:
            pool = _POOL["pool"] = Pool(workers)
        return pool


def shutdown() -> None:
    """End the kept worker processes (and their simulators); the next run starts new ones.

    Example::

        >>> import kit.simulate
        >>> kit.simulate.shutdown()
    """
    with _POOL_LOCK:
        pool = _POOL.pop("pool", None)
    if pool is not None:
        pool.close()


atexit.register(shutdown)


def _local(specs: Sequence[ShardSpec], workers: int, advance: Callable[[int], None]) -> list[ShardResult]:
    pool = _pool(workers)
    try:
        return pool.run(specs, advance)
    except (KeyboardInterrupt, WorkerDied):
        # Ctrl-C (the workers ignore it) or a worker died: end them all, with their shards; the
        # next run starts afresh. A shard's own error leaves the pool (and the others' shards).
        with _POOL_LOCK:
            if _POOL.get("pool") is pool:
                del _POOL["pool"]
        pool.close(kill=True)
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
        own_servers = all(spec.profile.own_servers for spec in specs)  # else no simulator to start
        warm = "kit.lab.populations._warm" if own_servers else "kit.lab.populations.shard"
        client.run(importlib.import_module, warm)  # every worker at once, before any shard
        futures = client.map(run_shard, list(specs), pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        for future in distributed.as_completed(futures, loop=client.loop):
            advance(specs[index[future.key]].end - specs[index[future.key]].first)
        return list(client.gather(futures))
    finally:
        if own:
            client.close()


def _once(
    specs: Sequence[ShardSpec], workers: int, environ: Mapping[str, str], advance: Callable[[int], None]
) -> list[ShardResult]:
    """A pool of this run alone, its workers given ``environ``; ended with the run."""
    pool = Pool(workers, environ)
    failed = True
    try:
        results = pool.run(specs, advance)
        failed = False
        return results
    finally:
        pool.close(kill=failed)


def run_shards(
    specs: Sequence[ShardSpec],
    *,
    workers: int | None = None,
    cluster: Any = None,
    advance: Callable[[int], None],
    environ: Mapping[str, str] | None = None,
) -> list[ShardResult]:
    """Run every shard, locally (``workers`` processes, default one per core, at most one per
    shard) or on ``cluster``; the results in shard order. ``environ``: a shared server's
    settings for local workers of this run alone (ignored on a cluster, whose workers read
    their own environment).

    Raises:
        KitError: a worker process died, Dask is missing, or a shard raised (its error chained).
    """
    if cluster is not None:
        return _dask(specs, cluster, advance)
    count = max(1, min(workers or default_workers(), len(specs)))
    if environ:
        return _once(specs, count, environ, advance)
    return _local(specs, count, advance)
