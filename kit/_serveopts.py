"""``kit serve``'s TLS and logging options: the flags, their check before anything starts, and
what uvicorn is given.

``--ssl-certfile``/``--ssl-keyfile`` are uvicorn's own: the server answers HTTPS only (the first
line printed says ``Serving on https://…``). ``--log-level`` is uvicorn's level for its loggers
(``uvicorn.error``, ``uvicorn.access``) and the kit's own (``kit``, the simulator's warnings
among them), through uvicorn's handlers: its log and the kit's on stderr, the access log
(``--access-log``) on stdout; no other logger is touched.

Example::

    >>> from kit.cli import build_parser
    >>> args = build_parser().parse_args(["serve", "--log-level", "DEBUG"])
    >>> uvicorn_options(args)["log_level"], scheme(args)
    ('debug', 'http')
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import ssl
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uvicorn

__all__ = ["LOG_LEVELS", "add_arguments", "refusal", "run_announced", "scheme", "uvicorn_options"]

#: uvicorn's log levels (``uvicorn.config.LOG_LEVELS``), named here so that building the parser
#: imports no uvicorn (``kit regress --help`` works without the sim extra).
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


def add_arguments(serve: argparse.ArgumentParser) -> None:
    """Add ``--log-level``, ``--ssl-certfile`` and ``--ssl-keyfile`` to ``kit serve``'s parser."""
    serve.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        type=str.lower,
        help="uvicorn's log level, for its own log and the kit's, on stderr (default: warning, or "
        "info with --access-log)",
    )
    serve.add_argument(
        "--ssl-certfile",
        metavar="FILE",
        help="serve HTTPS with this PEM certificate (chain), as uvicorn does (default: plain HTTP; a "
        "reverse proxy with TLS in front is the other way, docs/team-server.md)",
    )
    serve.add_argument(
        "--ssl-keyfile",
        metavar="FILE",
        help="the certificate's PEM private key, unencrypted (default: the key inside --ssl-certfile)",
    )


def refusal(args: argparse.Namespace) -> str | None:
    """Why ``kit serve`` must not start with these TLS options (the files checked now, before
    anything is bound), or ``None``."""
    if args.ssl_keyfile and not args.ssl_certfile:
        return "--ssl-keyfile needs --ssl-certfile (else the server would answer plain HTTP)"
    if not args.ssl_certfile:
        return None
    try:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.ssl_certfile, args.ssl_keyfile)
    except ssl.SSLError as exc:
        why = exc.reason or exc
        return f"--ssl-certfile/--ssl-keyfile: not a PEM certificate and its private key ({why})"
    except OSError as exc:
        files = " or ".join(filter(None, (args.ssl_certfile, args.ssl_keyfile)))
        return f"--ssl-certfile/--ssl-keyfile: {exc.strerror or exc}: {files}"
    return None


def scheme(args: argparse.Namespace) -> str:
    """``https`` when the server answers TLS, else ``http``."""
    return "https" if args.ssl_certfile else "http"


def uvicorn_options(args: argparse.Namespace) -> dict[str, Any]:
    """``uvicorn.Config``'s keywords for the access log, the log level and TLS.

    ``X-Forwarded-For`` and ``X-Forwarded-Proto`` from a proxy uvicorn trusts (loopback, or
    ``FORWARDED_ALLOW_IPS``) are read only for the access log, the one place that shows the
    client's address or scheme: the simulator answers the same without them, and uvicorn's layer
    that reads them scans every request's headers. FIXES: "uvicorn's proxy-headers layer only
    with the access log"."""
    level = args.log_level or ("info" if args.access_log else "warning")
    return {
        "access_log": args.access_log,
        "proxy_headers": args.access_log,
        "log_level": level,
        "log_config": _log_config(level),
        "ssl_certfile": args.ssl_certfile,
        "ssl_keyfile": args.ssl_keyfile,
    }


def _log_config(level: str) -> dict[str, Any]:
    """uvicorn's own logging configuration with the ``kit`` logger beside its loggers."""
    from uvicorn.config import LOG_LEVELS as LEVELS
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    named = "%(levelprefix)s %(name)s: %(message)s"
    config["formatters"]["kit"] = {**config["formatters"]["default"], "fmt": named}
    config["handlers"]["kit"] = {**config["handlers"]["default"], "formatter": "kit"}
    config["loggers"]["kit"] = {"handlers": ["kit"], "level": LEVELS[level], "propagate": False}
    return config


def run_announced(config: uvicorn.Config, announce: Callable[[str], str]) -> bool:
    """Serve ``config`` until Ctrl-C or SIGTERM, first printing ``announce(address)`` once it
    listens (``host:port``, the port read back from its socket: ``--port 0`` picks one), on
    uvicorn's own loop (uvloop when installed, which ``asyncio.run`` would not choose).
    Whether it started: ``kit serve`` and ``kit proxy`` answer 1 when it did not."""
    import uvicorn

    server = uvicorn.Server(config)

    async def serve() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if server.started:
            port = server.servers[0].sockets[0].getsockname()[1]
            host = f"[{config.host}]" if ":" in config.host else config.host
            print(announce(f"{host}:{port}"), flush=True)
        await task

    loop_factory = config.get_loop_factory()
    with contextlib.suppress(KeyboardInterrupt), asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(serve())
    return bool(server.started)
