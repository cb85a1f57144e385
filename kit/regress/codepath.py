"""The harness notebook 13 runs a partner's code path in, once under each API version.

The partner's code is the notebook's own: a function ``(api, raw, account_id, payee_id)`` the
reader sees in a story cell (1.1.0 code half-way through its migration, each line that meets a
change of 1.2.0 marked ``# change N``), passed here as ``code``, so what the notebook shows is
what runs.

:func:`walk` is the harness around it: it connects the clients, onboards two customers, starts
the webhook receiver where the API can reach it, records every answer normalised
(:func:`kit.regress.migration.record`) with the step that made it — the line of ``code``
running (:func:`step_label`), else the harness's own step — and returns the wire as
:func:`kit.regress.migration.emit` gives it, ready for :func:`kit.regress.migration.compare`.
:func:`walk_versions` walks each version a server serves, each from the same seeded start.
:func:`differences` compares two walks and counts the register entries the comparison names in
the notebook's closing table (:func:`kit.notebook.entries_used`), as the answers of the plain
httpx client are counted. :func:`code_steps` lists the lines of ``code`` that call the API
whatever the answers, what each version's run must have made.

    >>> step_label('api.cards.close(card.card_id, reason="lost")  # change 2')
    'api.cards.close(…, reason="lost")'
"""

from __future__ import annotations

import ast
import inspect
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx

import kit.notebook
from kit._headers import HeaderNames
from kit._http import http_client
from kit._spoken import Spelling
from kit.notebook import relied
from kit.regress import migration

if TYPE_CHECKING:
    import pandas as pd

    from kit import Client

__all__ = [
    "PartnerCode",
    "Walks",
    "code_steps",
    "differences",
    "report",
    "side_by_side",
    "step_label",
    "walk",
    "walk_versions",
    "webhooks_side_by_side",
]

#: What a call not made under a version shows in the tables.
ABSENT = "—"


#: The partner's code: called as ``code(api, raw, account_id, payee_id)`` for its customer's
#: account ``account_id``: ``api`` is its kit client (pinned to a version), ``raw`` a plain httpx
#: client holding the partner token, for the paths 1.2.0 removed (the client has no method for
#: them); ``payee_id`` is another customer.
PartnerCode = Callable[["Client", httpx.Client, str, str], object]


#: The harness's own steps, as the tables name them.
CLIENT_TOKEN = "harness: the client's token"
SETUP = "harness: webhooks, two customers"
DOCUMENT_REQUEST = "harness: a document request (control plane)"


def step_label(line: str) -> str:
    """A line of code as a table names its step: without its comment, its call's arguments
    shortened to ``…`` but the literal keyword arguments, an assignment's target left out (a
    line that is no call, as it is)."""
    code = line.split("  #", 1)[0].strip()
    try:
        (statement,) = ast.parse(code).body
    except (SyntaxError, ValueError):
        return code
    node = statement.value if isinstance(statement, ast.Assign | ast.Expr) else statement

    if not isinstance(node, ast.Call):
        return code
    kept = [
        f"{k.arg}={ast.get_source_segment(code, k.value)}"
        for k in node.keywords
        if isinstance(k.value, ast.Constant)
    ]
    elided = ["…"] if node.args or len(kept) < len(node.keywords) else []
    return f"{ast.get_source_segment(code, node.func)}({', '.join([*elided, *kept])})"


def code_steps(code: PartnerCode) -> list[str]:
    """The steps of the partner's ``code`` that make a call whatever the server answers: each
    line calling the API (``api.…`` or ``raw.…``) as a table names its step
    (:func:`step_label`), in order, leaving out a fallback (a line under ``except``, run only
    where a call before it was refused)."""
    lines, _ = inspect.getsourcelines(code)
    tree = ast.parse("".join(lines))
    fallback = {
        n.lineno
        for handler in ast.walk(tree)
        if isinstance(handler, ast.ExceptHandler)
        for n in ast.walk(handler)
        if isinstance(n, ast.stmt)
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Expr | ast.Assign) or node.lineno in fallback:
            continue
        if isinstance(node.value, ast.Call) and ast.unparse(node.value.func).startswith(("api.", "raw.")):
            found.append((node.lineno, step_label(lines[node.lineno - 1])))
    return [label for _, label in sorted(found)]


