"""The ``kit`` command: ``kit serve`` (a standalone simulator), ``kit health`` (whether one
answers), ``kit state`` (its state file), ``kit regress`` (the notebooks as regression checks),
``kit walk`` (a scripted tour of every flow), ``kit notebooks`` and ``kit choices``. Each
command's description and examples are in :mod:`kit._clihelp` (``kit COMMAND --help``).

Secrets never come from arguments that land in shell history or ``ps``: partner credentials
and the control token are read from the environment (``KIT_SIM_PARTNERS``,
``KIT_SIM_CONTROL_TOKEN``: :data:`kit._env.SIM_PARTNERS`, :data:`kit._env.SIM_CONTROL_TOKEN`).
Each wing is imported when its command runs (``regress`` when the parser is built, for its
options; papermill only when notebooks run).

``kit serve --sandbox-fixtures PATH`` first writes a sandbox fixtures file (:mod:`kit._fixtures`)
for the simulator's own personas — their PII and the KYC answers that pass — so that the
sandbox profile can be tried end to end against ``kit serve --no-control``; it refuses to
replace an existing file unless ``--overwrite-fixtures``. Without the control plane the clock
follows the machine's, as a sandbox's does (``--clock``, register A46).
"""

from __future__ import annotations

import argparse
import os
import sys
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

from kit import _choicetool as choices_tool
from kit import _clihelp, _health, _proxy, _serveopts, register
from kit import _env as env
from kit._extras import missing, require
from kit._fixtures import FIXTURE_PERSONAS, sim_fixtures_text, write_sim_fixtures

__all__ = ["FIXTURE_PERSONAS", "build_parser", "main", "sim_fixtures_text"]
from kit.errors import MissingExtra

if TYPE_CHECKING:
    from kit._choices import Overlay

PARTNERS_ENV = env.SIM_PARTNERS
CONTROL_TOKEN_ENV = env.SIM_CONTROL_TOKEN


def _choices(path: str | None) -> Overlay | str | None:
    """The overlay of ``--choices`` (else ``KIT_SIM_CHOICES``), validated as ``kit choices check``
    validates it (its route table built); the refusal, naming entry and key, as text."""
    from kit._choices import ChoicesError

    path = path or os.environ.get(env.SIM_CHOICES) or None
    if path is None:
        return None
    try:
        return choices_tool.served(path)
    except ChoicesError as exc:
        return f"dialect file refused: {exc}"


def _serve(args: argparse.Namespace) -> int:
    require("sim", "kit serve")
    import uvicorn

    from kit.sim import Settings, create_app

    control_token = os.environ.get(CONTROL_TOKEN_ENV) or None
    if not args.no_control and args.allowed_host and control_token is None:
        print(
            f"refusing to start: with --allowed-host the control plane is reachable through it and "
            f"needs {CONTROL_TOKEN_ENV} (or pass --no-control)",
            file=sys.stderr,
        )
        return 2
    choices = _choices(args.choices)  # validated first: a refused overlay starts nothing
    if isinstance(choices, str):
        print(f"refusing to start: {choices}", file=sys.stderr)
        return 2
    tls_refused = _serveopts.refusal(args)
    if tls_refused is not None:
        print(f"refusing to start: {tls_refused}", file=sys.stderr)
        return 2
    if args.sandbox_fixtures:
        if args.fixture_personas < 1:
            print("refusing to start: --fixture-personas must be at least 1", file=sys.stderr)
            return 2
        refused = write_sim_fixtures(args.sandbox_fixtures, args.overwrite_fixtures, args.fixture_personas)
        if refused is not None:
            print(f"refusing to start: {refused}", file=sys.stderr)
            return 2
    overrides: dict[str, object] = {}
    if os.environ.get(PARTNERS_ENV):
        try:
            overrides["partners"] = env.parse_partners(os.environ[PARTNERS_ENV])
        except ValueError as exc:
            print(f"refusing to start: {exc}", file=sys.stderr)
            return 2
    if args.restore and not args.state:
        print("refusing to start: --restore needs --state FILE (the file the server keeps)", file=sys.stderr)
        return 2
    if args.state:
        overrides["state_file"] = args.state
        overrides["restore"] = args.restore
        overrides["replace"] = args.replace
    for name in ("max_concurrency", "header_timeout", "max_snapshot_bytes"):
        if getattr(args, name) is not None and getattr(args, name) <= 0:
            print(f"refusing to start: --{name.replace('_', '-')} must be positive", file=sys.stderr)
            return 2
    limits = {
        "max_concurrency": args.max_concurrency,
        "header_timeout": args.header_timeout,
        "snapshot_max_bytes": args.max_snapshot_bytes,
    }
    overrides.update({name: value for name, value in limits.items() if value is not None})
    if args.starting_balance is not None:
        try:
            overrides["starting_balance"] = Decimal(args.starting_balance)
        except InvalidOperation:
            print("refusing to start: --starting-balance must be a decimal such as 500.00", file=sys.stderr)
            return 2
    settings = Settings(
        seed=args.seed,
        strict=args.strict,
        api_version=args.api_version,
        control=not args.no_control,
        control_token=control_token,
        webhook_hosts=tuple(args.allow_webhook_host),
        host=args.host,
        allowed_hosts=tuple(args.allowed_host),
        crypto_workers=args.crypto_workers,
        wall_clock=None if args.clock is None else args.clock == "wall",
        choices=choices,
        seeded_keys=args.seeded_keys,
        **overrides,  # type: ignore[arg-type]
    )
    from kit._choices import ChoicesError
    from kit.sim.guard import StartRefused
    from kit.sim.statefile import StateFileError
    from kit.sim.table import RouteTableError

    try:
        app = create_app(settings)
    except (StateFileError, StartRefused, RouteTableError, ChoicesError) as exc:
        print(f"refusing to start: {exc}", file=sys.stderr)
        return 2
    from kit.sim.protocol import with_header_timeout

    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        **_serveopts.uvicorn_options(args),  # the access log, log level and TLS
        timeout_graceful_shutdown=2,
        http=with_header_timeout(settings.header_timeout),  # A72: a drip-fed request is closed
    )
    started = _serveopts.run_announced(config, lambda at: f"Serving on {_serveopts.scheme(args)}://{at}")
    return 0 if started else 1


