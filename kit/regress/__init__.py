"""``kit regress``: run the notebooks with papermill, in parallel, and report what broke.

Every notebook matching ``[0-9][0-9]_*.ipynb`` in ``notebooks/`` (or a selection) runs in its
own kernel, in a pool of worker processes, with the same ``-p`` parameters, a per-cell
time-out and ``KIT_REGRESS=1`` in the kernel's environment. The executed notebooks, a JUnit
XML (``junit.xml``), a readable ``summary.md``, the same as a page (``report.html``) and
``results.json`` land in the output folder; the summary is also printed. After execution every
executed notebook and every report is scanned for leaks
(:mod:`kit.regress.leaks`): a persona's PII, a secret or a JOSE string in any output fails the
run, and the finding names the file, the cell and the kind — never the value.

Secrets are never parameters: papermill writes every parameter into the output notebook (a
cell and ``metadata.papermill.parameters``), so a ``-p`` key that looks like a secret is
refused. Against a sandbox (``-p profile=sandbox``) the partner token is fetched once, before
any kernel starts, and handed to the kernels as ``PARTNER_API_ACCESS_TOKEN``
(:data:`kit._env.ACCESS_TOKEN`).

One module per job:

- :mod:`~kit.regress.params` — ``-p`` / ``-r`` values, refusing secret-looking ones;
- :mod:`~kit.regress.discovery` — which notebooks run;
- :mod:`~kit.regress.sandbox` — the one partner token of a sandbox run;
- :mod:`~kit.regress.worker` — one notebook in a worker process (papermill, pinned kernel);
- :mod:`~kit.regress.results` — an executed notebook analysed: failing cell, leaks, redaction;
- :mod:`~kit.regress.har` — what a kernel left: its wire (``--har``: ``OUT/NN_name.har``) and
  its tokens' fingerprints for the leak scan;
- :mod:`~kit.regress.reports` — ``summary.md``, the progress bar;
- :mod:`~kit.regress.htmlreport` — ``report.html``, the run as a self-contained page;
- :mod:`~kit.regress.junit` — ``junit.xml``, valid against the JUnit schema CI servers read;
- :mod:`~kit.regress.record` — ``results.json`` and :func:`load`, a run back as DataFrames;
- :mod:`~kit.regress.history` — since the last run (``--history DIR``, ``--baseline OUT``);
- :mod:`~kit.regress.reruns` — ``--reruns N``: flaky, or not deterministic on ``sim``;
- :mod:`~kit.regress.preflight` — what is checked before any kernel starts;
- :mod:`~kit.regress.outputs` — every report written, then scanned for leaks;
- :mod:`~kit.regress.runner` — the pool and :func:`run`;
- :mod:`~kit.regress.leaks` (patterns in :mod:`~kit.regress.scanner`) — the leak scanner;
- :mod:`~kit.regress.cli` — ``kit regress`` and ``python -m kit.regress``.

Example::

    $ kit regress                          # every notebook, one job per core
    $ kit regress 04 '0[5-7]_*' -p seed=11 --jobs 2 --cell-timeout 60
    $ kit regress -p profile=sandbox       # needs PARTNER_API_BASE_URL, _CLIENT_ID, _CLIENT_SECRET

    >>> from kit.regress import run
    >>> run(["00_quickstart"], jobs=1).ok  # doctest: +SKIP
    True
    >>> load("out/regress").checks.outcome.value_counts()  # doctest: +SKIP

Exit status: 0 when every notebook passed and nothing leaked, 1 otherwise, 2 for a usage
error (a refused parameter, a missing variable, no notebook selected).
"""

from __future__ import annotations

from kit._extras import require
from kit.regress.cli import add_arguments, build_parser, command, main
from kit.regress.discovery import DEFAULT_PATTERN, discover
from kit.regress.model import NotebookResult, RegressError, RegressReport
from kit.regress.params import check_parameters, parse_parameters, parse_value
from kit.regress.record import load
from kit.regress.runner import DEFAULT_CELL_TIMEOUT, DEFAULT_OUT, run
from kit.regress.sandbox import ACCESS_TOKEN_ENV, SANDBOX_ENV, fetch_partner_token

# The modules above import papermill and the kernels only when notebooks run; without the
# extra, say which to install now rather than there.
require("regress", "kit.regress")

__all__ = [
    "ACCESS_TOKEN_ENV",
    "DEFAULT_CELL_TIMEOUT",
    "DEFAULT_OUT",
    "DEFAULT_PATTERN",
    "SANDBOX_ENV",
    "NotebookResult",
    "RegressError",
    "RegressReport",
    "add_arguments",
    "build_parser",
    "check_parameters",
    "command",
    "discover",
    "fetch_partner_token",
    "load",
    "main",
    "parse_parameters",
    "parse_value",
    "run",
]