class _Steps:
    """The step a call belongs to: the line of the partner's ``code`` running when it is made
    (found on the calling thread's stack: the response hooks run there), else ``phase``, the
    harness's step."""

    def __init__(self, code: PartnerCode) -> None:
        self.phase = CLIENT_TOKEN
        self._code = code.__code__  # type: ignore[attr-defined]
        lines, self._first = inspect.getsourcelines(code)
        self._lines = lines

    def __call__(self) -> str:
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code is self._code:
                return step_label(self._lines[frame.f_lineno - self._first])
            frame = frame.f_back  # type: ignore[assignment]
        return self.phase


def _onboard(client: Client, index: int) -> tuple[str, str]:
    """A customer onboarded as notebook 04 does: account, person, KYC; its account and person."""
    client.sessions.create("anonymous")
    account = client.accounts.create()
    client.sessions.promote("account", account_id=account.account_id)
    who = kit.notebook.persona(client, index)
    person = client.persons.create(account.account_id, **who.pii)
    questions = client.kyc.questions(person.person_id)
    answers = kit.notebook.kyc_answers(client, person.person_id, questions, who=who)
    client.kyc.answer(person.person_id, answers)
    client.sessions.promote("person", person_id=person.person_id)
    return account.account_id, person.person_id


def _noting(header: str) -> Callable[[httpx.Response], None]:
    """A response hook counting the register entries an answer's ``header`` (``svc-assumptions``
    in the client's dialect) names, for the notebook's closing table."""

    def hook(response: httpx.Response) -> None:
        relied.note(response.headers.get(header, "").split(","), relied.ANSWERS)

    return hook


def _event(delivery: Any, step: str) -> dict[str, Any]:
    """A webhook received, as the wire holds it, with the step that made the server send it."""
    return {"type": delivery.type, "deprecation": getattr(delivery, "deprecation", None), "step": step}


def walk(profile: Any, *, seed: int, version: str, code: PartnerCode) -> dict[str, Any]:
    """The partner's ``code`` under ``version`` on ``profile``'s server: its normalised wire
    (``{"version", "calls", "webhooks"}``), each call and webhook with its ``step``. The client
    takes its partner token where the version issues it (change 1). Webhooks are awaited only
    where the server can reach this machine: the card events the code's close sent, and where
    there is a control plane the document request's, which the harness opens through it (change
    6 names its event; a sandbox has no control plane, and that webhook is not compared there)."""
    api = kit.notebook.connect(profile, seed=seed, api_version=version, allow_deprecated=True)
    payee = kit.notebook.connect(profile, seed=seed, api_version=version)
    steps = _Steps(code)
    calls = migration.record(api, step=steps)
    token = api.token().token  # the client's own token request (change 1: where the version issues it)
    steps.phase = SETUP
    control = api.config.profile.control_plane
    hooks = api.webhooks.reachable
    dialect = api.config.dialect
    if hooks:
        api.webhooks.listen()  # subscribes to this version's event names (change 6)
    account_id, person_id = _onboard(api, 0)
    _, payee_id = _onboard(payee, 1)
    authorization, scheme = Spelling.of(dialect).bearer  # the partner token as the client sends it (A02)
    names = HeaderNames.of(dialect)
    headers = {
        names.api_version: version,
        authorization: f"{scheme} {token.reveal()}",
    }
    answered = [
        migration.response_hook(calls, step=steps, dialect=dialect),
        _noting(names.assumptions),
    ]
    config = api.config  # sent as the client's own calls are: its transport, its TLS files
    raw = http_client(
        str(config.base_url),
        transport=config.transport,
        tls=config.tls,
        headers=headers,
        event_hooks={"response": answered},
    )
    with raw, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the wire shows the Deprecation header
        code(api, raw, account_id, payee_id)
    events: list[dict[str, Any]] = []
    if hooks:  # what the code's card close sent, then the document request the harness opens
        subscribed = [name for name in api.webhooks.listen().events if not name.endswith("completed")]
        cards = [name for name in subscribed if name.startswith("card.")]
        closed = [c["step"] for c in calls if c["step"].startswith("api.cards.close(") and c["status"] < 400]
        events += [_event(api.webhooks.wait_for(name, timeout=10), closed[-1]) for name in cards if closed]
        if control:
            api.sim.create_document_request(person_id)
            others = [name for name in subscribed if name not in cards]
            events += [_event(api.webhooks.wait_for(name, timeout=10), DOCUMENT_REQUEST) for name in others]
    payee.close()
    api.close()
    wire: dict[str, Any] = migration.emit(version, calls, events)[migration.WIRE_MIME]
    return wire


