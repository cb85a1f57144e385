"""One partner's code path, walked under one API version: what notebook 12 compares.

:func:`partner_code_path` is the code a partner wrote for 1.1.0 — a token, two customers
onboarded, cards, inbound events, the removed savings close and Refer a Friend, a document
request, P2P and the webhooks it receives — run unchanged under the version a client pins
(``svc-api-version``). Where a version refuses what the other took it falls back as a migrating
partner would. Its wire is recorded normalised (:func:`kit.regress.migration.record`) and
returned as :func:`kit.regress.migration.emit` gives it, ready for
:func:`kit.regress.migration.compare`.

Two calls go around the client: the deprecated token endpoint (to record its headers under
each version) and the paths 1.2.0 removed, which the client has no method for. The partner's
credentials for them are read here from the client's configuration, never shown.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

import httpx

import kit.notebook
from kit.errors import ApiError
from kit.regress import migration

__all__ = ["LEGACY_TOKEN_PATH", "partner_code_path"]

LEGACY_TOKEN_PATH = "/authorization/server_api/access_tokens"


def partner_code_path(profile: Any, *, seed: int, version: str) -> dict[str, Any]:
    """One partner's calls under ``version`` on ``profile``'s server: its normalised wire
    (``{"version", "calls", "webhooks"}``). Webhooks are awaited only where the server can
    reach this machine and has a control plane (a document request is opened through it)."""
    api = kit.notebook.connect(profile, seed=seed, api_version=version)
    b = kit.notebook.connect(profile, seed=seed, api_version=version)
    calls = migration.record(api)
    api.token()  # change 1: where this version issues it
    raw = httpx.Client(
        base_url=str(api.config.base_url),
        event_hooks={"response": [migration.response_hook(calls)]},
        headers={"svc-api-version": version},
    )
    secret = api.config.client_secret
    raw.post(LEGACY_TOKEN_PATH, data={"grant_type": "client_credentials"},
             auth=(api.config.client_id, secret.reveal() if secret is not None else ""))
    control = api.config.profile.control_plane  # the simulator's /_sim (a sandbox has none)
    hooks = api.config.profile.reaches_receiver(api.config.base_url)  # can webhooks reach us here?
    if hooks:
        api.webhooks.listen()  # subscribes to this version's event names
    people = []
    for client, index in ((api, 0), (b, 1)):
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
        api.cards.create(account_id, type="temporary")  # change 3
    try:
        api.cards.close(card.card_id, reason="lost")  # change 2
    except ApiError:
        api.cards.close(card.card_id)  # the 1.1.0 way: no reason
    for event_type in ("password.forgot", "login.failed"):  # change 4: the second is not among the eight
        with suppress(ApiError):
            api.events.send(account_id, event_type)
    bearer = {"Authorization": f"Bearer {api.token().token.reveal()}"}  # the partner token
    raw.post(f"/accounts/{account_id}/savings/close", headers=bearer)  # change 5
    raw.get(f"/accounts/{account_id}/referral_code", headers=bearer)  # change 8
    if control:
        api.sim.create_document_request(person_id)  # change 6: this version names the event
    sent = api.p2p.transfer(from_account_id=account_id, to_person_id=people[1][1], amount="5.00")  # change 7
    b.p2p.get(sent.transfer_id)
    events = []
    if hooks and control:
        triggered = [name for name in api.webhooks.listen().events if not name.endswith("completed")]
        events = [api.webhooks.wait_for(name, timeout=10) for name in triggered]
    raw.close()
    b.close()
    api.close()
    wire: dict[str, Any] = migration.emit(version, calls, events)[migration.WIRE_MIME]
    return wire
