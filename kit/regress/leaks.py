"""Find secrets and personal data where they must never be: notebooks, reports, tables.

Nothing decrypted and no secret is ever written to a notebook output, a stored file or the
call history; this module checks that after the fact. It looks for

- ``persona-dob`` / ``persona-national-id``: every persona's date of birth (ISO and other
  common forms: ``14/03/1950``, ``March 14, 1950``, ``19500314``…) and national id (with
  or without separators), read from ``data/personas.json`` through :func:`kit.register.personas`;
- ``client-secret``: the simulator's default client secrets (:data:`kit._env.SIM_PARTNER_CLIENTS`),
  the partner client secret of the environment (:data:`kit._env.CLIENT_SECRET`) and the secrets
  of :data:`kit._env.SIM_PARTNERS` when set, a quoted ``"client_secret": "…"``;
- ``partner-token``: the value of :data:`kit._env.ACCESS_TOKEN` when set, what follows
  ``Bearer `` and what sits in ``"access_token": "…"``;
- ``control-token``: the value of :data:`kit._env.SIM_CONTROL_TOKEN` when set;
- ``secret``: any value handed in through ``secrets=``;
- ``jwe``, ``jws``, ``jws-detached``, ``jose``: compact JOSE strings (an ``eyJ`` header and
  dot-separated base64url segments: five for a JWE, ``header..signature`` for a detached JWS);
- ``session-token``: ``ses_`` followed by 40 or more base64url characters (seeded ids such as
  ``acc_5ea792c644255bcf6a87`` are not tokens and are not reported);
- ``used-token``: a partner, session or control token the run's kernels used, in any format,
  found by its salted fingerprint (:class:`~kit.regress.scanner.Fingerprints`, read with
  :func:`read_fingerprints` from what each kernel's notebook companion wrote);
- ``token``: what sits in ``"refresh_token": "…"`` or ``"id_token": "…"``;
- ``kyc-question``: the decrypted KYC question texts (:data:`KYC_QUESTIONS`, register A12);
- ``sensitive-text``: any literal handed in through ``extra=``;
- ``fixture-value``: every value of the sandbox fixtures file named by
  :data:`kit._env.SANDBOX_FIXTURES` (test personas' PII and KYC answers, :mod:`kit._fixtures`);
  a short one (a four-digit answer) only where it stands alone, never inside an id or a date
  (``1990/1/31``), and none inside the kit's own words — a passage of the register, the spec or
  the OpenAPI documents around it (:mod:`kit.regress.owntext`: A11's example dates in every
  notebook's closing table are not a persona's answer).

Each is found written as it is and written encoded: every span that decodes is decoded and
matched again (two decodings deep), and a finding there names the encoded span — percent
escapes (a URL's query, a form body), JSON string escapes (``\\/``, ``\\u0073``), an HTTP
Basic value (``client_id:secret``) and other base64 or base64url runs of printable text. Used
tokens' fingerprints are compared over candidates split at ``=``, ``:`` and ``&``. A HAR or
JSON file (:data:`JSON_SUFFIXES`) is read as JSON, every string decoded of its escapes and a
JSON body held as a string read field by field.

A :class:`Finding` names the kind, where it was found and what to do — never the value: its
``repr`` and ``str`` are safe to print, log and write into a report; :func:`redact` writes
the recorder's marker in place of each leak (``<kind>``, :func:`kit._redaction.marker`), and
a field's kind is the recorder's too (:mod:`kit.regress.names`). The patterns live in
:mod:`kit.regress.scanner`.

Example::

    >>> from kit.regress.leaks import scan_text
    >>> [f.kind for f in scan_text('{"note": "born 1950-03-14"}')]
    ['persona-dob']
    >>> scan_text("account acc_5ea792c644255bcf6a87 opened at 2025-01-06T09:00:00Z")
    []
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kit._redaction import marker
from kit.regress.scanner import (
    ANSI,
    DEFAULT_CLIENT_SECRETS,
    HINTS,
    KYC_QUESTIONS,
    Finding,
    Fingerprints,
    Scanner,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DEFAULT_CLIENT_SECRETS",
    "HINTS",
    "JSON_SUFFIXES",
    "KYC_QUESTIONS",
    "REPORTS",
    "Finding",
    "Fingerprints",
    "read_fingerprints",
    "redact",
    "scan_dataframe",
    "scan_file",
    "scan_notebook",
    "scan_text",
]

#: The report files a ``kit regress`` run writes in its output folder, each scanned like the
#: executed notebooks (a leak in one fails the run): the JUnit XML, the summary, the HTML page,
#: and on a profile other than ``sim`` the conformance table (:mod:`kit.regress.conformance`).
REPORTS = ("junit.xml", "summary.md", "report.html", "conformance.md", "conformance.json")

#: Files :func:`scan_file` reads as JSON, string by string (a HAR file, the conformance table).
JSON_SUFFIXES = (".har", ".json")

_TEXT_MIMES = ("text/", "application/json", "application/javascript", "image/svg+xml")


def scan_text(
    text: str,
    *,
    secrets: Iterable[Any] = (),
    extra: Iterable[str] = (),
    location: str = "text",
    environ: Mapping[str, str] | None = None,
) -> list[Finding]:
    """Every leak in a text, in order; each :class:`Finding` names the line, never the value.

    ``secrets`` are further literal values (strings or :class:`kit.Sensitive`) to look for;
    ``extra`` further literal texts (matched case-insensitively, any whitespace); ``environ``
    replaces ``os.environ`` when reading the secrets of :data:`kit._env.SECRET_VARIABLES` and
    :data:`kit._env.SIM_PARTNERS`.

    Example::

        >>> [f.kind for f in scan_text("token ses_" + "A" * 43)]
        ['session-token']
        >>> [str(f) for f in scan_text("x", secrets=["x"])]   # shorter than 4: ignored
        []

    Raises:
        TypeError: when ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"scan_text needs a str, not {type(text).__name__}")
    return Scanner(secrets, extra, environ).findings(text, location)


