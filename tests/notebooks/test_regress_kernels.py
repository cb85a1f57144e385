"""``kit regress``'s kernels, forked from a warm fork server (:mod:`kit.regress.kernels`): each
notebook still gets a fresh kernel that cannot see another's, that looks like an ordinary one
(working folder, environment, path, pandas' display defaults), that dies with its launcher, and
an ordinary kernel when there is no server."""

from __future__ import annotations

import json
import os
import select
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
