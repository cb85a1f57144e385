"""``kit regress``'s kernels, forked from a warm fork server (:mod:`kit.regress.kernels`): each
notebook still gets a fresh kernel that cannot see another's, that looks like an ordinary one
(working folder, environment, path, pandas' display defaults), that dies with its launcher, and
an ordinary kernel when there is no server."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kit.regress import kernels
from kit.regress.worker import KERNEL_NAME, pinned_kernelspec
from tests.notebooks.helpers import ROOT, run_cli

pytestmark = pytest.mark.skipif(not kernels.available(), reason="kernels are forked on Linux only")
nbformat = pytest.importorskip("nbformat")

FIRST = """\
import os, sys, kit
kit._left_by_the_first = True
os.environ["LEFT_BY_THE_FIRST"] = "1"
sys.modules["left_by_the_first"] = sys
open("pids.txt", "a").write(f"{os.getpid()}\\n")
"""
SECOND = """\
import os, sys, kit
import pandas as pd
assert not hasattr(kit, "_left_by_the_first"), "module state leaked between kernels"
assert "LEFT_BY_THE_FIRST" not in os.environ and "left_by_the_first" not in sys.modules
open("pids.txt", "a").write(f"{os.getpid()}\\n")
parent = open(f"/proc/{os.getppid()}/cmdline", "rb").read().decode().replace("\\0", " ")
assert "kit.regress.kernels" in parent, parent  # forked by the server, not started afresh
assert os.getcwd() == os.path.dirname(os.path.abspath("pids.txt"))
assert os.environ["KIT_REGRESS"] == "1" and "KIT_REGRESS_KERNELS" not in os.environ
assert "" in sys.path and sys.executable
assert pd.get_option("display.max_columns") == 20, pd.get_option("display.max_columns")  # a kernel's
print("second kernel ok")
"""


def _notebook(path: Path, source: str) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


@pytest.mark.slow  # kernels forked and run: ≈6 s
def test_each_notebook_gets_a_fresh_forked_kernel(tmp_path: Path) -> None:
    folder = tmp_path / "nbs"
    folder.mkdir()
    _notebook(folder / "01_first.ipynb", FIRST)
    _notebook(folder / "02_second.ipynb", SECOND)
    code, out, err = run_cli("--notebooks", str(folder), "--out", str(tmp_path / "out"), "--jobs", "1")
    executed = json.loads((tmp_path / "out" / "02_second.ipynb").read_text(encoding="utf-8"))
    assert code == 0, out + err + json.dumps(executed["cells"][-1].get("outputs"))[:3000]
    assert "second kernel ok" in json.dumps(executed["cells"][-1]["outputs"])
    pids = (folder / "pids.txt").read_text(encoding="utf-8").split()
    assert len(pids) == 2 and pids[0] != pids[1]


def test_the_server_imports_nothing_that_looks_at_its_surroundings() -> None:
    probe = (
        "import sys, threading\n"
        "from kit.regress.kernels import _warm\n"
        "_warm()\n"
        "import pandas as pd\n"
        "print(sorted(m for m in ('tqdm', 'matplotlib', 'ipywidgets') if m in sys.modules),"
        " threading.active_count(), 'IPython' in sys.modules, pd.get_option('display.max_columns'),"
        " 'get_ipython' in dir(__builtins__))\n"
    )
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # nothing IPython-aware, no thread to fork under, the warm imports done, pandas as in a kernel
    assert proc.stdout.split() == ["[]", "1", "True", "20", "False"], proc.stdout


def _start(tmp_path: Path, environ: dict[str, str]) -> tuple[object, object]:
    from jupyter_client.manager import KernelManager

    jupyter = pinned_kernelspec(tmp_path / "jupyter", forked=True)
    os.environ["JUPYTER_PATH"] = str(jupyter)
    km = KernelManager(kernel_name=KERNEL_NAME)
    km.start_kernel(env={**os.environ, **environ})
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    return km, kc


def _pid_of(kc: object) -> int:
    seen: list[str] = []
    kc.execute_interactive(  # type: ignore[attr-defined]
        "import os; print(os.getpid())",
        timeout=30,
        output_hook=lambda m: seen.append(m["content"].get("text", "")),
    )
    return int("".join(seen).strip())


def test_a_killed_launcher_takes_its_kernel_with_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_PATH", "")
    with kernels.serving(tmp_path, {}) as named:
        km, kc = _start(tmp_path, named)
        pid = _pid_of(kc)
        assert pid != km.provisioner.pid  # type: ignore[attr-defined]  # forked, not the launcher
        ended = os.pidfd_open(pid)  # readable once the kernel has exited
        kc.stop_channels()  # type: ignore[attr-defined]
        km.shutdown_kernel(now=True)  # type: ignore[attr-defined]  # SIGKILL to the launcher's group
        try:
            assert select.select([ended], [], [], 10)[0], "the kernel outlived its launcher"
        finally:
            os.close(ended)


def test_without_the_server_an_ordinary_kernel_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_PATH", "")
    km, kc = _start(tmp_path, {kernels.SOCKET_ENV: str(tmp_path / "no-such.sock")})
    try:
        assert _pid_of(kc) == km.provisioner.pid  # type: ignore[attr-defined]  # the launcher became it
    finally:
        kc.stop_channels()  # type: ignore[attr-defined]
        km.shutdown_kernel(now=True)  # type: ignore[attr-defined]


POPULATION = """\
import os, kit.simulate
from kit.lab.populations import engine
prefix = os.environ["KIT_REGRESS_PYTHON_M"]  # set by the launcher: python -m, forked
r = kit.simulate.run(customers=3, seed=7, shards=2, workers=2, progress=False)
assert r.partial.customers == 3 and r.money_conserved and len(r.steps) > 0
server = os.getppid()  # this kernel's parent: the fork server
forked = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        continue
    if int(stat[1]) == server and int(pid) != os.getpid():
        forked.append(pid)
