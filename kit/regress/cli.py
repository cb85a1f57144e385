"""``kit regress`` on the command line: the options, the command, ``python -m kit.regress``.

Exit status (:mod:`kit.regress.model`): 0 when every notebook passed and nothing leaked, 1 when
a notebook failed or leaked, 2 for a usage error (a refused parameter, a missing variable, no
notebook selected, an unusable fixtures file), 3 when an answer differed from the contract
(``data/openapi.json``) departed from what the spec states — unless ``--allow-drift``, which
only reports it; ``--reruns N`` makes a notebook that passes on a rerun flaky (0), not a failure,
except on ``sim``. A difference from the simulator's choices (a register entry) is reported
apart and fails the run (1) only with ``--strict-choices``; ``--choices FILE`` makes the run's
choice checks expect an overlay's values. On a profile other than ``sim`` the run writes
``OUT/conformance.md`` and ``.json`` (:mod:`kit.regress.conformance`); ``--write-choices FILE``
writes what differed as a choice overlay.

Example::

    $ kit regress                          # every notebook, one job per core
    $ kit regress 04 '0[5-7]_*' -p seed=11 --jobs 2 --cell-timeout 60
    $ kit regress --matrix ci/matrix.toml  # every notebook × every [sets.NAME] of the file
    $ kit regress --matrix m.toml --scheduler tcp://10.0.0.5:8786   # on a Dask cluster
    $ kit regress 00 07 --har              # also OUT/00_quickstart.har, OUT/07_p2p.har
    $ kit regress -p profile=sandbox --write-choices theirs.toml   # then: kit serve --choices theirs.toml
    $ kit regress -p profile=sandbox --reruns 2 --history history  # a scheduled run (docs/scheduling.md)
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Iterator

from kit import _env as env
from kit import _plural
from kit._extras import require
from kit.errors import MissingExtra
from kit.regress import conformance, history
from kit.regress.discovery import DEFAULT_PATTERN, packaged
from kit.regress.matrix import load_matrix
from kit.regress.model import EXIT_USAGE, RegressError, RegressReport
from kit.regress.params import parse_parameters
from kit.regress.runner import DEFAULT_CELL_TIMEOUT, DEFAULT_OUT, run
from kit.regress.sandbox import ACCESS_TOKEN_ENV, SANDBOX_ENV, tls_environ

__all__ = ["add_arguments", "build_parser", "command", "main"]


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``kit regress``'s options to ``parser`` (a sub-parser of ``kit``) and set ``func``.

    Example::

        >>> sub = argparse.ArgumentParser(prog="kit").add_subparsers().add_parser("regress")
        >>> args = add_arguments(sub).parse_args(["04", "-p", "seed=7"])
        >>> args.selection, args.parameters, args.func is command
        (['04'], ['seed=7'], True)

    Raises:
        Nothing.
    """
    parser.description = parser.description or (
        "Run the notebooks with papermill in parallel, scan them for leaks, and write the executed "
        "notebooks, junit.xml and summary.md."
    )
    parser.add_argument(
        "selection",
        nargs="*",
        metavar="NOTEBOOK",
        help=f"names, prefixes or globs in the notebooks folder (default: every {DEFAULT_PATTERN})",
    )
    parser.add_argument(
        "-p",
        "--parameter",
        dest="parameters",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a papermill parameter for every notebook (7, 0.5, true, none, JSON, else a string); "
        "never a secret: keys containing secret, token, password or key are refused (repeatable; default: "
        "none, each notebook's own)",
    )
    parser.add_argument(
        "-r",
        "--raw-parameter",
        dest="raw_parameters",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="like -p but the value stays a string (amounts: -r amount=20.00; default: none)",
    )
    parser.add_argument(
        "-j", "--jobs", type=int, default=None, help="notebooks at once (default: one per core)"
    )
    parser.add_argument(
        "--cell-timeout",
        type=float,
        default=DEFAULT_CELL_TIMEOUT,
        metavar="SECONDS",
        help=f"fail a cell that runs longer (default {DEFAULT_CELL_TIMEOUT:g})",
    )
    parser.add_argument(
        "--out", default=DEFAULT_OUT, metavar="DIR", help=f"output folder (default {DEFAULT_OUT})"
    )
    parser.add_argument(
        "--notebooks",
        metavar="DIR",
        help="notebooks folder (default: the notebooks shipped with the kit; `kit notebooks copy DIR` "
        "makes editable copies)",
    )
    parser.add_argument(
        "--matrix",
        metavar="FILE",
        help="a TOML file of [sets.NAME] parameter tables: every notebook runs once per set, into "
        "OUT/NAME/, one JUnit testcase per (notebook, set) (default: none, each notebook runs once)",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on a Dask cluster's workers (tcp://host:8786; needs dask[distributed]) instead of "
        "local processes (the default); workers with one thread each",
    )
    parser.add_argument(
        "--versions",
        metavar="FROM,TO",
        help="run the migration notebook (and every notebook declaring api_version) once per API "
        "version and write OUT/migration.md and .json: the differences on the wire, each attributed "
        "to a change of 1.2.0 or unexplained (default: none, one run)",
    )
    parser.add_argument(
        "--allow-drift",
        action="store_true",
        help="report contract drift (summary.md, junit.xml) without failing the run (exit 3)",
    )
    parser.add_argument(
        "--har",
        action="store_true",
        help="write OUT/NN_name.har (HAR 1.2, redacted) beside each executed notebook: every call of "
        "its clients and the webhook deliveries they received; scanned for leaks like the notebook",
    )
    parser.add_argument(
        "--strict-choices",
        action="store_true",
        help="fail the run (exit 1) when the server differs from a register entry (a choice check "
        "that differs, a contract difference); by default differences are only reported",
    )
    parser.add_argument(
        "--choices",
        metavar="FILE",
        help="a dialect file (TOML, one [Axx] table per register entry): choice checks expect its "
        "values instead of the simulator's (known differences stop being news; default: the register's)",
    )
    parser.add_argument(
        "--write-choices",
        metavar="FILE",
        help="write what differed from the register as a dialect file (one [Axx] table per "
        "differing entry, only the keys observed): `kit serve --choices FILE` answers like that "
        "server, `kit regress --choices FILE` expects it (default: none written)",
    )
    parser.add_argument(
        "--reruns",
        type=int,
        default=0,
        metavar="N",
        help="run a failed notebook again, up to N times, in a fresh kernel: one that then passes is "
        "reported flaky (exit 0) — on profile sim, not deterministic (a failure); a leak is never rerun "
        "(default 0: none)",
    )
    parser.add_argument(
        "--history",
        metavar="DIR",
        help=f"keep the last {history.KEEP} runs' results.json in DIR and open summary.md with what "
        "changed since the previous one (also results.json's since_last_run, JUnit properties; default: "
        "none kept)",
    )
    parser.add_argument(
        "--baseline",
        metavar="OUT",
        help="compare with the run in OUT (its results.json) (default: the last one in --history)",
    )
    parser.add_argument(
        "--client-cert",
        metavar="FILE",
        help=f"a client certificate (PEM; it may hold the key too) for a sandbox that requires mutual "
        f"TLS, given to the kernels through the environment (default: ${env.CLIENT_CERT})",
    )
    parser.add_argument(
        "--client-key",
        metavar="FILE",
        help=f"the client certificate's private key (PEM; an encrypted one's passphrase from "
        f"${env.CLIENT_KEY_PASSPHRASE}, never an option) (default: ${env.CLIENT_KEY})",
    )
    parser.add_argument(
        "--ca-bundle",
        metavar="FILE",
        help=f"CA certificates (PEM) trusted instead of the default ones, for a sandbox with a private "
        f"CA (default: ${env.CA_BUNDLE})",
    )
    parser.add_argument(
        "--log-level",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        type=str.upper,
        help="print the kit's log (the `kit` logger: token fetches, retries, drift, version "
        "mismatches) at this level on stderr (default: not printed)",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar on stderr (default: when stderr is a terminal)",
    )
    parser.epilog = (
        f"Against a sandbox (-p profile=sandbox) the partner token is fetched once with "
        f"{', '.join(SANDBOX_ENV)} and given to the kernels as {ACCESS_TOKEN_ENV}. "
        f"Test personas and KYC answers for a sandbox: {env.SANDBOX_FIXTURES} names a TOML file "
        "(kit._fixtures). "
        "Exit status: 0 all passed (flaky ones too), 1 a notebook failed or leaked (or differed, with "
        "--strict-choices), "
        "2 a usage error, 3 contract drift from the spec (unless --allow-drift)."
    )
    parser.set_defaults(func=command)
    return parser


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The ``kit regress`` parser: ``parser`` with the options added, or a new one.

    Example::

        >>> build_parser().parse_args(["--jobs", "2"]).jobs
        2

    Raises:
        Nothing.
    """
    return add_arguments(parser or argparse.ArgumentParser(prog="kit regress"))


def command(args: argparse.Namespace) -> int:
    """Run ``kit regress`` from parsed arguments; print the summary; return the exit status.

    Example::

        >>> command(build_parser().parse_args(["00"]))  # doctest: +SKIP
        0

    Raises:
        Nothing: usage errors are printed to stderr and return 2.
    """
    from kit.regress.worker import without_iri_checks

    with without_iri_checks():  # papermill, imported once the kernel fork server has started
        return _command(args)


def _command(args: argparse.Namespace) -> int:
    with _log_to_stderr(getattr(args, "log_level", None)):
        return _run_command(args)


def _run_command(args: argparse.Namespace) -> int:
    try:
        if args.jobs is not None and args.jobs < 1:
            raise RegressError("--jobs must be at least 1")
        if args.cell_timeout <= 0:
            raise RegressError("--cell-timeout must be positive")
        if args.notebooks is None:  # the kit's own notebooks: they need the lab too
            require("lab", "kit regress on the kit's notebooks")
            args.notebooks = str(packaged())
        if args.versions:
            from kit.regress.migration import run_versions

            options = (("--reruns", args.reruns), ("--history", args.history), ("--baseline", args.baseline))
            given = [option for option, value in options if value]
            if given:
                raise RegressError(f"--versions runs without {', '.join(given)}: drop it or run them apart")

            first, report = run_versions(
                [v.strip() for v in args.versions.split(",")],
                args.notebooks,
                args.out,
                parameters={
                    **parse_parameters(args.parameters),
                    **parse_parameters(args.raw_parameters, raw=True),
                },
                jobs=args.jobs,
                cell_timeout=args.cell_timeout,
                progress=args.progress,
                allow_drift=args.allow_drift,
                environ=tls_environ(args.client_cert, args.client_key, args.ca_bundle),
            )
            print(report.summary, end="")
            print(first)
            return report.exit_code
        report = run(
            args.selection,
            notebooks_dir=args.notebooks,
            out_dir=args.out,
            parameters={
                **parse_parameters(args.parameters),
                **parse_parameters(args.raw_parameters, raw=True),
            },
            jobs=args.jobs,
            cell_timeout=args.cell_timeout,
            progress=args.progress,
            matrix=load_matrix(args.matrix) if args.matrix else None,
            scheduler=args.scheduler,
            allow_drift=args.allow_drift,
            write_har=args.har,
            strict_choices=args.strict_choices,
            expect_choices=args.choices,
            reruns=args.reruns,
            history=args.history,
            baseline=args.baseline,
            environ=tls_environ(args.client_cert, args.client_key, args.ca_bundle),
        )
    except RegressError as exc:
        print(f"kit regress: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    except MissingExtra as exc:
        print(f"kit regress: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(report.summary, end="")
    if args.write_choices:
        _write_choices(report, args.write_choices, args.notebooks, args.choices)
    for finding in report.findings:
        print(f"leak in a report file: {finding}", file=sys.stderr)
    if report.drift and not report.allow_drift:
        print(f"kit regress: contract drift ({len(report.drift)}): see summary.md", file=sys.stderr)
    entries = sorted({d[0] for _, d in report.differences})
    if entries:
        verdict = "failing the run (--strict-choices)" if report.strict_choices else "reported"
        differing = _plural.counted(len(entries), "register entry", "register entries")
        print(
            f"kit regress: differs from {differing} ({', '.join(entries)}), {verdict}: see summary.md",
            file=sys.stderr,
        )
    return report.exit_code


@contextlib.contextmanager
def _log_to_stderr(level: str | None) -> Iterator[None]:
    """``--log-level``: the ``kit`` logger's records at ``level`` and above on stderr while the
    command runs (nothing when ``None``)."""
    if level is None:
        yield
        return
    logger = logging.getLogger("kit")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    saved = logger.level
    logger.addHandler(handler)
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved)


def _write_choices(report: RegressReport, path: str, notebooks: str, expected: str | None) -> None:
    """``--write-choices FILE``: the run's differences as an overlay (never after a leak)."""
    if report.findings:
        print(f"kit regress: --write-choices: {path} not written (a report holds a leak)", file=sys.stderr)
        return
    table = conformance.from_results(report.results, notebooks, expected)
    profile = str(report.parameters.get("profile", "sim"))
    entries = conformance.write_choices(table, path, source=f"profile {profile}", expected=expected)
    named = f" ({', '.join(entries)})" if entries else ""
    noun = _plural.plural(len(entries), "entry", "entries")
    print(f"kit regress: wrote {len(entries)} differing {noun}{named} to {path}")


def main(argv: list[str] | None = None) -> int:
    """``python -m kit.regress [options]``: the same as ``kit regress``.

    Example::

        >>> main(["--help"])  # doctest: +SKIP

    Raises:
        SystemExit: for ``--help`` and argparse's own usage errors.
    """
    args = build_parser().parse_args(argv)
    return command(args)
