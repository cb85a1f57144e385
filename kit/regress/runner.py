"""``kit regress``'s run: the notebooks in a pool of worker processes, then the reports.

Every selected notebook runs in its own kernel (:mod:`kit.regress.worker`), in a pool of
worker processes, with the same parameters, a per-cell time-out and ``KIT_REGRESS=1`` in the
kernel's environment. Each executed notebook is analysed and scanned for leaks
(:mod:`kit.regress.results`); ``junit.xml`` and ``summary.md`` are written and scanned too.

Example::

    >>> report = run(["00_quickstart"], parameters={"seed": 7}, jobs=1)  # doctest: +SKIP
    >>> report.ok                                                        # doctest: +SKIP
    True
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kit import env
from kit.regress import leaks, reports
from kit.regress.discovery import discover
from kit.regress.model import NotebookResult, RegressReport
from kit.regress.params import check_parameters
from kit.regress.results import analyse
from kit.regress.sandbox import ACCESS_TOKEN_ENV, fetch_partner_token
from kit.regress.worker import execute, init_worker, pinned_kernelspec

__all__ = ["DEFAULT_CELL_TIMEOUT", "DEFAULT_OUT", "run"]

DEFAULT_OUT = "out/regress"
DEFAULT_CELL_TIMEOUT = 120.0


def _outcome(future: concurrent.futures.Future[dict[str, Any]]) -> dict[str, Any]:
    try:
        return future.result()
    except Exception as exc:  # the worker process itself died (BrokenProcessPool…)
        error = {"ename": type(exc).__name__, "evalue": str(exc), "traceback": []}
        return {"seconds": 0.0, "error": error, "notes": [], "stderr": []}


def _mp_context() -> multiprocessing.context.BaseContext:
    """``fork`` on Linux while this process has a single thread, else ``spawn``.

    Forked workers inherit the imports (papermill is imported once, here), which saves about a
    second of CPU per worker. Forking a process that runs other threads (an embedded simulator,
    a Jupyter kernel calling :func:`run`) can deadlock: then the workers are spawned.
    """
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        import papermill  # noqa: F401  (inherited by the forked workers)

        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _default_jobs() -> int:
    with contextlib.suppress(AttributeError):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _execute_all(
    notebooks: Sequence[Path],
    folder: Path,
    out: Path,
    params: Mapping[str, Any],
    *,
    jobs: int,
    cell_timeout: float,
    show: bool,
    kernel_env: dict[str, str],
    secrets: Sequence[str],
    jupyter_path: str | None,
) -> dict[Path, NotebookResult]:
    """Run every notebook in a pool of ``jobs`` workers; one analysed result per notebook."""
    results: dict[Path, NotebookResult] = {}
    with tempfile.TemporaryDirectory(prefix="kit-regress-") as tmp:
        pinned = pinned_kernelspec(Path(tmp) / "jupyter")
        kernel_env["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(pinned), jupyter_path]))
        ipc_dir = Path(tmp) / "ipc"
        ipc_dir.mkdir()
        with concurrent.futures.ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=_mp_context(),
            initializer=init_worker,
            initargs=(kernel_env,),
        ) as pool:
            futures = {
                pool.submit(
                    execute,
                    str(path.resolve()),
                    str((out / path.name).resolve()),
                    str(folder.resolve()),
                    dict(params),
                    cell_timeout,
                    str(ipc_dir),
                ): path
                for path in notebooks
            }
            advance = reports.progress(len(notebooks), show)  # after the workers started: tqdm runs a thread
            try:
                for future in concurrent.futures.as_completed(futures):
                    path = futures[future]
                    results[path] = analyse(path, out / path.name, _outcome(future), secrets)
                    advance(results[path])
            except KeyboardInterrupt:  # Ctrl-C: do not start the notebooks still queued
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    return results


def run(
    selection: Sequence[str] = (),
    *,
    notebooks_dir: str | os.PathLike[str] = "notebooks",
    out_dir: str | os.PathLike[str] = DEFAULT_OUT,
    parameters: Mapping[str, Any] | None = None,
    jobs: int | None = None,
    cell_timeout: float = DEFAULT_CELL_TIMEOUT,
    progress: bool | None = None,
    environ: Mapping[str, str] | None = None,
) -> RegressReport:
    """Execute notebooks in parallel, scan them for leaks, write ``junit.xml`` and ``summary.md``.

    Each notebook runs in a worker process (a pool of ``jobs``, default one per core) with
    papermill and kernel ``python3`` pinned to ``sys.executable``, cwd = ``notebooks_dir``,
    ``KIT_REGRESS=1`` in the kernel's environment, ``parameters`` injected, and at most
    ``cell_timeout`` seconds per cell. ``progress`` (default: when stderr is a terminal) draws
    a bar on stderr. ``environ`` replaces ``os.environ`` for the sandbox credentials.

    Example::

        >>> report = run(["00_quickstart"], parameters={"seed": 7}, jobs=1)  # doctest: +SKIP
        >>> report.ok, report.summary_path                                     # doctest: +SKIP
        (True, PosixPath('out/regress/summary.md'))

    Raises:
        RegressError: a secret-looking parameter, no notebook selected, a missing sandbox
            variable or a refused token request — before any kernel starts.
    """
    params = dict(parameters or {})
    check_parameters(params)
    folder = Path(notebooks_dir)
    notebooks = discover(folder, selection)
    environment = os.environ if environ is None else environ
    kernel_env = {env.REGRESS: "1"}
    secrets: list[str] = []
    if params.get("profile") == "sandbox":
        token = fetch_partner_token(environment)  # once for the whole run, before any kernel starts
        kernel_env[ACCESS_TOKEN_ENV] = token
        secrets.append(token)
    jobs = max(1, min(jobs or _default_jobs(), len(notebooks)))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for path in notebooks:  # a stale copy from an earlier run must not pass for this one
        (out / path.name).unlink(missing_ok=True)
    results = _execute_all(
        notebooks,
        folder,
        out,
        params,
        jobs=jobs,
        cell_timeout=cell_timeout,
        show=sys.stderr.isatty() if progress is None else progress,
        kernel_env=kernel_env,
        secrets=secrets,
        jupyter_path=environment.get("JUPYTER_PATH"),
    )
    ordered = tuple(results[p] for p in notebooks)
    text = reports.summary(ordered, params, out, jobs, cell_timeout)
    junit_path, summary_path = out / "junit.xml", out / "summary.md"
    junit_path.write_bytes(reports.junit(ordered, params, folder))
    summary_path.write_text(text, encoding="utf-8")
    leaked = tuple(f for path in (junit_path, summary_path) for f in leaks.scan_file(path, secrets=secrets))
    return RegressReport(ordered, out, junit_path, summary_path, text, params, findings=leaked)
