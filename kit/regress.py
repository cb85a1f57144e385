"""``kit regress``: run the notebooks with papermill, in parallel, and report what broke.

DESIGN §5. Every notebook matching ``[0-9][0-9]_*.ipynb`` in ``notebooks/`` (or a selection)
runs in its own kernel, in a pool of worker processes, with the same ``-p`` parameters, a
per-cell time-out and ``KIT_REGRESS=1`` in the kernel's environment. The executed notebooks,
a JUnit XML (``junit.xml``) and a readable ``summary.md`` land in the output folder; the
summary is also printed. After execution every executed notebook and both reports are
scanned for leaks (:mod:`kit.leaks`): a persona's PII, a secret or a JOSE string in any output
fails the run, and the finding names the file, the cell and the kind — never the value.

Secrets are never parameters: papermill writes every parameter into the output notebook (a
cell and ``metadata.papermill.parameters``, DESIGN §7), so a ``-p`` key that looks like a
secret is refused. Against a sandbox (``-p profile=sandbox``) the partner token is fetched
once, before any kernel starts, and handed to the kernels as ``PARTNER_API_ACCESS_TOKEN``.

Kernels are ``python3`` pinned to this interpreter (``sys.executable``), whatever other
``python3`` kernelspec the user has installed, and talk to papermill over IPC sockets (no
"running over TCP without encryption" warning on stderr).

Example::

    $ kit regress                          # every notebook, one job per core
    $ kit regress 04 '0[5-7]_*' -p seed=11 --jobs 2 --cell-timeout 60
    $ kit regress -p profile=sandbox       # needs PARTNER_API_BASE_URL, _CLIENT_ID, _CLIENT_SECRET

Exit status: 0 when every notebook passed and nothing leaked, 1 otherwise, 2 for a usage
error (a refused parameter, a missing variable, no notebook selected).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import logging
import multiprocessing
import os
import re
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kit import leaks
from kit.errors import KitError
from kit.leaks import Finding

__all__ = [
    "ACCESS_TOKEN_ENV",
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
    "main",
    "parse_parameters",
    "parse_value",
    "run",
]

DEFAULT_PATTERN = "[0-9][0-9]_*.ipynb"
DEFAULT_OUT = "out/regress"
DEFAULT_CELL_TIMEOUT = 120.0
ACCESS_TOKEN_ENV = "PARTNER_API_ACCESS_TOKEN"
SANDBOX_ENV = ("PARTNER_API_BASE_URL", "PARTNER_API_CLIENT_ID", "PARTNER_API_CLIENT_SECRET")
KERNEL_NAME = "python3"
_SECRET_WORDS = ("secret", "token", "password", "key")
_ERROR_CHARS = 240
_STDERR_LINES = 200
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# jupyter_client interrupts every kernel before shutting it down (SIGINT, then
# shutdown_request); a kernel caught inside a message handler logs this line. Not a finding.
_BENIGN_STDERR = re.compile(r"\[IPKernelApp\] ERROR \| KeyboardInterrupt caught in kernel\.?$")
_INT = re.compile(r"[-+]?\d+")
_FLOAT = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?|[-+]?(inf|nan)", re.IGNORECASE)


class RegressError(KitError):
    """A regression run cannot start: a refused parameter, a missing variable, no notebook."""

    hint = "see `kit regress --help`"


@dataclass(frozen=True)
class NotebookResult:
    """The outcome of one notebook: ``passed``, ``failed`` (a cell raised) or ``leaked``.

    ``cell`` names the failing cell as in the executed notebook (counted from 1, with its
    execution count: ``cell 5 (In [3])``); ``error`` is ``"<ErrorName>: <short message>"`` with
    any leak redacted; ``details`` the traceback and findings (for JUnit); ``findings`` the leaks
    found in the executed notebook (which is then rewritten with the values redacted);
    ``notes`` what else deserves a look (papermill warnings, kernel stderr, stderr outputs);
    ``stderr`` what the kernel wrote to its stderr, redacted.
    """

    notebook: str
    status: str
    seconds: float
    output: Path
    cell: str | None = None
    error: str | None = None
    details: str = ""
    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()
    stderr: str = ""

    @property
    def ok(self) -> bool:
        """True when the notebook ran to the end and nothing leaked."""
        return self.status == "passed"

    @property
    def message(self) -> str:
        """One line for a report: ``cell 5 (In [3]): AssertionError: …`` (empty when passed)."""
        if self.ok:
            return ""
        return f"{self.cell}: {self.error}" if self.cell else str(self.error)


@dataclass(frozen=True)
class RegressReport:
    """What a run produced: one result per notebook, the report files, leaks in the reports."""

    results: tuple[NotebookResult, ...]
    out_dir: Path
    junit: Path
    summary_path: Path
    summary: str
    parameters: Mapping[str, Any] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()

    @property
    def ok(self) -> bool:
        """True when every notebook passed and no report file holds a leak."""
        return all(r.ok for r in self.results) and not self.findings

    @property
    def failed(self) -> tuple[NotebookResult, ...]:
        """The results that did not pass."""
        return tuple(r for r in self.results if not r.ok)


# --- parameters -----------------------------------------------------------------------------


def parse_value(text: str) -> Any:
    """A ``-p`` value as papermill reads one: int, float, bool, None, JSON list/object, else str.

    Example::

        >>> [parse_value(v) for v in ("7", "0.5", "true", "None", '["a", 1]', "sim")]
        [7, 0.5, True, None, ['a', 1], 'sim']

    Raises:
        Nothing: anything that is not a literal stays a string.
    """
    stripped = text.strip()
    lowered = stripped.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null", "~"):
        return None
    if _INT.fullmatch(stripped):
        return int(stripped)
    if _FLOAT.fullmatch(stripped):
        return float(stripped)
    if stripped[:1] in ("[", "{"):
        with contextlib.suppress(ValueError):
            return json.loads(stripped)
    if len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in "\"'":
        return stripped[1:-1]  # a quoted value stays a string: -p seed='"7"'
    return text


def parse_parameters(items: Iterable[str], *, raw: bool = False) -> dict[str, Any]:
    """``["seed=7", "profile=sim"]`` → ``{"seed": 7, "profile": "sim"}`` (see :func:`parse_value`).

    Example::

        >>> parse_parameters(["seed=7", "card_type=virtual"])
        {'seed': 7, 'card_type': 'virtual'}

    With ``raw=True`` values stay strings (``-r amount=20.00`` keeps ``"20.00"``, which ``-p``
    would turn into the float 20.0 — money is never a float).

    Raises:
        RegressError: an item without ``=`` or with a key that is not a Python identifier.
    """
    params: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise RegressError(f"-p takes key=value with a Python identifier as key, not {key or item!r}")
        params[key] = text if raw else parse_value(text)
    return params


def check_parameters(parameters: Mapping[str, Any]) -> None:
    """Refuse parameters that would write a secret into the output notebooks.

    papermill records every parameter in the executed notebook (a cell and its metadata), so
    a key that looks like a secret (contains ``secret``, ``token``, ``password`` or ``key``)
    or a value that the leak scanner flags is refused.

    Example::

        >>> check_parameters({"profile": "sim", "seed": 7})
        >>> check_parameters({"client_secret": "…"})  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        kit.regress.RegressError: refusing parameter 'client_secret': its name contains 'secret'…

    Raises:
        RegressError: naming the parameter (never its value) and where secrets go instead.
    """
    for key, value in parameters.items():
        word = next((w for w in _SECRET_WORDS if w in key.lower()), None)
        if word is not None:
            raise RegressError(
                f"refusing parameter {key!r}: its name contains {word!r}, and papermill writes every "
                "parameter into the executed notebook. Secrets reach the kernels through the "
                f"environment ({', '.join(SANDBOX_ENV[1:])}, {ACCESS_TOKEN_ENV}), never as -p parameters"
            )
        found = leaks.scan_text(json.dumps(value, default=str), location=f"parameter {key!r}")
        if found:
            raise RegressError(
                f"refusing parameter {key!r}: its value looks like a {found[0].kind}, and papermill "
                "writes every parameter into the executed notebook"
            )


# --- notebooks ------------------------------------------------------------------------------


def discover(notebooks_dir: str | os.PathLike[str], selection: Sequence[str] = ()) -> list[Path]:
    """The notebooks to run, sorted: all ``[0-9][0-9]_*.ipynb``, or those a selection names.

    A selection item is a file name (``04_onboarding_kyc.ipynb``), a name without
    ``.ipynb``, a prefix (``04``) or a glob (``'0[5-7]_*'``), matched in ``notebooks_dir``.
    Files starting with ``_`` or ``.`` (the template, checkpoints) are only picked by an item
    that starts with ``_`` itself.

    Example::

        >>> [p.name for p in discover("notebooks", ["00", "01_*"])]  # doctest: +SKIP
        ['00_quickstart.ipynb', '01_partner_token.ipynb']

    Raises:
        RegressError: no such folder, or an item (or the default pattern) matches nothing.
    """
    folder = Path(notebooks_dir)
    if not folder.is_dir():
        raise RegressError(f"no notebooks folder at {str(folder)!r}; pass --notebooks DIR")
    if not selection:
        found = sorted(p for p in folder.glob(DEFAULT_PATTERN) if p.is_file())
        if not found:
            raise RegressError(f"no notebook matches {DEFAULT_PATTERN} in {str(folder)!r}")
        return found
    chosen: set[Path] = set()
    for item in selection:
        name = Path(item).name
        hidden_ok = name.startswith("_")
        candidates = [name, f"{name}.ipynb"] if not any(c in name for c in "*?[") else []
        matches = [folder / c for c in candidates if c.endswith(".ipynb") and (folder / c).is_file()]
        if not matches:
            pattern = name if any(c in name for c in "*?[") else f"{name}*"
            matches = [
                p
                for p in folder.glob(pattern)
                if p.is_file() and p.suffix == ".ipynb" and (hidden_ok or not p.name.startswith(("_", ".")))
            ]
        if not matches:
            raise RegressError(f"no notebook matches {item!r} in {str(folder)!r}")
        chosen.update(matches)
    return sorted(chosen)


def fetch_partner_token(
    environ: Mapping[str, str] | None = None,
    *,
    transport: Any = None,
    timeout: float = 10.0,
) -> str:
    """Fetch one partner access token with the client credentials of the environment.

    ``POST {PARTNER_API_BASE_URL}/oauth/accesstoken``, form ``grant_type=client_credentials``,
    HTTP Basic with ``PARTNER_API_CLIENT_ID`` / ``PARTNER_API_CLIENT_SECRET`` (DESIGN §3.1).
    ``transport`` is an optional ``httpx`` transport (tests use ``httpx.MockTransport``).

    Example::

        >>> token = fetch_partner_token()  # doctest: +SKIP

    Raises:
        RegressError: a variable is missing (all missing ones are named), the service cannot
            be reached, or it refuses (the OAuth ``error`` code is named; never a secret).
    """
    import httpx

    env = os.environ if environ is None else environ
    missing = [name for name in SANDBOX_ENV if not env.get(name)]
    if missing:
        raise RegressError(
            "-p profile=sandbox needs the environment variables " + ", ".join(missing) + " (set them in "
            "the environment, never as -p parameters)"
        )
    url = env[SANDBOX_ENV[0]].rstrip("/") + "/oauth/accesstoken"
    try:
        with httpx.Client(transport=transport, timeout=timeout) as client:
            response = client.post(
                url,
                data={"grant_type": "client_credentials"},
                auth=(env[SANDBOX_ENV[1]], env[SANDBOX_ENV[2]]),
                headers={"Accept": "application/json"},
            )
    except httpx.HTTPError as exc:
        raise RegressError(f"cannot fetch the partner token from {url}: {type(exc).__name__}") from None
    try:
        body = response.json()
    except ValueError:
        body = {}
    token = body.get("access_token") if isinstance(body, dict) else None
    if response.status_code != 200 or not isinstance(token, str) or not token:
        code = body.get("error", "no access_token in the answer") if isinstance(body, dict) else "not JSON"
        raise RegressError(f"the partner token request to {url} failed: HTTP {response.status_code} ({code})")
    return token


# --- the worker (one process per job; one kernel per notebook) ------------------------------


def _init_worker(environ: Mapping[str, str]) -> None:
    os.environ.update(environ)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def _captured_stderr() -> Iterator[list[str]]:
    """Route fd 2 (this worker's and its kernel's stderr) to a file; yield its lines after."""
    lines: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield lines
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            lines.extend(sink.read().decode("utf-8", errors="replace").splitlines())


def _execute(
    source: str, output: str, cwd: str, parameters: dict[str, Any], cell_timeout: float, ipc_dir: str
) -> dict[str, Any]:
    """Run one notebook with papermill in this worker process; never raises."""
    import papermill
    from jupyter_client.kernelspec import KernelSpecManager
    from papermill.exceptions import PapermillExecutionError
    from traitlets.config import Config

    collect = _Collect()
    pm_log = logging.getLogger("papermill")
    pm_log.addHandler(collect)
    pm_log.propagate = False
    error: dict[str, Any] | None = None
    start = time.perf_counter()
    with _captured_stderr() as stderr:
        try:
            argv0 = KernelSpecManager().get_kernel_spec(KERNEL_NAME).argv[0]
            if argv0 != sys.executable:  # the pinned spec must win over any user-installed one
                raise RegressError(f"kernel {KERNEL_NAME!r} resolves to {argv0}, not {sys.executable}")
            papermill.execute_notebook(
                source,
                output,
                parameters=parameters,
                kernel_name=KERNEL_NAME,
                progress_bar=False,
                log_output=False,
                cwd=cwd,
                execution_timeout=cell_timeout,
                start_timeout=60,
                # IPC sockets in a private folder: no TCP ports, no plain-text warning on stderr
                config=Config({"KernelManager": {"transport": "ipc", "ip": f"{ipc_dir}/{os.getpid()}"}}),
            )
        except PapermillExecutionError as exc:
            error = {"ename": exc.ename, "evalue": str(exc.evalue), "traceback": list(exc.traceback)}
        except Exception as exc:  # a time-out, a dead kernel, an unreadable notebook: all reported
            error = {"ename": type(exc).__name__, "evalue": str(exc), "traceback": []}
        finally:
            pm_log.removeHandler(collect)
    return {
        "seconds": time.perf_counter() - start,
        "error": error,
        "notes": collect.messages,
        "stderr": [line for line in stderr if line.strip()],
    }


def _pinned_kernelspec(folder: Path) -> Path:
    """A ``python3`` kernelspec running this interpreter; its parent goes first on JUPYTER_PATH."""
    from ipykernel.kernelspec import get_kernel_dict

    spec = get_kernel_dict()
    spec["argv"][0] = sys.executable
    spec["display_name"] = "Python 3 (kit regress)"
    target = folder / "kernels" / KERNEL_NAME
    target.mkdir(parents=True)
    (target / "kernel.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
    return folder


# --- results --------------------------------------------------------------------------------


def _short(text: str, secrets: Sequence[str]) -> str:
    text = leaks.redact(text, secrets=secrets)
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= _ERROR_CHARS else line[: _ERROR_CHARS - 1] + "…"


def _failing_cell(nb: Mapping[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """The cell papermill marked failed (or left running: a time-out), and its error output."""
    cells = list(enumerate(nb.get("cells", []), start=1))

    def error_of(cell: Mapping[str, Any]) -> dict[str, Any] | None:
        return next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)

    marked = [
        (i, c)
        for i, c in cells
        if c.get("metadata", {}).get("papermill", {}).get("exception")
        or c.get("metadata", {}).get("papermill", {}).get("status") in ("failed", "running")
    ]
    # a time-out leaves the cell "completed" with the interrupt's error output
    found = marked or [(i, c) for i, c in cells if error_of(c) is not None]
    if not found:
        return None, None
    i, cell = found[0]
    count = cell.get("execution_count")
    return f"cell {i}" + (f" (In [{count}])" if count else ""), error_of(cell)


def _redact_notebook(output: Path, nb: Mapping[str, Any], secrets: Sequence[str]) -> None:
    """Rewrite an executed notebook with each leak replaced by ``[redacted <kind>]``.

    CI keeps the output folder as an artifact: a leak found must not stay there.
    """

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            return leaks.redact(value, secrets=secrets)
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        return value

    text = json.dumps(clean(nb), indent=1, ensure_ascii=False, sort_keys=True)
    output.write_text(text + "\n", encoding="utf-8")


def _result(path: Path, output: Path, outcome: Mapping[str, Any], secrets: Sequence[str]) -> NotebookResult:
    nb: dict[str, Any] = {}
    if output.is_file():
        with contextlib.suppress(ValueError, OSError):
            nb = json.loads(output.read_text(encoding="utf-8"))
    findings = tuple(leaks.scan_notebook(nb, secrets=secrets, name=str(output))) if nb else ()
    notes = [f"papermill: {_short(m, secrets)}" for m in outcome["notes"]]
    if findings:
        _redact_notebook(output, nb, secrets)
        if leaks.scan_notebook(output, secrets=secrets):
            notes.append("some leaks could not be redacted from the executed notebook: delete it")
        else:
            notes.append("the leaked values were redacted from the executed notebook")
    stderr = [line for line in outcome["stderr"] if not _BENIGN_STDERR.search(line)]
    if stderr:
        lines = "line" if len(stderr) == 1 else "lines"
        notes.append(f"the kernel wrote {len(stderr)} {lines} to stderr, first: {_short(stderr[0], secrets)}")
    for i, cell in enumerate(nb.get("cells", []), start=1):
        if any(o.get("name") == "stderr" for o in cell.get("outputs", [])):
            notes.append(f"cell {i} wrote to stderr (nbval compares it: a warning breaks validation)")
    cell, error, details = None, None, ""
    raw = outcome["error"]
    if raw is not None:
        cell, err_output = _failing_cell(nb)
        ename = raw["ename"]
        error = f"{ename}: {_short(raw['evalue'], secrets)}" if raw["evalue"].strip() else ename
        traceback = raw["traceback"] or (err_output or {}).get("traceback", [])
        details = leaks.redact(_ANSI.sub("", "\n".join(traceback) or raw["evalue"]), secrets=secrets)
        status = "failed"
    elif findings:
        status = "leaked"
        kinds = sorted({f.kind for f in findings})
        cell = findings[0].location.removeprefix(str(output) + ": ").split(",")[0]
        error = f"leak: {', '.join(kinds)} ({len(findings)} finding{'s' * (len(findings) > 1)})"
    else:
        status = "passed"
    if findings and status == "failed":
        error = f"{error} — and leaks: {', '.join(sorted({f.kind for f in findings}))}"
    if findings:
        details = "\n".join([details, *map(str, findings)]).strip()
    stderr_text = leaks.redact("\n".join(stderr[:_STDERR_LINES]), secrets=secrets)
    return NotebookResult(
        notebook=path.name,
        status=status,
        seconds=round(outcome["seconds"], 2),
        output=output,
        cell=cell,
        error=error,
        details=details,
        findings=findings,
        notes=tuple(notes),
        stderr=stderr_text,
    )


# --- reports --------------------------------------------------------------------------------


def _md(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def _summary(
    results: Sequence[NotebookResult],
    params: Mapping[str, Any],
    out_dir: Path,
    jobs: int,
    cell_timeout: float,
) -> str:
    failed, total = sum(not r.ok for r in results), len(results)
    noun = "notebook" if total == 1 else "notebooks"
    title = f"{failed} of {total} {noun} failed" if failed else f"{total} {noun}, all passed"
    shown = ", ".join(f"`{k}={v!r}`" for k, v in params.items()) or "none"
    lines = [
        f"# kit regress: {title}",
        "",
        f"Parameters: {shown} · cell time-out {cell_timeout:g} s · {jobs} job{'s' * (jobs > 1)} · "
        f"executed notebooks in `{out_dir}` (cells counted from 1 in the executed notebook)",
        "",
        "| notebook | status | seconds | failing cell | error |",
        "|---|---|---:|---|---|",
    ]
    for r in results:
        status = r.status if r.ok else f"**{r.status}**"
        lines.append(f"| {r.notebook} | {status} | {r.seconds:.2f} | {_md(r.cell)} | {_md(r.error)} |")
    found = [f for r in results for f in r.findings]
    if found:
        lines += ["", "## Leaks", ""] + [f"- `{f.location}`: {f.kind} — {f.hint}" for f in found]
    notes = [f"- {r.notebook}: {n}" for r in results for n in r.notes]
    if notes:
        lines += ["", "## Notes", "", *notes]
    return "\n".join(lines) + "\n"


def _junit(results: Sequence[NotebookResult], params: Mapping[str, Any], notebooks_dir: Path) -> bytes:
    total = round(sum(r.seconds for r in results), 3)
    failures = sum(not r.ok for r in results)
    suites = ET.Element(
        "testsuites", name="kit regress", tests=str(len(results)), failures=str(failures), time=str(total)
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="notebooks",
        tests=str(len(results)),
        failures=str(failures),
        errors="0",
        skipped="0",
        time=str(total),
        timestamp=time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
    )
    props = ET.SubElement(suite, "properties")
    for key, value in params.items():
        ET.SubElement(props, "property", name=key, value=repr(value))
    for r in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname="notebooks",
            name=Path(r.notebook).stem,
            file=str(notebooks_dir / r.notebook),
            time=str(r.seconds),
        )
        if not r.ok:
            kind = "Leak" if r.status == "leaked" else (r.error or "Error").split(":")[0]
            failure = ET.SubElement(case, "failure", message=r.message, type=kind)
            failure.text = r.details
        if r.notes or r.stderr:
            ET.SubElement(case, "system-err").text = "\n".join([*r.notes, r.stderr]).strip()
    ET.indent(suites)
    return ET.tostring(suites, encoding="utf-8", xml_declaration=True)


# --- progress -------------------------------------------------------------------------------


def _progress(total: int, enabled: bool) -> Callable[[NotebookResult], None]:
    """A tqdm bar on stderr (a plain counter line without tqdm); silent when disabled."""
    if not enabled:
        return lambda result: None
    try:
        from tqdm import tqdm
    except ImportError:
        done = [0]

        def count(result: NotebookResult) -> None:
            done[0] += 1
            end = "\n" if done[0] == total else ""
            print(
                f"\rregress [{done[0]}/{total}] {result.notebook}: {result.status}\x1b[K",
                end=end,
                file=sys.stderr,
                flush=True,
            )

        return count
    bar = tqdm(total=total, desc="regress", unit="nb", file=sys.stderr, leave=True, dynamic_ncols=True)

    def update(result: NotebookResult) -> None:
        bar.set_postfix_str(f"{result.notebook}: {result.status}", refresh=False)
        bar.update(1)
        if bar.n >= total:
            bar.close()

    return update


# --- the run --------------------------------------------------------------------------------


def _outcome(future: concurrent.futures.Future[dict[str, Any]]) -> dict[str, Any]:
    try:
        return future.result()
    except Exception as exc:  # the worker process itself died (BrokenProcessPool…)
        error = {"ename": type(exc).__name__, "evalue": str(exc), "traceback": []}
        return {"seconds": 0.0, "error": error, "notes": [], "stderr": []}


def _mp_context() -> multiprocessing.context.BaseContext:
    """``fork`` on Linux while this process has a single thread, else ``spawn``.

    Forked workers inherit the imports (papermill is imported once, here), which saves about a
    second of CPU per worker. Forking a process that runs other threads (an embedded simulator,
    a Jupyter kernel calling :func:`run`) can deadlock: then the workers are spawned.
    """
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        import papermill  # noqa: F401  (inherited by the forked workers)

        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _default_jobs() -> int:
    with contextlib.suppress(AttributeError):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def run(
    selection: Sequence[str] = (),
    *,
    notebooks_dir: str | os.PathLike[str] = "notebooks",
    out_dir: str | os.PathLike[str] = DEFAULT_OUT,
    parameters: Mapping[str, Any] | None = None,
    jobs: int | None = None,
    cell_timeout: float = DEFAULT_CELL_TIMEOUT,
    progress: bool | None = None,
    environ: Mapping[str, str] | None = None,
) -> RegressReport:
    """Execute notebooks in parallel, scan them for leaks, write ``junit.xml`` and ``summary.md``.

    Each notebook runs in a worker process (a pool of ``jobs``, default one per core) with
    papermill and kernel ``python3`` pinned to ``sys.executable``, cwd = ``notebooks_dir``,
    ``KIT_REGRESS=1`` in the kernel's environment, ``parameters`` injected, and at most
    ``cell_timeout`` seconds per cell. ``progress`` (default: when stderr is a terminal) draws
    a bar on stderr. ``environ`` replaces ``os.environ`` for the sandbox credentials.

    Example::

        >>> report = run(["00_quickstart"], parameters={"seed": 7}, jobs=1)  # doctest: +SKIP
        >>> report.ok, report.summary_path                                     # doctest: +SKIP
        (True, PosixPath('out/regress/summary.md'))

    Raises:
        RegressError: a secret-looking parameter, no notebook selected, a missing sandbox
            variable or a refused token request — before any kernel starts.
    """
    params = dict(parameters or {})
    check_parameters(params)
    folder = Path(notebooks_dir)
    notebooks = discover(folder, selection)
    env = os.environ if environ is None else environ
    kernel_env = {"KIT_REGRESS": "1"}
    secrets: list[str] = []
    if params.get("profile") == "sandbox":
        token = fetch_partner_token(env)  # once for the whole run (DESIGN §5)
        kernel_env[ACCESS_TOKEN_ENV] = token
        secrets.append(token)
    jobs = max(1, min(jobs or _default_jobs(), len(notebooks)))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for path in notebooks:  # a stale copy from an earlier run must not pass for this one
        (out / path.name).unlink(missing_ok=True)
    show = sys.stderr.isatty() if progress is None else progress
    results: dict[Path, NotebookResult] = {}
    with tempfile.TemporaryDirectory(prefix="kit-regress-") as tmp:
        jupyter_path = _pinned_kernelspec(Path(tmp) / "jupyter")
        kernel_env["JUPYTER_PATH"] = os.pathsep.join(
            filter(None, [str(jupyter_path), env.get("JUPYTER_PATH")])
        )
        ipc_dir = Path(tmp) / "ipc"
        ipc_dir.mkdir()
        with concurrent.futures.ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=_mp_context(),
            initializer=_init_worker,
            initargs=(kernel_env,),
        ) as pool:
            futures = {
                pool.submit(
                    _execute,
                    str(path.resolve()),
                    str((out / path.name).resolve()),
                    str(folder.resolve()),
                    params,
                    cell_timeout,
                    str(ipc_dir),
                ): path
                for path in notebooks
            }
            advance = _progress(len(notebooks), show)  # after the workers started: tqdm runs a thread
            try:
                for future in concurrent.futures.as_completed(futures):
                    path = futures[future]
                    results[path] = _result(path, out / path.name, _outcome(future), secrets)
                    advance(results[path])
            except KeyboardInterrupt:  # Ctrl-C: do not start the notebooks still queued
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    ordered = tuple(results[p] for p in notebooks)
    summary = _summary(ordered, params, out, jobs, cell_timeout)
    junit_path, summary_path = out / "junit.xml", out / "summary.md"
    junit_path.write_bytes(_junit(ordered, params, folder))
    summary_path.write_text(summary, encoding="utf-8")
    report_findings = [
        f for path in (junit_path, summary_path) for f in leaks.scan_file(path, secrets=secrets)
    ]
    return RegressReport(
        results=ordered,
        out_dir=out,
        junit=junit_path,
        summary_path=summary_path,
        summary=summary,
        parameters=params,
        findings=tuple(report_findings),
    )


# --- command line ---------------------------------------------------------------------------


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
        "never a secret: keys containing secret, token, password or key are refused",
    )
    parser.add_argument(
        "-r",
        "--raw-parameter",
        dest="raw_parameters",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="like -p but the value stays a string (amounts: -r amount=20.00)",
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
        "--notebooks", default="notebooks", metavar="DIR", help="notebooks folder (default notebooks)"
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
        "Exit status: 0 all passed, 1 a notebook failed or leaked, 2 a usage error."
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
    try:
        if args.jobs is not None and args.jobs < 1:
            raise RegressError("--jobs must be at least 1")
        if args.cell_timeout <= 0:
            raise RegressError("--cell-timeout must be positive")
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
        )
    except RegressError as exc:
        print(f"kit regress: {exc.message}", file=sys.stderr)
        return 2
    print(report.summary, end="")
    for finding in report.findings:
        print(f"leak in a report file: {finding}", file=sys.stderr)
    return 0 if report.ok else 1


def main(argv: list[str] | None = None) -> int:
    """``python -m kit.regress [options]``: the same as ``kit regress``.

    Example::

        >>> main(["--help"])  # doctest: +SKIP

    Raises:
        SystemExit: for ``--help`` and argparse's own usage errors.
    """
    args = build_parser().parse_args(argv)
    return command(args)


if __name__ == "__main__":
    raise SystemExit(main())
