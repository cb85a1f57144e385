"""``kit regress --versions A,B``: the same flows under two API versions, and what changed.

A notebook that runs on both versions (the migration notebook, and any whose parameters cell
declares ``api_version``) runs once per version (``api_version`` injected as a parameter). Its
wire — each call's method, path, status, code, headers and body fields, and each webhook it
received — is emitted as a ``application/vnd.kit._wire+json`` output (:func:`emit`, with the
calls recorded by :func:`record`, each with the step of the code that made it where the recorder
is told). The two wires are normalised (ids, times, request ids and the version header itself
are left out or replaced by placeholders) and compared call by call, a call paired with the
other version's call made at the same step (:func:`pair_calls`); each difference is attributed
to the change of 1.2.0 whose record touches it (``data/spec.toml`` ``change.N``: its
operations, fields, card and event types, and the values of the register entries that choose
for it) or reported "unexplained". The change list says what changed; the
wire details of each side are the register's where the spec leaves them open (:func:`basis`):
everything the version before answered (A27, the kit's 1.1.0; A65's savings close, A66's
Refer-a-Friend paths) and 1.2.0's answers the spec does not word (A29's 404 endpoint-removed,
A03's Deprecation, A18's role header). ``OUT/migration.md`` starts with exactly
"N differences, M unexplained", followed by how many name a register entry; its second line
counts the N by kind (:func:`breakdown`); ``OUT/migration.json`` holds the same
(:mod:`kit.regress.migration_report`).

    >>> normal_path("/cards/card_7f6be71442b1cff4cdeb/close")
    '/cards/{id}/close'
    >>> header_value("deprecation", "@1671062400")
    '@1671062400 (2022-12-15)'
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from kit._dialect import DEFAULT, Dialect
from kit._headers import HEADERS
from kit.regress.attribution import Difference, attribute, basis
from kit.regress.migration_report import breakdown, report_markdown, write_report
from kit.regress.served import Probe, probe, serves

__all__ = [
    "WIRE_MIME",
    "Difference",
    "Probe",
    "attribute",
    "basis",
    "breakdown",
    "compare",
    "emit",
    "header_value",
    "keyed_calls",
    "normal_path",
    "pair_calls",
    "probe",
    "record",
    "report_markdown",
    "response_hook",
    "run_versions",
    "serves",
    "write_report",
]

WIRE_MIME = "application/vnd.kit._wire+json"
_ID = re.compile(r"\b(?:acc|per|card|ses|p2p|evt|doc|sub|req|raf|tr)_[A-Za-z0-9]+")
#: Headers that differ on every call or only name the version: never compared (normalised away).
#: HTTP's own, and the wire's (:mod:`kit._headers`), by the kit's names in lower case.
IGNORED_HEADERS = frozenset(
    {
        "date",
        "server",
        "content-length",
        "content-type",
        "cache-control",
        "pragma",
        "www-authenticate",
        *(
            name.lower()
            for name in (
                HEADERS.request_id,
                HEADERS.api_version,
                HEADERS.assumptions,
                HEADERS.session_expires_at,
                HEADERS.replayed,
            )
        ),
    }
)
#: How a step of the harness around the code is named (``harness: the client's token``): its
#: calls are counted apart from the code's.
HARNESS = "harness:"
#: Headers whose value is compared too (the rest only by presence).
VALUED_HEADERS = frozenset({"deprecation", "link", HEADERS.p2p_role.lower()})


def normal_path(path: str) -> str:
    """The path with every id replaced by ``{id}`` (ids differ between runs)."""
    return _ID.sub("{id}", path.split("?", 1)[0])


def header_value(name: str, value: str) -> str:
    """A compared header's value as a report shows it: a ``Deprecation`` date (RFC 9745: a
    structured-field date, ``@`` and Unix seconds) with its UTC day beside it."""
    seconds = re.fullmatch(r"@(-?\d{1,12})", value.strip()) if name.lower() == "deprecation" else None
    if seconds is None:
        return value
    return f"{value} ({datetime.fromtimestamp(int(seconds.group(1)), UTC).date().isoformat()})"


def _row(response: httpx.Response, dialect: Dialect) -> dict[str, Any]:
    request = response.request
    response.read()
    try:
        body = response.json()
    except ValueError:
        body = None
    sent: list[str] = []
    if request.headers.get("content-type", "").startswith("application/json") and request.content:
        try:
            payload = json.loads(request.content)
        except ValueError:
            payload = None
        if isinstance(payload, Mapping):
            sent = sorted(
                {dialect.name_from_wire(str(k)) for k in payload}
                | {v for v in payload.values() if isinstance(v, str) and not _ID.search(v) and len(v) < 64}
            )
    headers = {
        name: (value if name in VALUED_HEADERS else "")
        for name, value in ((dialect.header_from_wire(n.lower()), v) for n, v in response.headers.items())
        if name not in IGNORED_HEADERS
    }
    code = None
    if response.status_code >= 400 and isinstance(body, Mapping):
        code = body.get("code") or body.get("error")
        code = dialect.only_code_from_wire(code) if isinstance(code, str) else code
    ok = isinstance(body, Mapping) and response.status_code < 400
    return {
        "method": request.method,
        "path": dialect.path_to_kit(request.method, normal_path(request.url.path)),
        "status": response.status_code,
        "code": code,
        "headers": dict(sorted(headers.items())),
        "fields": sorted(dialect.name_from_wire(str(k)) for k in body) if ok else [],
        "sent": sent,
    }


def response_hook(
    rows: list[dict[str, Any]], step: Callable[[], str] | None = None, dialect: Dialect | None = None
) -> Callable[[httpx.Response], None]:
    """An httpx response hook appending each answer's normalised row to ``rows`` (the control
    plane's ``/_sim`` calls left out): for a plain ``httpx.Client`` beside the kit client.
    ``step``, called on the calling thread as each answer arrives, names the step of the code
    that made the call (the row's ``step``). ``dialect``: the server's spelling (``None``: the
    register's), recorded in the kit's: a path the dialect moved (A67), member and header names,
    and a problem code that stands for one of the kit's alone (A64; a generic code standing for
    several stays as it came)."""
    spoken = dialect or DEFAULT

    def hook(response: httpx.Response) -> None:
        if not response.request.url.path.startswith("/_sim"):
            row = _row(response, spoken)
            if step is not None:
                row["step"] = step()
            rows.append(row)

    return hook


def record(api: Any, step: Callable[[], str] | None = None) -> list[dict[str, Any]]:
    """Record every answer ``api`` (a :class:`kit.Client`) receives from now on, normalised and
    in the kit's spelling whatever the server's dialect, into the list returned, each with its
    ``step`` where given (:func:`response_hook`; until the client's own record of the wire
    lands: its connection's response hook)."""
    rows: list[dict[str, Any]] = []
    hook = response_hook(rows, step, api.config.dialect)
    api._requestor.transport._client.event_hooks["response"].append(hook)
    return rows


def emit(version: str, calls: Sequence[Mapping[str, Any]], webhooks: Iterable[Any] = ()) -> dict[str, Any]:
    """The wire of one run as a display bundle (``IPython.display.display(..., raw=True)``):
    the calls, and each webhook received (a delivery, or a mapping as a wire holds it) by its
    type, ``Deprecation`` and, where a mapping names it, the ``step`` that made the server send
    it (never its body)."""
    hooks = []
    for h in webhooks:
        delivery = {"type": getattr(h, "type", None), "deprecation": getattr(h, "deprecation", None)}
        seen = h if isinstance(h, Mapping) else delivery
        hook = {"type": seen["type"], "deprecation": seen.get("deprecation")}
        hooks.append({**hook, "step": seen["step"]} if seen.get("step") else hook)
    wire = {"version": version, "calls": list(calls), "webhooks": sorted(hooks, key=lambda h: str(h["type"]))}
    return {
        WIRE_MIME: wire,
        "text/plain": f"wire of {version}: {len(wire['calls'])} calls, {len(hooks)} webhooks",
    }


# --- comparing two wires -----------------------------------------------------------------------


def keyed_calls(calls: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str, str, int], Mapping[str, Any]]:
    """``calls`` by ``(step, method, path, n)``: ``n`` counts the calls of that method and path
    made at that step (``""`` where the recorder was told none)."""
    seen: Counter[tuple[str, str, str]] = Counter()
    keyed = {}
    for call in calls:
        key = (str(call.get("step", "")), call["method"], call["path"])
        seen[key] += 1
        keyed[(*key, seen[key])] = call
    return keyed


Paired = tuple[tuple[str, str, str, int], Mapping[str, Any] | None, Mapping[str, Any] | None]


def pair_calls(before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]) -> list[Paired]:
    """Each call of ``before`` with the call of ``after`` made at the same step (the same line of
    the code, its n-th call there): ``(key, a, b)`` (:func:`keyed_calls`' key), in ``before``'s
    order, each call only ``after`` made placed after the call ``after`` made before it. Calls
    of one method and path left over on both sides (made at other steps, or recorded without
    one) are paired in order; ``None`` on the side that made no such call."""
    old, new = keyed_calls(before), keyed_calls(after)
    waiting: defaultdict[tuple[str, str], deque[tuple[str, str, str, int]]] = defaultdict(deque)
    for key in new:
        if key not in old:
            waiting[key[1:3]].append(key)
    paired: list[Paired] = []
    taken = set()
    for key, call in old.items():
        if key in new:
            paired.append((key, call, new[key]))
        elif waiting[key[1:3]]:
            other = waiting[key[1:3]].popleft()
            taken.add(other)
            paired.append((key, call, new[other]))
        else:
            paired.append((key, call, None))
    made = list(new.values())
    for index, (key, call) in enumerate(new.items()):
        if key in old or key in taken:
            continue
        previous = made[index - 1] if index else None  # placed after the call made before it
        at = next((i + 1 for i, (_, _a, b) in enumerate(paired) if previous is not None and b is previous), 0)
        paired.insert(at, (key, None, call))
    return paired


