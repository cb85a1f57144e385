"""Run ``kit serve`` in a subprocess, as users do, and hand back its base URL."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 30.0


def _first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    box: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        box.append(proc.stdout.readline())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    return box[0] if box else ""


@contextmanager
def kit_serve(*args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``python -m kit serve --host 127.0.0.1 --port 0 --seed 7 *args``; yields the base URL."""
    with kit_serve_process(*args, env=env) as (url, _):
        yield url


@contextmanager
def kit_serve_process(
    *args: str, env: dict[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """As :func:`kit_serve`, with the server's process too."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "kit", "serve", "--host", "127.0.0.1", "--port", "0", "--seed", "7", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )
    try:
        line = _first_line(proc, START_TIMEOUT_S)
        match = re.fullmatch(r"Serving on (http://127\.0\.0\.1:\d+)\s*", line)
        if match is None:
            proc.kill()
            _, err = proc.communicate(timeout=5)
            raise RuntimeError(f"kit serve printed {line!r} first; stderr: {err[-800:]}")
        yield match.group(1), proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
