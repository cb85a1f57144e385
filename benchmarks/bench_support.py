"""What the benchmarks share: the machine's description, a lean load generator, medians.
``kit serve`` runs in a subprocess through the one launcher, :func:`tests.support.launcher.serve_process`.

Not a benchmark itself. Every loop here is bounded both in count and in time, and every
server is on loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kit._env import SIM_PARTNER_CLIENTS

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
#: The simulator's default partner client (``sim-partner``).
CLIENT_ID, CLIENT_SECRET = next(iter(SIM_PARTNER_CLIENTS.items()))


def bytecode() -> None:
    """Write the package's ``.pyc`` files, as an installed package has them.

    A fresh-interpreter figure (connect, the notebook suite) otherwise depends on the caller's
    environment: under ``PYTHONDONTWRITEBYTECODE`` (set on CI machines and in some shells) an
    editable install never writes them, so every round compiled ~30 changed modules again
    (~40 ms of a connect). ``compileall`` skips files whose ``.pyc`` is current.
    """
    import compileall

    compileall.compile_dir(ROOT / "kit", quiet=1)


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def comparison(
    name: str,
    kit: float,
    reference: float,
    *,
    units: tuple[str, str],
    rounds: int,
    details: dict[str, Any],
    target: str = "none set",
    digits: int = 1,
) -> dict[str, Any]:
    """A benchmark's record: both sides (rounded to ``digits``), their ratio, and the target on
    the ratio (``"<= 1.1"``, ``">= 0.6"`` or ``"none set"``) with whether it was met."""
    ratio = kit / reference
    bound = float(target[2:]) if target[:2] in ("<=", ">=") else None
    met = None if bound is None else ratio <= bound if target.startswith("<=") else ratio >= bound
    return {
        "name": name,
        "kit": round(kit, digits),
        "kit_unit": units[0],
        "reference": round(reference, digits),
        "reference_unit": units[1],
        "ratio": round(ratio, 3),
        "target": target,
        "met": met,
        "rounds": rounds,
        "details": details,
    }


def machine() -> dict[str, Any]:
    """The machine a record was measured on (no host name, no user)."""
    import importlib.metadata as md

    versions = {}
    for dist in (
        "partner-api-kit",
        "httpx",
        "joserfc",
        "cryptography",
        "fastapi",
        "starlette",
        "uvicorn",
        "uvloop",
        "httptools",
        "pydantic",
        "papermill",
        "pandas",
    ):
        with contextlib.suppress(md.PackageNotFoundError):
            versions[dist] = md.version(dist)
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "load_avg_1m_at_start": round(os.getloadavg()[0], 2),
        "versions": versions,
    }


def wait_http(url: str, *, timeout: float = 60.0, ok: Callable[[int], bool] = lambda s: s < 500) -> None:
    """Wait until ``url`` answers (any status ``ok`` accepts), bounded by ``timeout``."""
    import httpx

    deadline = time.monotonic() + timeout
    while True:
        try:
            if ok(httpx.get(url, timeout=2.0).status_code):
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not answer within {timeout:.0f} s")
        time.sleep(0.2)


def partner_token(base_url: str) -> str:
    """A partner token of the default partner client (the kit's one token exchange)."""
    from kit._auth import fetch_token
    from kit._sensitive import Sensitive

    return fetch_token(base_url, CLIENT_ID, Sensitive(CLIENT_SECRET)).access_token.reveal()


# --- a lean HTTP/1.1 keep-alive load generator -------------------------------------------------


class RawConnection:
    """One keep-alive HTTP/1.1 connection: a few microseconds of Python per request, so the
    load generator takes as little of the 2 cores as it can from the server under test."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()

    async def request(self, raw: bytes) -> tuple[int, bytes]:
        assert self.reader is not None and self.writer is not None
        self.writer.write(raw)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        lower = head.lower()
        at = lower.find(b"\r\ncontent-length:")
        if at >= 0:
            end = lower.find(b"\r\n", at + 2)
            length = int(lower[at + 17 : end])
        elif b"transfer-encoding: chunked" in lower:
            body = bytearray()
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).strip(), 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    return status, bytes(body)
                body += chunk[:-2]
        body = await self.reader.readexactly(length) if length else b""
        return status, body


def raw_request(
    method: str, host: str, port: int, path: str, headers: dict[str, str], body: bytes = b""
) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if body or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop

        return uvloop.new_event_loop()
    except ImportError:  # pragma: no cover - the sim extra brings uvloop, but on Windows
        return asyncio.new_event_loop()


async def hammer(
    host: str,
    port: int,
    request: bytes,
    *,
    connections: int,
    seconds: float,
    max_requests: int,
    expect: int = 200,
) -> dict[str, Any]:
    """Send ``request`` on ``connections`` keep-alive connections until ``seconds`` pass or
    ``max_requests`` are done; requests per second and the status mix."""
    conns = [RawConnection(host, port) for _ in range(connections)]
    await asyncio.gather(*(c.open() for c in conns))
    statuses: dict[int, int] = {}
    done = 0
    deadline = time.perf_counter() + seconds

    async def worker(c: RawConnection) -> None:
        nonlocal done
        while done < max_requests and time.perf_counter() < deadline:
            done += 1
            status, _ = await c.request(request)
            statuses[status] = statuses.get(status, 0) + 1

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(c) for c in conns))
    elapsed = time.perf_counter() - t0
    for c in conns:
        c.close()
    good = statuses.get(expect, 0)
    return {
        "rps": good / elapsed,
        "requests": sum(statuses.values()),
        "seconds": round(elapsed, 2),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
    }
