"""One partner's code path, walked under one API version: what notebook 12 compares.

:func:`partner_code_path` is the code a partner wrote for 1.1.0 — a token, two customers
onboarded, cards, inbound events, the removed savings close and Refer a Friend, a document
request, P2P and the webhooks it receives — run unchanged under the version a client pins
(``svc-api-version``). Where a version refuses what the other took it falls back as a migrating
partner would. Each line that meets a change of 1.2.0 says which (``# change N``). Notebook 12
shows this function's source as it runs, so what it shows cannot drift from what it runs.

Its wire is recorded normalised (:func:`kit.regress.migration.record`) and returned as
:func:`kit.regress.migration.emit` gives it, ready for :func:`kit.regress.migration.compare`.
The paths 1.2.0 removed have no client method: they are called with a plain ``httpx`` client,
the partner token in the header the partner's 1.1.0 code sent.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from contextlib import suppress
from typing import TYPE_CHECKING, Any

import httpx

import kit.notebook
from kit.errors import ApiError
from kit.regress import migration

if TYPE_CHECKING:
    import pandas as pd

    from kit.regress.attribution import Difference

__all__ = ["by_change", "partner_code_path", "side_by_side", "webhooks_side_by_side"]

#: What a call not made under a version shows in the tables.
ABSENT = "—"


def partner_code_path(profile: Any, *, seed: int, version: str) -> dict[str, Any]:
    """One partner's calls under ``version`` on ``profile``'s server: its normalised wire
    (``{"version", "calls", "webhooks"}``). Webhooks are awaited only where the server can
    reach this machine and has a control plane (a document request is opened through it)."""
    api = kit.notebook.connect(profile, seed=seed, api_version=version, allow_deprecated=True)
    b = kit.notebook.connect(profile, seed=seed, api_version=version)
    calls = migration.record(api)  # every answer, normalised: the wire compared across versions

    api.token()  # change 1: the client asks where this version issues it (1.2.0: /oauth/accesstoken)
    # change 1: the 1.1.0 code's own call to the legacy token endpoint, made under each version to
    # record what it meets; under 1.2.0 it is deprecated ("must not be used"): drop it
    with warnings.catch_warnings(), suppress(ApiError):
        warnings.simplefilter("ignore", DeprecationWarning)  # the report shows its Deprecation header
        api.legacy_token()

    control = api.config.profile.control_plane  # the simulator's /_sim (a sandbox has none)
    hooks = api.webhooks.reachable  # can the API deliver to this machine's loopback receiver?
    if hooks:
        api.webhooks.listen()  # change 6: subscribes to this version's event names
    people = []
    for client, index in ((api, 0), (b, 1)):  # two customers, onboarded alike under both versions
        client.sessions.create("anonymous")
        account = client.accounts.create()
        client.sessions.promote("account", account_id=account.account_id)
        who = kit.notebook.persona(client, index)
        person = client.persons.create(account.account_id, **who.pii)
        questions = client.kyc.questions(person.person_id)
        answers = kit.notebook.kyc_answers(client, person.person_id, questions, who=who)
        client.kyc.answer(person.person_id, answers)
        client.sessions.promote("person", person_id=person.person_id)
        people.append((account.account_id, person.person_id))
    account_id, person_id = people[0]

    card = api.cards.create(account_id, type="physical")
    with suppress(ApiError):
        api.cards.create(account_id, type="temporary")  # change 3: a 1.2.0 card type
    try:
        api.cards.close(card.card_id, reason="lost")  # change 2: a close reason (1.2.0)
    except ApiError:
        api.cards.close(card.card_id)  # the 1.1.0 way: no reason
    for event_type in ("password.forgot", "login.failed"):  # change 4: the second is not among the eight
        with suppress(ApiError):
            api.events.send(account_id, event_type)

    bearer = {"Authorization": f"Bearer {api.token().token.reveal()}"}  # the partner token
    with httpx.Client(base_url=str(api.config.base_url), headers={"svc-api-version": version},
                      event_hooks={"response": [migration.response_hook(calls)]}) as raw:
        raw.post(f"/accounts/{account_id}/savings/close", headers=bearer)  # change 5: removed in 1.2.0
        raw.get(f"/accounts/{account_id}/referral_code", headers=bearer)  # change 8: Refer a Friend removed

    if control:
        api.sim.create_document_request(person_id)  # change 6: this version names the event
    sent = api.p2p.transfer(from_account_id=account_id, to_person_id=people[1][1], amount="5.00")  # change 7
    b.p2p.get(sent.transfer_id)
    events = []
    if hooks and control:
        triggered = [name for name in api.webhooks.listen().events if not name.endswith("completed")]
        events = [api.webhooks.wait_for(name, timeout=10) for name in triggered]
    b.close()
    api.close()
    wire: dict[str, Any] = migration.emit(version, calls, events)[migration.WIRE_MIME]
    return wire


def _answer(call: Mapping[str, Any] | None) -> str:
    return f"{call['status']} {call['code'] or ''}".strip() if call else ABSENT


def side_by_side(wires: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The calls of each version's wire (``{version: wire}``) side by side: one row per call
    (method and normalised path, and ``n``, its n-th time in the run), one column per version,
    each cell ``status code`` or ``—`` where the call was not made under that version. With
    two versions, only the rows whose answers differ: the rest answer alike under both."""
    import pandas as pd

    rows = []
    for version, wire in wires.items():
        seen: dict[str, int] = {}
        for call in wire["calls"]:
            name = f"{call['method']} {call['path']}"
            seen[name] = seen.get(name, 0) + 1
            rows.append({"call": name, "n": seen[name], version: _answer(call)})
    table = pd.DataFrame(rows or [{"call": ABSENT, "n": 0}]).groupby(["call", "n"], sort=False).first()
    table = table.fillna(ABSENT)
    if len(wires) == 2:
        before, after = list(wires)
        table = table[table[before] != table[after]]
    return table


def webhooks_side_by_side(wires: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The webhook types each version's run received, one column per version."""
    import pandas as pd

    received = {v: sorted(h["type"] for h in w["webhooks"]) for v, w in wires.items()}
    return pd.DataFrame({v: pd.Series(types, dtype=object) for v, types in received.items()}).fillna(ABSENT)


def by_change(differences: Iterable[Difference], before: str = "1.1.0") -> pd.DataFrame:
    """The differences grouped by the change of 1.2.0 they belong to and what explains them:
    ``the spec`` (its change list), ``simulated <before> (A..)`` (what ``before`` did is the
    kit's reconstruction, a register entry) or ``unexplained``; how many, and where."""
    import pandas as pd

    def explained(d: Difference) -> str:
        if d.change is None:
            return "unexplained"
        return f"simulated {before} ({d.basis})" if d.chosen else "the spec"

    rows = [
        {"change": d.change or "unexplained", "explained by": explained(d), "where": d.where}
        for d in differences
    ]
    table = pd.DataFrame(rows or [{"change": ABSENT, "explained by": ABSENT, "where": ABSENT}])
    return table.groupby(["change", "explained by"]).agg(
        differences=("where", "size"), where=("where", lambda s: ", ".join(dict.fromkeys(s)))
    )