class Walks(dict[str, dict[str, Any]]):
    """The wires :func:`walk_versions` walked, ``{version: wire}``, and ``why``: why the versions
    asked for and not walked were left out, in one sentence without its full stop (``""``: none
    was)."""

    why: str = ""


def walk_versions(
    profile: Any, *, seed: int, versions: Sequence[str], code: PartnerCode, only: str | None = None
) -> Walks:
    """:func:`walk` of the partner's ``code`` under each of ``versions`` the server serves (A27,
    :func:`kit.regress.migration.probe`), each from the same seeded start where there is a
    control plane: ``{version: wire}``. A version the server does not serve is left out, and a
    line says so: the server refuses it (it serves only the others), or answers a request for it
    under another version or none (it serves one version, or selects versions in a way the kit
    does not know). ``only`` (``kit regress --versions`` sets it: one version per run) walks that
    version alone and displays its wire for the report."""
    versions = [only] if only else list(versions)
    probe = kit.notebook.connect(profile, seed=seed)
    header = HeaderNames.of(probe.config.dialect).api_version
    config = probe.config
    probes = [
        migration.probe(str(config.base_url), v, header=header, transport=config.transport, tls=config.tls)
        for v in versions
    ]
    control = probe.config.profile.control_plane
    wires = Walks()
    for version in (p.version for p in probes if p.served):
        if control:
            probe.sim.reset(seed)
        wires[version] = walk(profile, seed=seed, version=version, code=code)
    probe.close()
    if only and only in wires:
        from IPython.display import display

        wire = wires[only]
        display(migration.emit(only, wire["calls"], wire["webhooks"]), raw=True)
    said = []
    if any(p.refused for p in probes):
        said.append(f"this server serves only {', '.join(wires) or 'neither version'} (A27)")
        print(
            f"This server serves only {', '.join(wires) or 'neither'} of {' and '.join(versions)}: "
            f"the {', '.join(p.version for p in probes if p.refused)} side is skipped."
        )
    for unknown in (p.why() for p in probes if not p.served and not p.refused):  # another version, or none
        said.append(unknown)
        print(f"{unknown[0].upper()}{unknown[1:]}.")
    wires.why = "; ".join(said)
    return wires


def differences(wires: Mapping[str, Mapping[str, Any]]) -> list[migration.Difference]:
    """:func:`kit.regress.migration.compare` of two walks (``{version: wire}``, the version
    before first), each register entry a difference names as the giver of a side
    (``before_by``, ``after_by``) counted in the notebook's closing table as what its report
    rests on (:func:`kit.notebook.relied.note`).

    Raises:
        ValueError: not two wires.
    """
    if len(wires) != 2:
        raise ValueError(f"two wires to compare, not {len(wires)}")
    before, after = wires.values()
    found = migration.compare(before, after)
    relied.note((e for d in found for e in (d.before_by, d.after_by) if e), relied.CHECKS)
    return found


def report(wires: Mapping[str, Mapping[str, Any]], *, cite: str | None = None) -> str:
    """The migration report of two walks as Markdown: ``kit regress --versions``' ``migration.md``
    without its preamble (:func:`kit.regress.migration.report_markdown`; ``cite``: each change
    quoted from the spec, its statement linked there), the entries it names counted as
    :func:`differences` counts them. Fewer than two walks: one sentence saying what was walked."""
    if len(wires) != 2:
        return f"Nothing to compare: only {', '.join(wires) or 'no version'} was walked.\n"
    found = differences(wires)
    return migration.report_markdown(list(wires), {"": found}, preamble=False, cite=cite)