def compare(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Difference]:
    """Every difference from the wire ``before`` (the older version's) to ``after``, its calls
    paired by :func:`pair_calls`."""
    found: list[tuple[str, str, str, str, Mapping[str, Any]]] = []
    made = [Counter((_made_by(c), c["method"], c["path"]) for c in wire["calls"]) for wire in (before, after)]
    counted = set()
    for (_step, method, path, _n), a, b in pair_calls(before["calls"], after["calls"]):
        where = f"{method} {path}"
        if a is None or b is None:
            call = a or b
            assert call is not None
            key = (_made_by(call), method, path)  # the harness's calls counted apart from the code's
            if key not in counted:  # one line per (who, method, path) whose count differs
                counted.add(key)
                found.append(("calls", where, str(made[0][key]), str(made[1][key]), call))
            continue
        if (a["status"], a["code"]) != (b["status"], b["code"]):
            found.append(
                (
                    "code",
                    where,
                    f"{a['status']} {a['code'] or ''}".strip(),
                    f"{b['status']} {b['code'] or ''}".strip(),
                    a,
                )
            )
            continue
        for name in sorted(set(a["headers"]) | set(b["headers"])):
            if a["headers"].get(name) != b["headers"].get(name):
                sides = [call["headers"].get(name) for call in (a, b)]
                x, y = (header_value(name, v) if v else ("present" if v == "" else "absent") for v in sides)
                found.append(("header", where, f"{name}: {x}", f"{name}: {y}", {**a, "header": name}))
        for name in sorted(set(a["fields"]) ^ set(b["fields"])):
            found.append(
                (
                    "field",
                    where,
                    name if name in a["fields"] else "absent",
                    name if name in b["fields"] else "absent",
                    {**a, "field": name},
                )
            )
    # each event type with the step that made the server send it (the harness's, or the code's)
    hooks_a = {(h["type"], h.get("deprecation")): h.get("step", "") for h in before.get("webhooks", [])}
    hooks_b = {(h["type"], h.get("deprecation")): h.get("step", "") for h in after.get("webhooks", [])}
    for event, deprecation in sorted(hooks_a.keys() ^ hooks_b.keys(), key=str):
        side = "before" if (event, deprecation) in hooks_a else "after"
        step = (hooks_a if side == "before" else hooks_b)[event, deprecation]
        shown = f"{event}{' (Deprecation)' if deprecation else ''}"
        found.append(
            (
                "event type",
                "webhook",
                shown if side == "before" else "absent",
                shown if side == "after" else "absent",
                {"event": event, "step": step},
            )
        )
    diffs = []
    for kind, where, x, y, call in found:
        change = attribute(kind, where, call)
        given = basis(change, kind, where, x, y, status=call.get("status"))
        by = _made_by(call) if kind in ("calls", "event type") else ""
        diffs.append(Difference(kind, where, x, y, change, *given, made_by=by))
    return diffs