assert len(forked) == 2, forked  # the two workers, forked by the server too
for worker in engine._POOL["pool"].workers:
    assert worker.process.args[:-1] == __import__("json").loads(prefix), worker.process.args
print("forked workers ok")
"""


@pytest.mark.slow  # kernels forked and run: ≈5 s
def test_a_kernels_population_workers_are_forked_by_the_server(tmp_path: Path) -> None:
    folder = tmp_path / "nbs"
    folder.mkdir()
    _notebook(folder / "01_population.ipynb", POPULATION)
    code, out, err = run_cli("--notebooks", str(folder), "--out", str(tmp_path / "out"), "--jobs", "1")
    executed = json.loads((tmp_path / "out" / "01_population.ipynb").read_text(encoding="utf-8"))
    outputs = json.dumps(executed["cells"][-1].get("outputs"))
    assert code == 0, out + err + outputs[:3000]
    assert "forked workers ok" in outputs


def _launch(args: list[str], stdin: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-S", str(kernels.LAUNCHER), *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, timeout=60)


def test_python_dash_m_through_the_launcher(tmp_path: Path) -> None:
    """``--socket PATH -m MODULE``: the module forked by the server (its answer, its exit code, a
    signal it died of), or run here when there is no server."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    missing = _launch(["--socket", str(tmp_path / "no-such.sock"), "-m", "json.tool"], '{"a": 1}', env)
    assert missing.returncode == 0 and json.loads(missing.stdout) == {"a": 1}, missing.stderr
    with kernels.serving(tmp_path, {}) as named:
        sock = named[kernels.SOCKET_ENV]
        ok = _launch(["--socket", sock, "-m", "json.tool"], '{"b": 2}', env)
        assert ok.returncode == 0 and json.loads(ok.stdout) == {"b": 2}, ok.stderr
        bad = _launch(["--socket", sock, "-m", "json.tool"], "{not json", env)
        assert bad.returncode == 1 and "Expecting property name" in bad.stderr, bad.stderr
        probe = _launch(["--socket", sock, "-m", "kit.regress._probe_absent"], "", env)
        assert probe.returncode == 1 and "No module named" in probe.stderr, probe.stderr


def test_the_variable_names_are_in_step() -> None:
    from kit import _env

    launcher: dict[str, object] = {}
    exec(compile(kernels.LAUNCHER.read_text(encoding="utf-8"), str(kernels.LAUNCHER), "exec"), launcher)
    assert launcher["SOCKET_ENV"] == kernels.SOCKET_ENV
    assert launcher["PYTHON_M_ENV"] == kernels.PYTHON_M_ENV == _env.REGRESS_PYTHON_M


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _children(parent: int) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(stat[1]) == parent and stat[0] != "Z":
            found.append(int(pid))
    return found


