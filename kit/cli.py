"""The ``kit`` command: ``kit serve`` (a standalone simulator), ``kit regress`` (the notebooks as
regression checks) and ``kit walk`` (a scripted tour of every flow).

Secrets never come from arguments that land in shell history or ``ps``: partner credentials
and the control token are read from the environment (``KIT_SIM_PARTNERS``,
``KIT_SIM_CONTROL_TOKEN``: :data:`kit.env.SIM_PARTNERS`, :data:`kit.env.SIM_CONTROL_TOKEN`).
Each wing is imported when its command runs (``regress`` when the parser is built, for its
options; papermill only when notebooks run).

Example::

    $ kit serve --port 0 --seed 11
    $ kit walk
    $ kit regress 04 -p seed=11
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from decimal import Decimal, InvalidOperation

from kit import env

PARTNERS_ENV = env.SIM_PARTNERS
CONTROL_TOKEN_ENV = env.SIM_CONTROL_TOKEN


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from kit.sim import Settings, create_app
    from kit.sim.settings import is_loopback

    control_token = os.environ.get(CONTROL_TOKEN_ENV) or None
    if not args.no_control and not is_loopback(args.host) and control_token is None:
        print(
            f"refusing to start: the control plane on a non-loopback host needs {CONTROL_TOKEN_ENV} "
            "(or pass --no-control)",
            file=sys.stderr,
        )
        return 2
    overrides: dict[str, object] = {}
    if os.environ.get(PARTNERS_ENV):
        try:
            overrides["partners"] = env.parse_partners(os.environ[PARTNERS_ENV])
        except ValueError as exc:
            print(f"refusing to start: {exc}", file=sys.stderr)
            return 2
    if args.starting_balance is not None:
        try:
            overrides["starting_balance"] = Decimal(args.starting_balance)
        except InvalidOperation:
            print("refusing to start: --starting-balance must be a decimal such as 500.00", file=sys.stderr)
            return 2
    settings = Settings(
        seed=args.seed,
        strict=args.strict,
        control=not args.no_control,
        control_token=control_token,
        webhook_hosts=tuple(args.allow_webhook_host),
        crypto_workers=args.crypto_workers,
        **overrides,  # type: ignore[arg-type]
    )
    config = uvicorn.Config(
        create_app(settings),
        host=args.host,
        port=args.port,
        access_log=args.access_log,
        log_level="info" if args.access_log else "warning",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)

    async def serve() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if server.started:
            port = server.servers[0].sockets[0].getsockname()[1]
            host = f"[{args.host}]" if ":" in args.host else args.host
            print(f"Serving on http://{host}:{port}", flush=True)
        await task

    # uvicorn's own loop choice (uvloop when installed), which asyncio.run would not make.
    loop_factory = config.get_loop_factory()
    with contextlib.suppress(KeyboardInterrupt), asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(serve())
    return 0 if server.started else 1


def _walk(args: argparse.Namespace) -> int:
    from kit.lab.walk import main as walk

    return walk([])


def build_parser() -> argparse.ArgumentParser:
    """The ``kit`` parser: ``serve``, ``walk`` and ``regress``, each with its ``func``.

    Example::

        >>> build_parser().parse_args(["serve", "--port", "0"]).port
        0

    Raises:
        Nothing.
    """
    parser = argparse.ArgumentParser(prog="kit", description="Partner API kit")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the simulator standalone (Ctrl-C stops it)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    serve.add_argument("--seed", type=int, default=7)
    serve.add_argument("--strict", action="store_true", help="deprecated token endpoints answer 410")
    serve.add_argument("--no-control", action="store_true", help="do not mount the /_sim control plane")
    serve.add_argument("--starting-balance", help="balance of new accounts, e.g. 500.00 (USD)")
    serve.add_argument(
        "--allow-webhook-host",
        action="append",
        default=[],
        metavar="HOST",
        help="deliver webhooks to this non-loopback host too (repeatable)",
    )
    serve.add_argument("--access-log", action="store_true", help="log method, path and status")
    serve.add_argument(
        "--crypto-workers",
        type=int,
        default=min(4, max(0, (os.cpu_count() or 1) - 1)),
        metavar="N",
        help="processes decrypting JWEs beside the event loop (default: one per spare core, "
        "at most 4; 0 decrypts on the loop)",
    )
    defaults = " and ".join(f"{client}/{secret}" for client, secret in env.SIM_PARTNER_CLIENTS.items())
    serve.epilog = (
        f"Credentials: {PARTNERS_ENV}='id:secret,id2:secret2' (default {defaults}). "
        f"Control token: {CONTROL_TOKEN_ENV}."
    )
    serve.set_defaults(func=_serve)

    walk = commands.add_parser("walk", help="walk through every flow on the embedded simulator")
    walk.set_defaults(func=_walk)

    from kit.regress.cli import add_arguments as regress_arguments  # papermill loads lazily

    regress_arguments(
        commands.add_parser("regress", help="run the notebooks with papermill, in parallel, and report")
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """``kit …`` (and ``python -m kit …``): run one command; its exit status.

    Example::

        >>> main(["serve", "--port", "0"])  # doctest: +SKIP

    Raises:
        SystemExit: for ``--help`` and argparse's own usage errors.
    """
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