def _made_by(call: Mapping[str, Any]) -> str:
    """The harness's step that made ``call`` (a step named ``harness: …``), ``""`` for the code's
    own or where the recorder was told no step."""
    step = str(call.get("step", ""))
    return step if step.startswith(HARNESS) else ""


def wire_of(executed: str | Path) -> dict[str, Any] | None:
    """The wire an executed notebook emitted (its last ``WIRE_MIME`` output), or None."""
    cells = json.loads(Path(executed).read_text(encoding="utf-8"))["cells"]
    found = None
    for cell in cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIRE_MIME in data:
                found = data[WIRE_MIME]
    return found


#: The migration notebook, run by every ``--versions`` run.
MIGRATION_NOTEBOOK = "13_migrating_to_1_2_0.ipynb"


def runs_on_both(notebook: Path) -> bool:
    """Whether a notebook declares it runs on both versions: its parameters cell (the one
    tagged ``parameters``) sets ``api_version``."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            return re.search(r"^api_version\s*=", "".join(cell["source"]), re.MULTILINE) is not None
    return False


def run_versions(
    versions: Sequence[str], notebooks_dir: str | Path, out_dir: str | Path, **run_options: Any
) -> tuple[str, Any]:
    """Run the migration notebook and every notebook declaring ``api_version`` once per version
    (``kit.regress.run`` with one parameter set per version, into ``OUT/<version>/``), compare
    each notebook's two wires and write the report; returns its first line and the run's report.

    Raises:
        RegressError: not two versions, or no such notebooks.
    """
    from kit.regress.model import RegressError
    from kit.regress.runner import run

    if len(versions) != 2 or versions[0] == versions[1]:
        raise RegressError("--versions takes two different versions: FROM,TO (e.g. 1.1.0,1.2.0-20221215)")
    folder = Path(notebooks_dir)
    chosen = [
        p.name
        for p in sorted(folder.glob("[0-9][0-9]_*.ipynb"))
        if p.name == MIGRATION_NOTEBOOK or runs_on_both(p)
    ]
    if not chosen:
        raise RegressError(f"no notebook runs on both versions in {folder} (expected {MIGRATION_NOTEBOOK})")
    matrix = {v: {"api_version": v} for v in versions}
    report = run(chosen, notebooks_dir=folder, out_dir=out_dir, matrix=matrix, **run_options)
    by_notebook: dict[str, list[Difference]] = {}
    for name in chosen:
        wires = [
            wire_of(Path(out_dir) / v / name) if (Path(out_dir) / v / name).exists() else None
            for v in versions
        ]
        if wires[0] is None or wires[1] is None:
            by_notebook[name] = [
                Difference(
                    "notebook",
                    name,
                    "no wire" if wires[0] is None else "ran",
                    "no wire" if wires[1] is None else "ran",
                    None,
                )
            ]
            continue
        by_notebook[name] = compare(wires[0], wires[1])
    return write_report(out_dir, versions, by_notebook), report
