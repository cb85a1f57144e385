"""``kit regress``'s run: the notebooks in a pool of worker processes, then the reports.

Every selected notebook runs in its own kernel (:mod:`kit.regress.worker`), in a pool of
worker processes, with the same parameters, a per-cell time-out and ``KIT_REGRESS=1`` in the
kernel's environment. Each executed notebook is analysed and scanned for leaks
(:mod:`kit.regress.results`), with the fingerprints of the tokens its kernel used
(:mod:`kit.regress.har`); ``junit.xml``, ``summary.md``, ``report.html`` and ``results.json``
are written and scanned too (:mod:`kit.regress.outputs`).
``har=True`` (``--har``) writes ``OUT/NN_name.har`` beside each executed notebook.

Example::

    >>> report = run(["00_quickstart"], parameters={"seed": 7}, jobs=1)  # doctest: +SKIP
    >>> report.ok                                                        # doctest: +SKIP
    True
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import logging
import multiprocessing
import os
import sys
import tempfile
import threading
import types
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kit import _env as env
from kit import _files as files
from kit._lazy import imported_past
from kit._profiles import SimProfile
from kit.regress import cluster, exercised, har, kernels, leaks, outputs, preflight, reports
from kit.regress import history as past
from kit.regress.discovery import discover, packaged
from kit.regress.matrix import Job, check_sets, longest_first
from kit.regress.matrix import jobs as plan_jobs
from kit.regress.model import NotebookResult, RegressError, RegressReport
from kit.regress.params import check_parameters
from kit.regress.reruns import combine, rerunnable
from kit.regress.results import analyse
from kit.regress.sandbox import ACCESS_TOKEN_ENV, fetch_partner_token
from kit.regress.worker import execute, init_worker, pinned_kernelspec

__all__ = ["DEFAULT_CELL_TIMEOUT", "DEFAULT_OUT", "run"]

_LOG = logging.getLogger("kit.regress")
DEFAULT_OUT = "out/regress"
DEFAULT_CELL_TIMEOUT = 120.0


def _outcome(future: concurrent.futures.Future[dict[str, Any]]) -> dict[str, Any]:
    try:
        return future.result()
    except Exception as exc:  # the worker process itself died (BrokenProcessPool…)
        error = {"ename": type(exc).__name__, "evalue": str(exc), "traceback": []}
        return {"seconds": 0.0, "error": error, "notes": [], "stderr": []}


def _caller_main_hidden() -> contextlib.AbstractContextManager[None]:
    """While worker processes start, a bare ``__main__`` stands in for the caller's.

    Every start method but ``fork`` prepares a worker by running the caller's main module again:
    a script without an ``if __name__ == "__main__":`` guard would start its work (its servers,
    its own regression run) once more in every worker, and a script on standard input is looked
    for as a file named ``<stdin>``. The workers need nothing of it: they run
    :mod:`kit.regress.worker`'s functions, imported by name.
    """
    return imported_past("__main__", stand_in=types.ModuleType("__main__"))


def _mp_context() -> multiprocessing.context.BaseContext:
    """``fork`` on Linux while this process has a single thread, else ``spawn`` (the caller's
    main module hidden while the workers start, :func:`_caller_main_hidden`).

    Forked workers inherit the imports (papermill is imported once, here), which saves about a
    second of CPU per worker. Forking a process that runs other threads (an embedded simulator,
    a Jupyter kernel calling :func:`run`) can deadlock: then the workers are spawned.
    """
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        import papermill  # noqa: F401  (inherited by the forked workers; the fork server started first)

        return multiprocessing.get_context("fork")
    # Spawned, not fork-served: a fork server would keep the environment of its start, and a
    # later run's settings (PARTNER_API_*) would never reach its workers.
    return multiprocessing.get_context("spawn")


def _default_jobs() -> int:
    with contextlib.suppress(AttributeError):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _local(
    run: Sequence[Job],
    folder: Path,
    *,
    jobs: int,
    cell_timeout: float,
    kernel_env: dict[str, str],
    jupyter_path: str | None,
    started: Callable[[], None],
    done: Callable[[Job, dict[str, Any]], None],
) -> None:
    """Every job in a pool of ``jobs`` worker processes; ``started()`` once they are queued,
    ``done(job, outcome)`` as each ends. papermill writes each executed notebook in this run's
    private folder; it takes its name in OUT when it ends (:func:`_place`)."""
    with tempfile.TemporaryDirectory(prefix="kit-regress-") as tmp:
        forked = kernels.available()  # kernels forked from a warm server (kit.regress.kernels)
        pinned = pinned_kernelspec(Path(tmp) / "jupyter", forked=forked)
        kernel_env["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(pinned), jupyter_path]))
        ipc_dir = Path(tmp) / "ipc"
        ipc_dir.mkdir()
        wire_dir = Path(tmp) / "wire"  # each kernel's wire and token fingerprints (kit.regress.har)
        wire_dir.mkdir()
        (Path(tmp) / "executed").mkdir()
        executed = {job: Path(tmp) / "executed" / f"{i}-{job.output.name}" for i, job in enumerate(run)}
        server: contextlib.AbstractContextManager[dict[str, str]] = (
            kernels.serving(Path(tmp), kernel_env) if forked else contextlib.nullcontext({})
        )
        with (
            server as named,
            concurrent.futures.ProcessPoolExecutor(
                max_workers=jobs,
                mp_context=_mp_context(),
                initializer=init_worker,
                initargs=({**kernel_env, **named},),
            ) as pool,
        ):
            with _caller_main_hidden():  # the workers start as the jobs are submitted
                futures = {
                    pool.submit(
                        execute,
                        str(job.source.resolve()),
                        str(executed[job]),
                        str(folder.resolve()),
                        dict(job.params),
                        cell_timeout,
                        str(ipc_dir),
                        har.prefix(wire_dir, job.output),
                    ): job
                    for job in run
                }
            started()  # after the workers started: a progress bar runs a thread (see _mp_context)
            try:
                for future in concurrent.futures.as_completed(futures):
                    job = futures[future]
                    _place(executed[job], job.output)
                    done(job, _outcome(future))
            except KeyboardInterrupt:  # Ctrl-C: do not start the notebooks still queued
                pool.shutdown(wait=False, cancel_futures=True)
                raise


def _place(executed: Path, output: Path) -> None:
    """The executed notebook written in the run's private folder, as ``output`` (never through
    a link left there: :mod:`kit._files`); nothing when papermill wrote none."""
    try:
        data = executed.read_bytes()
    except FileNotFoundError:
        return
    files.write(output, data)


def _on_cluster(
    run: Sequence[Job],
    client: Any,
    *,
    cell_timeout: float,
    started: Callable[[], None],
    done: Callable[[Job, dict[str, Any]], None],
) -> None:
    """Every job as a Dask task (:mod:`kit.regress.cluster`); the executed text written here."""
    futures = {
        client.submit(
            cluster.execute_text,
            job.source.name,
            job.source.read_text(encoding="utf-8"),
            dict(job.params),
            cell_timeout,
            pure=False,
        ): job
        for job in run
    }
    started()
    try:
        for future in cluster.as_completed(client, list(futures)):
            job = futures[future]
            try:
                outcome, text = future.result()
            except Exception as exc:  # the worker died or the task could not run
                error = {"ename": type(exc).__name__, "evalue": str(exc), "traceback": []}
                outcome, text = {"seconds": 0.0, "error": error, "notes": [], "stderr": []}, None
            if text is not None:
                files.write(job.output, text)
            done(job, outcome)
    except KeyboardInterrupt:
        client.cancel(list(futures))
        raise


def run(
    selection: Sequence[str] = (),
    *,
    notebooks_dir: str | os.PathLike[str] | None = None,
    out_dir: str | os.PathLike[str] = DEFAULT_OUT,
    parameters: Mapping[str, Any] | None = None,
    jobs: int | None = None,
    cell_timeout: float = DEFAULT_CELL_TIMEOUT,
    progress: bool | None = None,
    environ: Mapping[str, str] | None = None,
    matrix: Mapping[str, Mapping[str, Any]] | None = None,
    scheduler: Any = None,
    allow_drift: bool = False,
    write_har: bool = False,
    strict_choices: bool = False,
    expect_choices: str | os.PathLike[str] | None = None,
    reruns: int = 0,
    history: str | os.PathLike[str] | None = None,
    baseline: str | os.PathLike[str] | None = None,
) -> RegressReport:
    """Execute notebooks in parallel, scan them for leaks, write ``junit.xml``, ``summary.md``
    and ``report.html``.

    Each notebook runs in a worker process (a pool of ``jobs``, default one per core) with
    papermill and kernel ``python3`` pinned to ``sys.executable``, cwd = ``notebooks_dir`` (default:
    the notebooks shipped with the kit, :func:`kit.regress.discovery.packaged`),
    ``KIT_REGRESS=1`` in the kernel's environment, ``parameters`` injected, and at most
    ``cell_timeout`` seconds per cell. ``progress`` (default: when stderr is a terminal) draws
    a bar on stderr. ``environ`` replaces ``os.environ`` for the sandbox credentials and the files
    of mutual TLS (``PARTNER_API_CLIENT_CERT``…: checked, then named to the kernels).

    ``matrix`` (set name → parameters, :func:`kit.regress.matrix.load_matrix`) runs every
    notebook once per set, into ``out_dir/SET/``, one result and one JUnit testcase per pair.
    ``scheduler`` (a Dask scheduler address or a ``distributed.Client``) runs each pair as a
    task on the cluster's workers (:mod:`kit.regress.cluster`) instead of the local pool.

    Each kernel's notebook companion records its clients' wire and writes the fingerprints of
    the tokens they used: the leak scan finds those tokens in any format. ``write_har``
    (``--har``) writes ``OUT/NN_name.har`` beside each executed notebook (every call of every
    client the notebook made through the companion, and the deliveries its receivers got) and
    scans it like the notebook.

    The kernels' named checks and contract drift are counted per notebook; a run with drift
    exits :data:`~kit.regress.model.EXIT_DRIFT` unless ``allow_drift``; a difference from the
    simulator's choices (a choice check that differs, a contract row on a register entry) fails
    the run only with ``strict_choices``. ``expect_choices`` names a choice overlay
    (:mod:`kit._choices`) the kernels' choice checks expect (``KIT_EXPECT_CHOICES``). With
    ``PARTNER_API_SANDBOX_FIXTURES`` set, the fixtures file is checked before any kernel
    starts, handed to the kernels, and each of its values is a leak wherever it appears.

    ``reruns`` (``--reruns N``) runs a failed notebook again, up to N times, in a fresh kernel
    (:mod:`kit.regress.reruns`: flaky on a sandbox, not deterministic on ``sim``; never after a
    leak). ``history`` keeps the run's ``results.json`` in a folder and compares the run with
    the previous one kept there, ``baseline`` (an OUT folder) with that run instead
    (:mod:`kit.regress.history`). ``OUT/results.json``: :mod:`kit.regress.record`.

    Example::

        >>> report = run(["00_quickstart"], parameters={"seed": 7}, jobs=1)  # doctest: +SKIP
        >>> report.ok, report.summary_path                                     # doctest: +SKIP
        (True, PosixPath('out/regress/summary.md'))
        >>> run(["00", "05"], matrix={"a": {"seed": 7}, "b": {"seed": 11}},
        ...     scheduler="tcp://127.0.0.1:8786").results[1].notebook       # doctest: +SKIP
        '00_quickstart.ipynb[b]'

    Raises:
        RegressError: a secret-looking parameter (in ``parameters`` or a set), no notebook
            selected, a missing sandbox variable, a refused token request, a sandbox run on a
            cluster, ``write_har`` on a cluster, an unusable fixtures file, choice overlay or TLS file, an
            unreadable ``baseline``, negative ``reruns``, or an unreachable scheduler — before
            any kernel starts.
    """
    started_at = datetime.now(UTC)
    if reruns < 0:
        raise RegressError("--reruns must be 0 or more")
    before = past.previous(history, baseline)
    params = dict(parameters or {})
    check_parameters(params)
    sets = {name: dict(values) for name, values in (matrix or {}).items()}
    check_sets(sets)
    folder = packaged() if notebooks_dir is None else Path(notebooks_dir)
    notebooks = discover(folder, selection)
    out = Path(out_dir)
    pending = plan_jobs(notebooks, out, params, sets)
    if _LOG.isEnabledFor(logging.INFO):
        _LOG.info("%d notebook run(s) from %s into %s, reruns %d", len(pending), folder, out, reruns)
    environment = os.environ if environ is None else environ
    kernel_env = {env.REGRESS: "1"}
    if expect_choices is not None:
        # the checks expect the file, and the kernels' clients speak it (a dialect: kit._dialect)
        expected = preflight.expected_choices(expect_choices)
        kernel_env[env.EXPECT_CHOICES] = kernel_env[env.PARTNER_CHOICES] = expected
    secrets: list[Any] = preflight.fixture_values(environment, kernel_env)
    kernel_env.update(preflight.tls_files(environment))  # a sandbox's mutual TLS, its files checked
    if env.CLIENT_KEY_PASSPHRASE in kernel_env:
        secrets.append(kernel_env[env.CLIENT_KEY_PASSPHRASE])
    if expect_choices is not None:  # a token under the dialect's name of a secret field is a leak too
        secrets.append(preflight.secret_names(kernel_env[env.PARTNER_CHOICES]))
    if write_har and scheduler is not None:
        raise RegressError("--har writes the wire of kernels on this machine: drop --scheduler for --har")
    kept = [p for p in preflight.profiles(pending) if not p.secrets_may_leave]
    if kept:
        if scheduler is not None:
            raise RegressError(
                f"a {kept[0].name} run stays on this machine: the partner token would have to travel to "
                f"the cluster's workers. Drop --scheduler for profile={kept[0].name}"
            )
        # once for the whole run, before any kernel starts (as the dialect file says: A01)
        spoken = kernel_env.get(env.PARTNER_CHOICES) or environment.get(env.PARTNER_CHOICES)
        token = fetch_partner_token(environment, choices=spoken)
        kernel_env[ACCESS_TOKEN_ENV] = token
        secrets.append(token)
    client, release = cluster.connect(scheduler) if scheduler is not None else (None, lambda: None)
    try:
        local_jobs = max(1, min(jobs or _default_jobs(), len(pending)))
        jobs = cluster.threads(client) if client is not None else local_jobs
        queue = longest_first(pending, out / "junit.xml")  # results are reported in `pending` order
        for job in pending:  # a stale copy from an earlier run must not pass for this one
            job.output.parent.mkdir(parents=True, exist_ok=True)
            job.output.unlink(missing_ok=True)
            job.output.with_suffix(".har").unlink(missing_ok=True)
        results: dict[Job, NotebookResult] = {}
        bar: list[Callable[[NotebookResult], None]] = []
        current: list[Job] = []

        def started() -> None:
            shown = sys.stderr.isatty() if progress is None else progress
            bar[:] = [reports.progress(len(current), shown)]

        used: list[leaks.Fingerprints] = []  # every kernel's tokens, for the reports' scan
        other = any(not p.knows_choices for p in preflight.profiles(pending))
        traffic: dict[Job, list[exercised.Call]] = {}  # what each notebook's wire showed (a rerun's last)

        def done(job: Job, outcome: dict[str, Any]) -> None:
            prints = har.fingerprints(outcome)
            used.extend(prints)
            known: list[Any] = [*secrets, *prints]  # literal values and fingerprints alike
            result = analyse(job.source, job.output, outcome, known)
            written = har.write(job.output, outcome) if write_har else None
            if written is not None:
                result = har.attach(result, written, known)
            results[job] = dataclasses.replace(result, notebook=job.label)
            if other:
                traffic[job] = exercised.calls(har.exchanges(outcome), job.label)
            bar[0](results[job])

        def execute_round(queue: Sequence[Job]) -> None:
            current[:] = queue
            if client is not None:
                _on_cluster(queue, client, cell_timeout=cell_timeout, started=started, done=done)
            else:
                _local(
                    queue,
                    folder,
                    jobs=jobs,
                    cell_timeout=cell_timeout,
                    kernel_env=kernel_env,
                    jupyter_path=environment.get("JUPYTER_PATH"),
                    started=started,
                    done=done,
                )

        execute_round(queue)
        failed: dict[Job, list[NotebookResult]] = {}
        for _ in range(reruns):
            again = [job for job in queue if rerunnable(results[job])]
            if not again:
                break
            for job in again:  # the executed notebook is the last attempt's
                failed.setdefault(job, []).append(results[job])
                job.output.unlink(missing_ok=True)
            execute_round(again)
        for job, earlier in failed.items():
            deterministic = issubclass(preflight.profiles([job])[0], SimProfile)
            results[job] = combine(earlier, results[job], deterministic=deterministic)
    finally:
        release()
    run_info = outputs.Run(
        out,
        folder,
        params,
        sets,
        jobs,
        cell_timeout,
        started_at,
        allow_drift=allow_drift,
        strict_choices=strict_choices,
        reruns=reruns,
        history=None if history is None else Path(history),
        before=before,
        compare=history is not None or baseline is not None,
        servers=preflight.servers(pending, environment),
    )
    return outputs.finish(
        tuple(results[job] for job in pending),
        run_info,
        secrets=[*secrets, *used],
        other=other,
        expected=kernel_env.get(env.EXPECT_CHOICES),
        calls=[c for job in pending for c in traffic.get(job, ())],
    )