def redact(
    text: str,
    *,
    secrets: Iterable[Any] = (),
    extra: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
    markup: bool = False,
) -> str:
    """``text`` with every leak replaced by its marker, ``<kind>`` (for reports and messages;
    ``markup``: ``text`` is HTML, so the marker is written escaped, ``&lt;kind&gt;``, to be seen).

    A text without leaks comes back unchanged; one with leaks also loses its ANSI colour codes.

    Example::

        >>> redact("AssertionError: " + DEFAULT_CLIENT_SECRETS[0] + " != x")
        'AssertionError: <client-secret> != x'

    Raises:
        TypeError: when ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"redact needs a str, not {type(text).__name__}")
    plain = ANSI.sub("", text)
    hits = Scanner(secrets, extra, environ).matches(plain)
    if not hits:
        return text  # untouched, colour codes included
    parts, last = [], 0
    for kind, start, end in hits:
        shown = marker(kind)
        parts += [plain[last:start], html.escape(shown) if markup else shown]
        last = end
    return "".join([*parts, plain[last:]])


def scan_notebook(
    notebook: str | os.PathLike[str] | Mapping[str, Any],
    *,
    secrets: Iterable[Any] = (),
    extra: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
    name: str | None = None,
) -> list[Finding]:
    """Every leak in a notebook: cell sources, outputs (text, data, errors), metadata.

    The notebook metadata includes what papermill records (``metadata.papermill.parameters``).
    Cells are counted from 1 in the file given, with the execution count when there is one:
    ``executed/01_x.ipynb: cell 5 (In [3]) output 1 text/plain, line 2`` (``name`` replaces the
    file name, or ``notebook`` for a dict). Binary outputs (PNG, JPEG) are skipped.

    Example::

        >>> findings = scan_notebook("out/regress/04_onboarding_kyc.ipynb")  # doctest: +SKIP
        >>> sorted({f.kind for f in findings})                               # doctest: +SKIP
        []

    Raises:
        OSError: when the file cannot be read.
        ValueError: when it is not JSON (json.JSONDecodeError).
    """
    scanner = Scanner(secrets, extra, environ)
    if isinstance(notebook, Mapping):
        nb, name = notebook, name or "notebook"
    else:
        name = name or str(notebook)
        with open(notebook, encoding="utf-8") as f:
            nb = json.load(f)
    found = list(scanner.walk(dict(nb.get("metadata", {})), f"{name}: metadata"))
    for i, cell in enumerate(nb.get("cells", []), start=1):
        count = cell.get("execution_count")
        where = f"{name}: cell {i}" + (f" (In [{count}])" if count else "")
        found += scanner.findings(_joined(cell.get("source", "")), f"{where} source")
        found += scanner.walk(dict(cell.get("metadata", {})), f"{where} metadata")
        for att_name, bundle in dict(cell.get("attachments") or {}).items():
            found += _scan_bundle(scanner, bundle, f"{where} attachment {att_name}")
        for j, output in enumerate(cell.get("outputs", []), start=1):
            found += _scan_output(scanner, output, f"{where} output {j}")
    return found


def scan_file(
    path: str | os.PathLike[str],
    *,
    secrets: Iterable[Any] = (),
    extra: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
) -> list[Finding]:
    """Every leak in a file: a notebook (``.ipynb``) cell by cell, a HAR or JSON file
    (:data:`JSON_SUFFIXES`) string by string, anything else as text.

    Example::

        >>> scan_file("out/regress/summary.md")  # doctest: +SKIP
        []

    Raises:
        OSError: when the file cannot be read.
    """
    if str(path).endswith(".ipynb"):
        try:
            return scan_notebook(path, secrets=secrets, extra=extra, environ=environ)
        except ValueError:
            pass  # not JSON: scan it as text below
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    scanner = Scanner(secrets, extra, environ)
    if str(path).endswith(JSON_SUFFIXES):
        try:
            document = json.loads(text)
        except ValueError:
            pass  # not JSON: scan it as text below
        else:  # every string decoded of its JSON escapes, each body held as a string by field
            return list(scanner.walk(document, str(path)))
    return scanner.findings(text, str(path))


def scan_dataframe(
    df: pd.DataFrame,
    *,
    secrets: Iterable[Any] = (),
    extra: Iterable[str] = (),
    name: str = "DataFrame",
    environ: Mapping[str, str] | None = None,
) -> list[Finding]:
    """Every leak in a DataFrame: column names, index labels and every cell.

    Locations use positions (``row 3``) and column names, never index labels (which could be
    the leaked value themselves). Strings are scanned as text, dicts and lists as JSON-like
    values, other objects through ``str()`` (a :class:`kit.Sensitive` shows its mask).

    Example::

        >>> import pandas as pd
        >>> [f.location for f in scan_dataframe(pd.DataFrame({"dob": ["1950-03-14"]}))]
        ["DataFrame row 1, column 'dob'"]

    Raises:
        AttributeError: when ``df`` is not DataFrame-like (no ``columns``, ``index``, ``itertuples``).
    """
    scanner = Scanner(secrets, extra, environ)
    columns = []
    found: list[Finding] = []
    for j, column in enumerate(df.columns, start=1):
        label = str(column)
        hits = scanner.findings(label, f"{name} column {j} (its name)")
        found += hits
        columns.append(f"column {j}" if hits else f"column {label!r}")
    for i, label in enumerate(df.index, start=1):
        if not isinstance(label, int | float):
            found += scanner.findings(str(label), f"{name} row {i} (its index label)")
    for i, row in enumerate(df.itertuples(index=False, name=None), start=1):
        for column, value in zip(columns, row, strict=True):
            found += _scan_value(scanner, value, f"{name} row {i}, {column}")
    return found


def read_fingerprints(path: str | os.PathLike[str]) -> Fingerprints | None:
    """The token fingerprints a kernel's companion wrote (``{"salt": hex, "fingerprints": [...]}``,
    :mod:`kit.notebook.wire`), or ``None`` when there is no such file or it is unreadable.

    Example::

        >>> read_fingerprints("/nonexistent.tokens.json") is None
        True
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return Fingerprints(bytes.fromhex(data["salt"]), frozenset(str(h) for h in data["fingerprints"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


# --- helpers --------------------------------------------------------------------------------


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _scan_value(scanner: Scanner, value: Any, location: str) -> list[Finding]:
    if value is None or isinstance(value, bool | int | float):
        return []
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if isinstance(value, str):
        return scanner.findings(value, location)
    if isinstance(value, Mapping | list | tuple):
        return list(scanner.walk(value, location))
    return scanner.findings(str(value), location)


def _scan_bundle(scanner: Scanner, bundle: Mapping[str, Any], location: str) -> list[Finding]:
    found: list[Finding] = []
    for mime, data in bundle.items():
        if mime.startswith(_TEXT_MIMES) or mime.endswith("+json"):
            text = data if isinstance(data, Mapping) else _joined(data)
            found += _scan_value(scanner, text, f"{location} {mime}")
    return found


def _scan_output(scanner: Scanner, output: Mapping[str, Any], location: str) -> list[Finding]:
    kind = output.get("output_type")
    found: list[Finding] = []
    if kind == "stream":
        stream = output.get("name", "stream")
        found += scanner.findings(_joined(output.get("text", "")), f"{location} {stream}")
    elif kind == "error":
        found += scanner.findings(str(output.get("ename", "")), f"{location} error name")
        found += scanner.findings(str(output.get("evalue", "")), f"{location} error value")
        found += scanner.findings("\n".join(output.get("traceback", [])), f"{location} traceback")
    else:
        found += _scan_bundle(scanner, output.get("data", {}), location)
    found += scanner.walk(dict(output.get("metadata", {})), f"{location} metadata")
    return found
