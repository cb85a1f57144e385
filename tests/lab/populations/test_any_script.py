"""A population from any script: ``kit.simulate.run`` from a script file without a main guard,
from standard input (``python - < job.py``), from ``python -c``, from an executed notebook and
with ``cluster=`` a real 2-worker ``LocalCluster`` (started here: made in a script, it needs
Dask's main guard) or a ``SubprocessCluster`` the guardless script makes itself — each a real
subprocess, 3 customers in 2 shards — and a worker that dies is reported with its signal and
the last of its stderr.

The caller's main module prints a marker: it must appear exactly once (a start method that
re-runs the caller's main would print it again from every worker, or fail on ``<stdin>``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kit.errors import KitError

ROOT = Path(__file__).resolve().parents[3]
MARK = "caller-main-ran"
JOB = f"""\
import json
print({MARK!r}, flush=True)
import kit.simulate
r = kit.simulate.run(customers=3, seed=7, shards=2, workers=2, progress=False, cluster=CLUSTER)
print(json.dumps({{"customers": r.partial.customers, "money": r.money_conserved, "rows": len(r.steps)}}))
"""


def _env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path}


def _job(cluster: str | None = None) -> str:
    return f"CLUSTER = {cluster!r}\n" + JOB


def _check(out: str) -> None:
    assert out.count(MARK) == 1, out
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["customers"] == 3 and figures["money"] is True and figures["rows"] > 0


def _run(args: list[str], cwd: Path, stdin: str | None = None) -> str:
    proc = subprocess.run(args, cwd=cwd, env=_env(), input=stdin, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert MARK not in proc.stderr, proc.stderr[-3000:]  # not re-run by a worker either
    return proc.stdout


@pytest.mark.slow  # a population in a fresh interpreter: ≈5 s
def test_a_script_file_without_a_main_guard(tmp_path: Path) -> None:
    (tmp_path / "job.py").write_text(_job(), encoding="utf-8")
    _check(_run([sys.executable, "job.py"], tmp_path))


def test_a_script_on_standard_input(tmp_path: Path) -> None:
    _check(_run([sys.executable, "-"], tmp_path, stdin=_job()))


@pytest.mark.slow  # a population in a fresh interpreter: ≈6 s
def test_python_dash_c(tmp_path: Path) -> None:
    _check(_run([sys.executable, "-c", _job()], tmp_path))


@pytest.mark.slow  # a kernel's start: ≈10 s
def test_an_executed_notebook(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    from kit.regress.worker import KERNEL_NAME, pinned_kernelspec

    jupyter = pinned_kernelspec(tmp_path / "jupyter")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(_job())])
    nbformat.write(notebook, tmp_path / "job.ipynb")
    runner = (
        "import nbformat, nbclient, sys; nb = nbformat.read('job.ipynb', as_version=4); "
        f"nbclient.NotebookClient(nb, kernel_name={KERNEL_NAME!r}, timeout=150).execute(); "
        "print(''.join(o.get('text', '') for o in nb.cells[0].outputs))"
    )
    env = {**_env(), "JUPYTER_PATH": str(jupyter)}
    proc = subprocess.run(
        [sys.executable, "-c", runner], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    _check(proc.stdout)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address


@pytest.mark.slow  # a cluster's start: ≈10 s
def test_a_script_on_standard_input_with_a_cluster(tmp_path: Path, scheduler: str) -> None:
    out = _run([sys.executable, "-"], tmp_path, stdin=_job(scheduler))
    _check(out)


SUBPROCESS_CLUSTER = f"""\
import json
import distributed
from distributed.deploy.subprocess import SubprocessCluster
print({MARK!r}, flush=True)
import kit.simulate
with SubprocessCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \\
        distributed.Client(cluster) as client:
    r = kit.simulate.run(customers=3, seed=7, shards=2, progress=False, cluster=client)
print(json.dumps({{"customers": r.partial.customers, "money": r.money_conserved, "rows": len(r.steps)}}))
"""


@pytest.mark.slow  # a cluster's start: ≈10 s
def test_a_script_without_a_guard_making_its_own_cluster(tmp_path: Path) -> None:
    """Dask's ``LocalCluster`` starts its workers by re-running the caller's main (Dask asks for
    a main guard); its ``SubprocessCluster`` does not, and a population runs on it."""
    pytest.importorskip("distributed.deploy.subprocess")
    _check(_run([sys.executable, "-"], tmp_path, stdin=SUBPROCESS_CLUSTER))


# SIGSEGV: faulthandler's frames (its header line may fall out of the kept tail on a deep stack)
@pytest.mark.parametrize(("sig", "said"), [(signal.SIGSEGV, 'File "'), (signal.SIGKILL, "")])
def test_a_worker_that_dies_says_why(sig: signal.Signals, said: str) -> None:
    from kit.lab.populations import engine
    from kit.lab.populations.planning import Draws
    from kit.lab.populations.shard import ShardSpec

    specs = [ShardSpec(index=0, first=0, end=4, draws=Draws(seed=7), batch=1)]
    killed: list[int] = []

    def advance(customers: int) -> None:  # after the first customer: three more to play
        if not killed:
            pid = engine._POOL["pool"].workers[0].pid
            os.kill(pid, sig)
            killed.append(pid)

    with pytest.raises(KitError) as caught:
        engine.run_shards(specs, workers=1, advance=advance)
    message = str(caught.value)
    assert killed and f"pid {killed[0]}, killed by signal {sig.name}" in message, message
    assert "died running shard 0" in message and said in message, message
    assert "pool" not in engine._POOL  # the next run starts afresh


def test_a_worker_that_ends_is_reaped_at_once() -> None:
    """A Jupyter kernel's shutdown signals the children of its process group and waits until none
    is left: a worker that ended but was never waited for (a zombie) would hold it for seconds."""
    import time

    from kit.lab.populations.pool import Pool

    pool = Pool(1)
    pid = pool.workers[0].pid
    try:
        os.kill(pid, signal.SIGTERM)  # as the kernel's shutdown does; nobody here waits for it
        deadline = time.monotonic() + 10
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not Path(f"/proc/{pid}").exists(), "the ended worker is still a zombie"
        assert pool.workers[0].process.returncode == -signal.SIGTERM
    finally:
        pool.close(kill=True)