def _answer(call: Mapping[str, Any] | None, other: Mapping[str, Any] | None = None) -> str:
    """``status code``, and where ``other`` answered with the same status, ``+ x`` for each
    header (with its value, where compared and short) and body field this answer has and
    ``other`` lacks."""
    if call is None:
        return ABSENT
    answer = f"{call['status']} {call['code'] or ''}".strip()
    if other is None or (other["status"], other["code"]) != (call["status"], call["code"]):
        return answer
    headers = call.get("headers", {})
    extra = [
        f"{k}: {migration.header_value(k, v)}" if v and len(v) <= 20 else k  # a long one (a Link): its name
        for k, v in headers.items()
        if other.get("headers", {}).get(k) != v
    ]
    extra += [f for f in call.get("fields", []) if f not in other.get("fields", [])]
    return " + ".join([answer, *extra])


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def side_by_side(wires: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The calls of each version's wire (``{version: wire}``) side by side: one row per call,
    named by its step (the line of the partner's code that made it, or the harness's step,
    ``, 2nd time`` where that line ran before) and its method and normalised path (the two
    levels of the index, unnamed), one column per
    version, each cell ``status code`` (``—``: not made under that version). With two versions
    the calls are paired as :func:`kit.regress.migration.compare` pairs them (by step) and only
    those whose answers differ are kept — in status, code, a compared header or a body field —
    each cell adding ``+ x`` for what that answer has and the other's lacks."""
    import pandas as pd

    versions = list(wires)
    paired: list[tuple[Any, ...]]  # (key, each version's call or None)
    if len(versions) == 2:
        paired = migration.pair_calls(wires[versions[0]]["calls"], wires[versions[1]]["calls"])
    else:
        keyed = [migration.keyed_calls(w["calls"]) for w in wires.values()]
        keys = list(dict.fromkeys(k for calls in keyed for k in calls))
        paired = [(key, *(calls.get(key) for calls in keyed)) for key in keys]
    rows = []
    for key, *answers in paired:
        others = answers[::-1] if len(answers) == 2 else [None] * len(answers)
        row = {v: _answer(a, o) for v, a, o in zip(versions, answers, others, strict=True)}
        if len(answers) == 2 and len(set(row.values())) == 1:
            continue
        step, method, path, n = key
        label = ", ".join(filter(None, [step, f"{_ordinal(n)} time" if n > 1 else ""]))
        rows.append({"step": label, "call": f"{method} {path}", **row})
    table = pd.DataFrame(rows or [{"step": ABSENT, "call": ABSENT, **dict.fromkeys(versions, ABSENT)}])
    table = table.set_index(["step", "call"])
    table.index.names = [None, None]  # each row reads as it is: a line of code, a call (and one line less)
    return table


def webhooks_side_by_side(wires: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The webhooks each version's run received: one row per step that made the server send
    them (the line of the partner's code, or the harness's step; ``""`` where the wire names
    none) and event type, the code's steps first, one column per version, each cell how many of
    that type it received (``+ Deprecation`` where one carried that header), ``—`` for none — so
    each version's names stand side by side."""
    import pandas as pd

    def key(hook: Mapping[str, Any]) -> tuple[str, str]:
        return str(hook.get("step") or ""), str(hook["type"])

    keys = sorted(
        {key(h) for w in wires.values() for h in w["webhooks"]},
        key=lambda k: (k[0].startswith("harness:"), k),
    )

    def cell(hooks: Sequence[Mapping[str, Any]], at: tuple[str, str]) -> str:
        got = [h for h in hooks if key(h) == at]
        deprecated = " + Deprecation" if any(h.get("deprecation") for h in got) else ""
        return f"{len(got)}{deprecated}" if got else ABSENT

    rows = {at: {v: cell(w["webhooks"], at) for v, w in wires.items()} for at in keys}
    table = pd.DataFrame.from_dict(rows or {(ABSENT, ABSENT): dict.fromkeys(wires, ABSENT)}, orient="index")
    table.index = pd.MultiIndex.from_tuples(list(table.index), names=[None, "event type"])
    return table