@pytest.mark.slow  # kernels forked and run: ≈6 s
@pytest.mark.parametrize(("sig", "said"), [(signal.SIGSEGV, 'File "'), (signal.SIGKILL, "")])
def test_a_forked_worker_that_dies_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sig: signal.Signals, said: str
) -> None:
    """A population's worker forked by the server (as in a kernel of ``kit regress``) that dies
    is reported as one started here is: the signal, the last of its standard error."""
    from kit.errors import KitError
    from kit.lab.populations import engine
    from kit.lab.populations.planning import Draws
    from kit.lab.populations.shard import ShardSpec

    # enough customers that the shard is still running when the kill lands (four were done, on
    # a quick run, before a SIGKILL sent after the first reached the launcher)
    specs = [ShardSpec(index=0, first=0, end=40, draws=Draws(seed=7), batch=1)]
    killed: list[int] = []

    def advance(customers: int) -> None:  # after the first customer: kill the forked worker
        if not killed:
            launcher = engine._POOL["pool"].workers[0].pid
            (server,) = [p for p in _children(os.getpid()) if b"kit.regress.kernels" in _cmdline(p)]
            (worker,) = _children(server)  # the server's child, not the launcher's
            os.kill(worker if sig == signal.SIGSEGV else launcher, sig)  # SIGKILL cannot be passed on
            killed.append(launcher)

    with kernels.serving(tmp_path, {}) as named:
        prefix = [sys.executable, "-S", str(kernels.LAUNCHER), "--socket", named[kernels.SOCKET_ENV], "-m"]
        monkeypatch.setenv(kernels.PYTHON_M_ENV, json.dumps(prefix))
        engine.shutdown()
        with pytest.raises(KitError) as caught:
            engine.run_shards(specs, workers=1, advance=advance)
    message = str(caught.value)
    assert killed and f"pid {killed[0]}, killed by signal {sig.name}" in message, message
    assert "died running shard 0" in message and said in message, message


@pytest.mark.slow  # kernels forked and run: ≈5 s
def test_papermill_is_imported_without_the_iri_checks_it_never_needs() -> None:
    """``kit regress``'s own processes import papermill without jsonschema's eager ``iri`` checker
    (seconds of Lark parsers); notebooks still validate, and the module stays importable."""
    probe = (
        "import sys\n"
        "from kit.regress.worker import import_papermill\n"
        "import_papermill()\n"
        "import jsonschema, nbformat\n"
        "nbformat.validate(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('1')]))\n"
        "print('rfc3987_syntax' in sys.modules, 'iri' in jsonschema.FormatChecker.checkers,"
        " 'uri' in jsonschema.FormatChecker.checkers)\n"
        "import rfc3987_syntax\n"
        "print('importable')\n"
    )
    pytest.importorskip("rfc3987_syntax")
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["False", "False", "True", "importable"], proc.stdout


def test_the_kernel_manager_looks_for_the_kernels_end_often(monkeypatch: pytest.MonkeyPatch) -> None:
    """jupyter_client waits for a shut-down kernel in 100 ms steps, 5 s in all before it kills it;
    kit regress's in 10 ms steps, a second in all (a caller's shorter wait is kept)."""
    import asyncio

    from jupyter_client.manager import AsyncKernelManager

    from kit.regress import worker

    asked: list[tuple[float | None, float, bool]] = []

    async def finish(
        self: object, waittime: float | None = None, pollinterval: float = 0.1, restart: bool = False
    ) -> None:
        asked.append((waittime, pollinterval, restart))

    monkeypatch.setattr(AsyncKernelManager, "_async_finish_shutdown", finish)
    manager = worker._manager()()
    asyncio.run(manager._async_finish_shutdown(restart=True))
    asyncio.run(manager._async_finish_shutdown(0.2))
    poll = worker.SHUTDOWN_POLL_S
    assert asked == [(worker.SHUTDOWN_WAIT_S, poll, True), (0.2, poll, False)]
    assert poll < 0.1 and manager.shutdown_wait_time > worker.SHUTDOWN_WAIT_S


def test_the_kernel_manager_starts_a_kernel_that_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kit regress's own client waits for the kernel's answer (not for 200 ms of IOPub quiet):
    the kernel it hands over runs code, and its start-up messages are drained."""
    import asyncio

    from kit.regress import worker

    monkeypatch.setenv("JUPYTER_PATH", str(pinned_kernelspec(tmp_path / "jupyter")))

    async def run() -> tuple[str, object]:
        manager = worker._manager()(kernel_name=KERNEL_NAME)
        await manager.start_kernel()
        client = manager.client()
        client.start_channels()
        try:
            await client.wait_for_ready(timeout=60)
            leftover = await client.iopub_channel.msg_ready()
            msg_id = client.execute("print(6 * 7)")
            reply = await client.get_shell_msg(timeout=30)
            seen = []
            while True:
                msg = await client.get_iopub_msg(timeout=30)
                if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream":
                    seen.append(msg["content"]["text"])
                ours = msg["parent_header"].get("msg_id") == msg_id
                if ours and msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                    break
            return reply["content"]["status"] + " " + "".join(seen).strip(), leftover
        finally:
            client.stop_channels()
            await manager.shutdown_kernel()

    answer, leftover = asyncio.run(run())
    assert answer == "ok 42" and leftover is False
