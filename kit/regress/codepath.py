"""One partner's code path, walked under one API version: what notebook 12 compares.

:func:`partner_code_path` is the code a partner wrote for 1.1.0 — its own legacy token call,
cards, inbound events, the removed savings close and Refer a Friend, a P2P transfer — run
unchanged under the version its client pins (``svc-api-version``). Where a version refuses what
the other took it falls back as a migrating partner would. Each line that meets a change of
1.2.0 says which (``# change N``). Notebook 12 shows this function's source as it runs, so what
it shows cannot drift from what it runs.

:func:`walk` is the harness around it: it connects the clients, onboards two customers, starts
the webhook receiver where the API can reach it, records every answer normalised
(:func:`kit.regress.migration.record`) and returns the wire as :func:`kit.regress.migration.emit`
gives it, ready for :func:`kit.regress.migration.compare`. :func:`walk_versions` walks each
version a server serves, each from the same seeded start.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Any

import httpx

import kit.notebook
from kit.errors import ApiError
from kit.regress import migration

if TYPE_CHECKING:
    import pandas as pd

    from kit import Client

__all__ = ["partner_code_path", "side_by_side", "walk", "walk_versions", "webhooks_side_by_side"]

#: What a call not made under a version shows in the tables.
ABSENT = "—"


def partner_code_path(api: Client, raw: httpx.Client, account_id: str, payee_id: str) -> None:
    """The partner's calls for its customer's account ``account_id``: ``api`` is its kit client
    (pinned to a version), ``raw`` a plain httpx client holding the partner token, for the paths
    1.2.0 removed (the client has no method for them); ``payee_id`` is another customer."""
    with suppress(ApiError):  # a server that shuts deprecated endpoints answers 410
        api.legacy_token()  # change 1: the 1.1.0 code's own token request; deprecated in 1.2.0

    card = api.cards.create(account_id, type="physical")
    with suppress(ApiError):
        api.cards.create(account_id, type="temporary")  # change 3: a card type 1.2.0 added
    try:
        api.cards.close(card.card_id, reason="lost")  # change 2: a reason (1.2.0); change 6: card.closed
    except ApiError:
        api.cards.close(card.card_id)  # the 1.1.0 way: no reason
    for event_type in ("password.forgot", "login.failed"):  # change 4: the second is not among the eight
        with suppress(ApiError):
            api.events.send(account_id, event_type)

    raw.post(f"/accounts/{account_id}/savings/close")  # change 5: removed in 1.2.0
    raw.get(f"/accounts/{account_id}/referral_code")  # change 8: Refer a Friend removed in 1.2.0
    api.p2p.transfer(from_account_id=account_id, to_person_id=payee_id, amount="5.00")  # change 7


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


def walk(profile: Any, *, seed: int, version: str) -> dict[str, Any]:
    """:func:`partner_code_path` under ``version`` on ``profile``'s server: its normalised wire
    (``{"version", "calls", "webhooks"}``). The client takes its partner token where the version
    issues it (change 1). Webhooks are awaited only where the server can reach this machine and
    has a control plane (a document request is opened through it: change 6 names its event)."""
    api = kit.notebook.connect(profile, seed=seed, api_version=version, allow_deprecated=True)
    payee = kit.notebook.connect(profile, seed=seed, api_version=version)
    calls = migration.record(api)
    control = api.config.profile.control_plane
    hooks = api.webhooks.reachable
    if hooks:
        api.webhooks.listen()  # subscribes to this version's event names (change 6)
    account_id, person_id = _onboard(api, 0)
    _, payee_id = _onboard(payee, 1)
    headers = {"svc-api-version": version, "Authorization": f"Bearer {api.token().token.reveal()}"}
    with (
        httpx.Client(base_url=str(api.config.base_url), headers=headers,
                     event_hooks={"response": [migration.response_hook(calls)]}) as raw,
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore", DeprecationWarning)  # the wire shows the Deprecation header
        partner_code_path(api, raw, account_id, payee_id)
    events = []
    if hooks and control:
        api.sim.create_document_request(person_id)
        triggered = [name for name in api.webhooks.listen().events if not name.endswith("completed")]
        events = [api.webhooks.wait_for(name, timeout=10) for name in triggered]
    payee.close()
    api.close()
    wire: dict[str, Any] = migration.emit(version, calls, events)[migration.WIRE_MIME]
    return wire


def walk_versions(
    profile: Any, *, seed: int, versions: Sequence[str], only: str | None = None
) -> dict[str, dict[str, Any]]:
    """:func:`walk` under each of ``versions`` the server serves (A27), each from the same seeded
    start where there is a control plane: ``{version: wire}``. A version the server does not
    serve is left out, and a line says so. ``only`` (``kit regress --versions`` sets it: one
    version per run) walks that version alone and displays its wire for the report."""
    versions = [only] if only else list(versions)
    probe = kit.notebook.connect(profile, seed=seed)
    served = [v for v in versions if migration.serves(str(probe.config.base_url), v)]
    control = probe.config.profile.control_plane
    wires = {}
    for version in served:
        if control:
            probe.sim.reset(seed)
        wires[version] = walk(profile, seed=seed, version=version)
    probe.close()
    if only and only in wires:
        from IPython.display import display

        wire = wires[only]
        display(migration.emit(only, wire["calls"], wire["webhooks"]), raw=True)
    if len(served) < len(versions):
        print(f"This server serves only {', '.join(served) or 'neither'} of {' and '.join(versions)}: "
              f"the {', '.join(v for v in versions if v not in served)} side is skipped.")
    return wires


def _answer(call: Mapping[str, Any] | None, other: Mapping[str, Any] | None = None) -> str:
    """``status code``, and where ``other`` answered with the same status, ``+ x`` for each
    header (with its value, where compared) and body field this answer has and ``other`` lacks."""
    if call is None:
        return ABSENT
    answer = f"{call['status']} {call['code'] or ''}".strip()
    if other is None or (other["status"], other["code"]) != (call["status"], call["code"]):
        return answer
    headers = call.get("headers", {})
    extra = [
        f"{k}: {v}" if v and len(v) <= 20 else k  # a long value (a Link) by its name alone
        for k, v in headers.items()
        if other.get("headers", {}).get(k) != v
    ]
    extra += [f for f in call.get("fields", []) if f not in other.get("fields", [])]
    return " + ".join([answer, *extra])


def _keyed(wire: Mapping[str, Any]) -> dict[tuple[str, int], Mapping[str, Any]]:
    seen: dict[str, int] = {}
    keyed = {}
    for call in wire["calls"]:
        name = f"{call['method']} {call['path']}"
        seen[name] = seen.get(name, 0) + 1
        keyed[(name, seen[name])] = call
    return keyed


def side_by_side(wires: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The calls of each version's wire (``{version: wire}``) side by side: one row per call
    (method and normalised path, and ``n``, its n-th time in the run), one column per version,
    each cell ``status code`` (``—``: not made under that version). With two versions, only the
    calls whose answers differ — in status, code, a compared header or a body field, as
    :func:`kit.regress.migration.compare` compares them — and each cell adds ``+ x`` for what
    that answer has and the other's lacks."""
    import pandas as pd

    keyed = {version: _keyed(wire) for version, wire in wires.items()}
    keys = list(dict.fromkeys(k for calls in keyed.values() for k in calls))
    rows = []
    for key in keys:
        answers = [calls.get(key) for calls in keyed.values()]
        other = answers[::-1] if len(answers) == 2 else [None] * len(answers)
        row = {v: _answer(a, o) for v, a, o in zip(keyed, answers, other, strict=True)}
        if len(answers) != 2 or len(set(row.values())) > 1:
            rows.append({"call": key[0], "n": key[1], **row})
    table = pd.DataFrame(rows or [{"call": ABSENT, "n": 0, **dict.fromkeys(wires, ABSENT)}])
    return table.set_index(["call", "n"])


def webhooks_side_by_side(wires: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The webhook types each version's run received, one column per version."""
    import pandas as pd

    received = {v: sorted(h["type"] for h in w["webhooks"]) for v, w in wires.items()}
    return pd.DataFrame({v: pd.Series(types, dtype=object) for v, types in received.items()}).fillna(ABSENT)
