"""``kit proxy --to URL``: a validating, recording reverse proxy between a partner's client (their
back end, the notebooks) and a sandbox.

Each request is forwarded as sent — method, path and query, headers, body streamed both ways —
but for ``Host`` (the upstream's own) and the hop-by-hop headers (RFC 9110 §7.6.1:
``Connection`` and every header it names, ``Keep-Alive``, ``Proxy-*``, ``TE``, ``Trailer``,
``Transfer-Encoding``, ``Upgrade``). Before that, the guards of a shared server, as ``kit
serve`` asks them (:class:`kit.sim.middleware.Gate`: the ``Host`` check and the concurrency
limit, A70 and A72), and uvicorn's header-read time-out (:mod:`kit.sim.protocol`). The
upstream client is the kit's (:func:`kit._http.async_http_client`). What crossed is kept and
checked by :class:`kit._proxylog.Traffic`, and written when the proxy stops.

Example::

    kit serve --choices camel.toml --port 8000 &
    kit proxy --to http://127.0.0.1:8000 --port 8080 --choices camel.toml --har run.har --out out
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from kit._proxylog import Traffic
    from kit.sim.guarded import Gate

__all__ = ["HOP_BY_HOP", "Proxy", "add_parser"]

#: Headers that describe one connection, never forwarded (RFC 9110 §7.6.1), with ``Host``.
HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"te", b"trailer", b"transfer-encoding", b"upgrade"}
)
#: Bytes of each body kept for the record and the check (the rest is streamed, not kept).
KEEP = 1 << 20


def _forwarded(raw: list[tuple[bytes, bytes]], *, request: bool) -> list[tuple[bytes, bytes]]:
    """``raw`` without the hop-by-hop headers (and, for a request, ``Host``)."""
    named = {
        token.strip().lower()
        for name, value in raw
        if name.lower() == b"connection"
        for token in value.split(b",")
    }
    out = []
    for name, value in raw:
        low = name.lower()
        if low in HOP_BY_HOP or low in named or low.startswith(b"proxy-") or (request and low == b"host"):
            continue
        out.append((low, value))
    return out


class Proxy:
    """The ASGI app: ``gate`` first, then the exchange forwarded through ``client`` and given to
    ``traffic``."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        traffic: Traffic,
        gate: Gate,
        on_stop: Callable[[], None] = lambda: None,
    ) -> None:
        self.client = client
        self.traffic = traffic
        self.gate = gate
        self.on_stop = on_stop  # at the lifespan's shutdown: uvicorn re-raises SIGTERM after it

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                while (await receive())["type"] != "lifespan.shutdown":
                    await send({"type": "lifespan.startup.complete"})
                await self.client.aclose()
                self.on_stop()
                await send({"type": "lifespan.shutdown.complete"})
            return
        refusal = self.gate.refusal(scope, scope["path"])
        if refusal is not None:
            await refusal.response()(scope, receive, send)
            return
        self.gate._in_flight += 1
        try:
            await self._forward(scope, receive, send)
        finally:
            self.gate._in_flight -= 1

    async def _forward(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        started, t0 = datetime.now(UTC), time.perf_counter()
        kept = bytearray()
        size = 0

        async def body() -> AsyncIterator[bytes]:
            nonlocal size
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                chunk = message.get("body", b"")
                size += len(chunk)
                if len(kept) < KEEP:
                    kept.extend(chunk[: KEEP - len(kept)])
                if chunk:
                    yield chunk
                if not message.get("more_body"):
                    return

        raw = list(scope["headers"])
        headers = _forwarded(raw, request=True)
        has_body = any(
            n in (b"content-length", b"transfer-encoding") for n, _ in ((n.lower(), v) for n, v in raw)
        )
        target = scope.get("raw_path") or scope["path"].encode()
        query = scope.get("query_string", b"")
        url = target.decode("latin-1") + ("?" + query.decode("latin-1") if query else "")
        request = self.client.build_request(
            scope["method"], url, headers=headers, content=body() if has_body else None
        )
        status, answer_raw, answer_kept, answer_size = None, [], bytearray(), 0
        try:
            response = await self.client.send(request, stream=True)
        except httpx.HTTPError:
            from kit.sim.problems import Problem

            problem = Problem(502, "http-error", "kit proxy could not reach the upstream server.")
            await problem.response()(scope, receive, send)
        else:
            try:
                status, answer_raw = response.status_code, list(response.headers.raw)
                await send(
                    {
                        "type": "http.response.start",
                        "status": status,
                        "headers": _forwarded(answer_raw, request=False),
                    }
                )
                async for chunk in response.aiter_raw():
                    answer_size += len(chunk)
                    if len(answer_kept) < KEEP:
                        answer_kept.extend(chunk[: KEEP - len(answer_kept)])
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            finally:
                await response.aclose()
        from kit._proxylog import Seen

        seen = Seen(
            started,
            scope["method"],
            str(request.url),
            scope["path"],
            raw,
            bytes(kept),
            size,
            status,
            answer_raw,
            bytes(answer_kept),
            answer_size,
            round((time.perf_counter() - t0) * 1000, 2),
        )
        self.traffic.record(seen)


def add_parser(commands: Any) -> None:
    """Add ``kit proxy`` to the CLI's sub-commands."""
    proxy = commands.add_parser("proxy", help="a validating, recording reverse proxy to a sandbox")
    proxy.add_argument(
        "--to", required=True, metavar="URL", help="the upstream server's base URL (required: no default)"
    )
    proxy.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    proxy.add_argument("--port", type=int, default=8080, help="the port to listen on (0: any free one)")
    proxy.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another Host name to answer, as kit serve's (repeatable; default: the bound address, "
        "and loopback names on loopback)",
    )
    proxy.add_argument(
        "--choices",
        metavar="FILE",
        default=None,
        help="the dialect file the upstream speaks (default: the simulator's own choices)",
    )
    proxy.add_argument(
        "--har",
        type=Path,
        metavar="FILE",
        default=None,
        help="write the traffic, redacted, as HAR 1.2 on stop (default: none)",
    )
    proxy.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        default=None,
        help="write drift.json and conformance.md/.json there on stop (default: none)",
    )
    proxy.add_argument(
        "--write-choices",
        type=Path,
        metavar="FILE",
        default=None,
        help="write what differed from the choices as a dialect file on stop, as kit regress does "
        "(default: none)",
    )
    proxy.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from kit._extras import require

    require("sim", "kit proxy")
    import uvicorn

    from kit import _choices as choices
    from kit._dialect import DEFAULT, Dialect
    from kit._http import async_http_client
    from kit._proxylog import Traffic
    from kit._serveopts import run_announced
    from kit.sim.guard import Guard
    from kit.sim.guarded import Gate
    from kit.sim.protocol import with_header_timeout
    from kit.sim.settings import Settings

    try:
        dialect = Dialect.of(choices.load(args.choices)) if args.choices else DEFAULT
    except (OSError, ValueError) as exc:
        print(f"refusing to start: {exc}", file=sys.stderr)
        return 2
    settings = Settings(host=args.host, allowed_hosts=tuple(args.allowed_host))
    traffic = Traffic(dialect, upstream=args.to)
    limits = httpx.Limits(max_connections=settings.max_concurrency, max_keepalive_connections=32)
    client = async_http_client(args.to, limits=limits, timeout=httpx.Timeout(60.0, connect=10.0))

    def stopped() -> None:
        written = traffic.write(
            har=args.har, out=args.out, write_choices=args.write_choices, expected=args.choices
        )
        print(f"{traffic.count} exchanges; wrote " + (", ".join(map(str, written)) or "nothing"), flush=True)

    app = Proxy(client, traffic, Gate(Guard(settings), settings.max_concurrency), stopped)
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        access_log=False,
        server_header=False,  # the upstream's Server and Date pass through, not a second of each
        date_header=False,
        timeout_graceful_shutdown=2,
        http=with_header_timeout(settings.header_timeout),  # A72: a drip-fed request is closed
    )
    started = run_announced(config, lambda at: f"Proxying on http://{at} to {args.to}")
    return 0 if started else 1