def _state_snapshot(args: argparse.Namespace) -> int:
    from kit.sim.statefile import StateFileError, backup

    try:
        backup(args.file, args.out)
    except StateFileError as exc:
        print(f"no snapshot: {exc}", file=sys.stderr)
        return 2
    print(f"Snapshot written to {args.out} (owner-only): kit serve --state NEW --restore {args.out}")
    return 0


def _walk(args: argparse.Namespace) -> int:
    require("lab", "kit walk")
    from kit.lab.walk import main as walk

    return walk([])


def _version() -> str:
    """The kit's version (``kit.__version__``, which the package metadata is built from)."""
    from kit._version import __version__

    return __version__


def _copy_notebooks(args: argparse.Namespace) -> int:
    from kit.regress.discovery import copy
    from kit.regress.model import RegressError

    try:
        written = copy(args.dir)
    except RegressError as exc:
        print(f"kit notebooks copy: {exc.message}", file=sys.stderr)
        return 2
    print(f"copied {len(written)} notebooks to {args.dir}: kit regress --notebooks {args.dir}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``kit`` parser: ``serve``, ``walk`` and ``regress``, each with its ``func``.

    Example::

        >>> build_parser().parse_args(["serve", "--port", "0"]).port
        0

    Raises:
        Nothing.
    """
    parser = argparse.ArgumentParser(prog="kit", description="Partner API kit")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the simulator standalone (Ctrl-C stops it)")
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on; beyond loopback (0.0.0.0, a machine's address) it needs named "
        f"partners in {PARTNERS_ENV} and a control token or --no-control (A70)",
    )
    serve.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    serve.add_argument("--seed", type=int, default=7, help="seeds every id and key (A41)")
    serve.add_argument(
        "--seeded-keys",
        action="store_true",
        help="derive the keys from --seed even with named partners or beyond loopback: anyone who knows "
        "the seed can then decrypt the PII sent to the server and forge its webhooks (A71)",
    )
    serve.add_argument("--strict", action="store_true", help="deprecated token endpoints answer 410")
    serve.add_argument(
        "--api-version",
        default=register.value("A27")["version"],
        choices=register.value("A27")["versions"],
        help="the version serving requests that name none in svc-api-version (A27)",
    )
    serve.add_argument("--no-control", action="store_true", help="do not mount the /_sim control plane")
    serve.add_argument(
        "--clock",
        choices=("seeded", "wall"),
        help="seeded: starts at the seeded time, moved only by the control plane; wall: the "
        "machine's clock (default: seeded, or wall with --no-control; register A46)",
    )
    serve.add_argument(
        "--starting-balance",
        metavar="AMOUNT",
        help=f"balance of new accounts in USD (default {register.value('A10')['starting_balance']}, A10)",
    )
    serve.add_argument(
        "--choices",
        metavar="FILE",
        help=f"a dialect file (TOML, one [Axx] table per register entry) the "
        f"simulator answers with, e.g. data/choices/camel.toml: other paths, names, headers, codes "
        f"(start one with kit choices template; default: {env.SIM_CHOICES}, else the register's own)",
    )
    serve.add_argument(
        "--allow-webhook-host",
        action="append",
        default=[],
        metavar="HOST",
        help="deliver webhooks to this host too: on loopback, a non-loopback host; bound beyond "
        "loopback, a host that resolves to a private or loopback address (repeatable; default: none; A39)",
    )
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests whose Host is NAME, e.g. a reverse proxy's public name "
        "(repeatable; default: none; the control plane then needs a control token; A70)",
    )
    limits = register.value("A72")
    serve.add_argument(
        "--max-concurrency",
        type=int,
        metavar="N",
        help="requests answered at once; one more is 503 server-busy "
        f"(default {limits['max_concurrent_requests']}, A72)",
    )
    serve.add_argument(
        "--header-timeout",
        type=float,
        metavar="SECONDS",
        help="close a connection whose request headers take longer "
        f"(default {limits['header_timeout_seconds']}, A72)",
    )
    serve.add_argument(
        "--max-snapshot-bytes",
        type=int,
        metavar="N",
        help=f"the largest snapshot restored (default {register.value('A71')['snapshot_max_bytes']:,}, A71)",
    )
    serve.add_argument(
        "--access-log",
        action="store_true",
        help="log each request's client, method, path and status on stdout",
    )
    _serveopts.add_arguments(serve)
    serve.add_argument(
        "--sandbox-fixtures",
        metavar="PATH",
        help=f"first write a sandbox fixtures file for the simulator's personas (for {env.SANDBOX_FIXTURES}; "
        "default: none written)",
    )
    serve.add_argument(
        "--overwrite-fixtures", action="store_true", help="replace an existing --sandbox-fixtures file"
    )
    serve.add_argument(
        "--fixture-personas",
        type=int,
        default=FIXTURE_PERSONAS,
        metavar="N",
        help=f"how many personas --sandbox-fixtures publishes (default {FIXTURE_PERSONAS})",
    )
    serve.add_argument(
        "--crypto-workers",
        type=int,
        default=min(4, max(0, (os.cpu_count() or 1) - 1)),
        metavar="N",
        help="processes decrypting JWEs beside the event loop (default: one per spare core, "
        "at most 4; 0 decrypts on the loop)",
    )
    serve.add_argument(
        "--state",
        metavar="FILE",
        help="keep the whole state in this SQLite file, written before every answer (survives restarts; "
        "default: in memory, started over from the seed)",
    )
    serve.add_argument("--restore", metavar="SNAPSHOT", help="with --state: start from it (default: none)")
    serve.add_argument(
        "--replace", action="store_true", help="with --restore: replace the state FILE already holds"
    )
    defaults = " and ".join(f"{client}/{secret}" for client, secret in env.SIM_PARTNER_CLIENTS.items())
    serve.epilog = (
        f"Credentials: {PARTNERS_ENV}='id:secret,id2:secret2' (each id once; default {defaults}, on loopback "
        f"only: bound beyond it, name your own). Control token: {CONTROL_TOKEN_ENV}, A70's length at least. "
        "Keys: with named partners or off loopback, from a random secret kept with --state (else in memory); "
        "--seeded-keys takes --seed, and anyone who knows it can decrypt the PII sent to the server and "
        "forge its webhooks."
    )
    serve.set_defaults(func=_serve)

    state = commands.add_parser("state", help="a kit serve --state file")
    state_commands = state.add_subparsers(dest="state_command", required=True)
    snap = state_commands.add_parser(
        "snapshot", help="copy the state of a (running) server from its file into a new snapshot file"
    )
    snap.add_argument("file", metavar="FILE", help="the server's --state file")
    snap.add_argument("out", metavar="OUT", help="the snapshot to write (a new file, owner-only)")
    snap.set_defaults(func=_state_snapshot)

    walk = commands.add_parser("walk", help="walk through every flow on the embedded simulator")
    walk.set_defaults(func=_walk)

    notebooks = commands.add_parser("notebooks", help="the notebooks shipped with the kit")
    copy = notebooks.add_subparsers(dest="notebooks_command", required=True).add_parser(
        "copy", help="put editable copies of the kit's notebooks in DIR (kit regress --notebooks DIR)"
    )
    copy.add_argument("dir", metavar="DIR", help="the folder to copy them to (created; nothing replaced)")
    copy.set_defaults(func=_copy_notebooks)

    choices_tool.add_parser(commands)
    _health.add_parser(commands)
    _proxy.add_parser(commands)
    regress_help = "run the notebooks with papermill, in parallel, and report"
    if missing("regress"):  # kit serve works without the regress extra; kit regress names it
        # Every argument, options too (no prefix characters), is taken, so any `kit regress …`
        # comes to the message naming the extra.
        regress = commands.add_parser("regress", help=regress_help, add_help=False, prefix_chars="\0")
        regress.add_argument("args", nargs="*")
        regress.set_defaults(func=lambda _: require("regress", "kit regress"))
        return _clihelp.document(parser)
    from kit.regress.cli import add_arguments as regress_arguments  # papermill loads lazily

    regress_arguments(commands.add_parser("regress", help=regress_help))
    return _clihelp.document(parser)


def main(argv: list[str] | None = None) -> int:
    """``kit …`` (and ``python -m kit …``): run one command; its exit status.

    Example::

        >>> main(["serve", "--port", "0"])  # doctest: +SKIP

    Exit status 2 when the command's extra is not installed (the message names it).

    Raises:
        SystemExit: for ``--help`` and argparse's own usage errors.
    """
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except MissingExtra as exc:  # a part whose extra is not installed: say which, no traceback
        print(f"kit {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
