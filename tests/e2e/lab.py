"""A real JupyterLab for the browser suite: loopback, a free port, a per-run random token, and
every Jupyter, IPython and matplotlib directory in a temporary folder.

The notebooks are copied into that folder first: what the browser does to them (Run All, the
kernel's metadata) never touches the repository. The token travels in the server's environment
(``JUPYTER_TOKEN``) and in the browser's ``Authorization`` header, never on a command line, in a
URL or in a file; the server's log goes to the temporary folder.

Example::

    >>> with lab_server(tmp_path) as lab:                  # doctest: +SKIP
    ...     lab.url("lab/tree/00_quickstart.ipynb")
    'http://127.0.0.1:41234/lab/tree/00_quickstart.ipynb'
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:  # Playwright is the optional .[e2e] extra; this module must import without it
    from playwright.sync_api import ViewportSize

ROOT = Path(__file__).resolve().parents[2]
#: ``make e2e`` sets ``KIT_E2E=1``; without it the browser suite's modules skip themselves.
ENABLED = os.environ.get("KIT_E2E") == "1"
SKIP_REASON = "the browser suite: run `make e2e` (it sets KIT_E2E=1)"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
START_TIMEOUT_S = 90.0
VIEWPORT: ViewportSize = {"width": 1280, "height": 900}

#: User settings a fresh JupyterLab starts with: every cell in the DOM (no windowing, so the
#: checks see the whole notebook), no autosave (a notebook that opens "unsaved" stays visible),
#: no news or update checks (the network is closed).
LAB_SETTINGS: dict[str, dict[str, object]] = {
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
}


@dataclass(frozen=True)
class Lab:
    """A running JupyterLab: its base URL, the token, the folder it serves, its log file."""

    base_url: str
    token: str
    root_dir: Path
    log: Path
    process: subprocess.Popen[bytes]

    def __repr__(self) -> str:  # the token stays out of every repr and assertion message
        return f"Lab(base_url={self.base_url!r}, root_dir={str(self.root_dir)!r})"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    def api(self, method: str, path: str) -> httpx.Response:
        """One REST call to the server (``/api/…``) with the token."""
        return httpx.request(method, self.url(path), headers=self.headers, timeout=10.0)

    def kernel_display_name(self) -> str:
        """The default kernel's ``display_name``: what JupyterLab writes into a notebook's
        ``kernelspec`` (a notebook stored with another name opens "unsaved")."""
        specs = self.api("GET", "api/kernelspecs").json()
        return str(specs["kernelspecs"][specs["default"]]["spec"]["display_name"])

    def shutdown_kernels(self) -> None:
        """Stop every running kernel (one notebook's kernel must not slow the next)."""
        for kernel in self.api("GET", "api/kernels").json():
            self.api("DELETE", f"api/kernels/{kernel['id']}")

    def log_tail(self, chars: int = 3000) -> str:
        """The end of the server's log, with the token masked."""
        text = self.log.read_text(encoding="utf-8", errors="replace")[-chars:]
        return text.replace(self.token, "<token>")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _environment(base: Path, token: str) -> dict[str, str]:
    dirs = {
        "HOME": "home",
        "JUPYTER_CONFIG_DIR": "jupyter/config",
        "JUPYTER_DATA_DIR": "jupyter/data",
        "JUPYTER_RUNTIME_DIR": "jupyter/runtime",
        "JUPYTERLAB_SETTINGS_DIR": "jupyter/lab-settings",
        "JUPYTERLAB_WORKSPACES_DIR": "jupyter/lab-workspaces",
        "IPYTHONDIR": "ipython",
        "MPLCONFIGDIR": "matplotlib",
    }
    env = {k: v for k, v in os.environ.items() if k not in {"KIT_REGRESS", "JUPYTER_TOKEN"}}
    for name, sub in dirs.items():
        (base / sub).mkdir(parents=True, exist_ok=True)
        env[name] = str(base / sub)
    env["JUPYTER_TOKEN"] = token
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _write_settings(settings_dir: Path) -> None:
    for plugin, values in LAB_SETTINGS.items():
        path = settings_dir / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")


def _command(root_dir: Path, port: int) -> list[str]:
    command = [
        sys.executable, "-m", "jupyter", "lab",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.open_browser=False",
        f"--ServerApp.root_dir={root_dir}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]  # fmt: skip
    if os.geteuid() == 0:
        command.append("--allow-root")
    return command


def _wait_until_ready(lab: Lab, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if lab.process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {lab.process.returncode}:\n{lab.log_tail()}")
        try:
            if lab.api("GET", "api/status").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    raise TimeoutError(f"JupyterLab not ready after {timeout:.0f} s:\n{lab.log_tail()}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's process group (the server and its kernels), then SIGKILL."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=5)


@contextmanager
def lab_server(base: Path, notebooks: list[Path] = NOTEBOOKS) -> Iterator[Lab]:
    """JupyterLab serving copies of ``notebooks`` from ``base/notebooks`` (see the module doc)."""
    root_dir = base / "notebooks"
    root_dir.mkdir(parents=True, exist_ok=True)
    for path in notebooks:
        shutil.copy2(path, root_dir / path.name)
    images = ROOT / "notebooks" / "images"  # the screenshots a notebook shows
    if images.is_dir():
        shutil.copytree(images, root_dir / "images", dirs_exist_ok=True)
    token = secrets.token_hex(24)
    env = _environment(base, token)
    _write_settings(Path(env["JUPYTERLAB_SETTINGS_DIR"]))
    log = base / "jupyterlab.log"
    port = free_port()
    with log.open("wb") as sink:
        # its own session: stopping the group stops the kernels too; all output to the log
        process = subprocess.Popen(
            _command(root_dir, port), env=env, start_new_session=True, stdout=sink, stderr=subprocess.STDOUT
        )
    lab = Lab(f"http://127.0.0.1:{port}", token, root_dir, log, process)
    try:
        _wait_until_ready(lab, START_TIMEOUT_S)
        yield lab
    finally:
        _stop(process)
