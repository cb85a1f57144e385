"""Sessions and the onboarding journey over raw HTTP (the one raw-HTTP journey of the tests),
and what an established customer does with it: P2P transfers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.sim.helpers.contract import PARTNER_A
from tests.sim.helpers.control import kyc_answers, personas
from tests.sim.helpers.encryption import Device, encrypt_for_server
from tests.sim.helpers.resources import create_account, create_person, kyc_questions, pii_of, send_answers
from tests.sim.helpers.wire import call, init_data, money, partner_token

# --- sessions ------------------------------------------------------------------------------


def create_session(
    http: httpx.Client,
    token: str,
    device: Device | None,
    session_type: Any = "anonymous",
    strategy: Any = "fixed",
    *,
    current: str | None = None,
    account_id: str | None = None,
    person_id: str | None = None,
    init: dict[str, Any] | None = None,
    alg: str = "RSA-OAEP-256",
    idem: str | None = None,
    plaintext: dict[str, Any] | None = None,
    encrypted_data: str | None = None,
) -> httpx.Response:
    """``POST /sessions`` (register A05); fetches fresh init data (a new nonce) unless given.

    ``encrypted_data`` is sent as given when given (no ``device`` needed then).
    """
    if encrypted_data is None:
        assert device is not None, "a device, or the encrypted_data to send"
        if init is None:
            init = init_data(http, token)
        if plaintext is None:
            plaintext = device.plaintext(init["nonce"], account_id=account_id, person_id=person_id)
        encrypted_data = encrypt_for_server(init, plaintext, alg)
    body = {
        "session_type": session_type,
        "expiration_strategy": strategy,
        "encrypted_data": encrypted_data,
    }
    return call(http, "POST", "/sessions", token=token, session=current, idem=idem, json_body=body)


def session_token_of(resp: httpx.Response, device: Device) -> str:
    body = resp.json()
    if "encrypted_session_token" in body:
        return device.decrypt(body["encrypted_session_token"])["session_token"]
    return body["session_token"]


def new_session(
    http: httpx.Client,
    token: str,
    device: Device,
    session_type: str = "anonymous",
    strategy: str = "fixed",
    **kw: Any,
) -> str:
    resp = create_session(http, token, device, session_type, strategy, **kw)
    assert resp.status_code == 201, resp.text
    return session_token_of(resp, device)


# --- the journey ---------------------------------------------------------------------------


@dataclass
class Journey:
    """A device taken as far as an established person with a person session."""

    token: str
    device: Device
    persona: dict[str, Any]
    anonymous: str
    account_id: str
    account_session: str
    person_id: str | None = None
    person_session: str | None = None
    questions: list[dict[str, Any]] = field(default_factory=list)


def journey(
    http: httpx.Client,
    *,
    persona_index: int = 0,
    token: str | None = None,
    partner: tuple[str, str] = PARTNER_A,
    device: Device | None = None,
    strategy: str = "fixed",
    until: str = "person",
) -> Journey:
    """token → anonymous session → account → account session → person → KYC → person session.

    ``until``: ``"account"`` (stop with an account session), ``"pending"`` (person created,
    KYC pending), ``"person"`` (established, promoted to a person session).
    """
    token = token or partner_token(http, *partner)
    persona = personas(http)[persona_index]
    device = device or Device.for_persona(persona)
    anonymous = new_session(http, token, device, "anonymous", strategy)
    account = create_account(http, token, anonymous)
    account_id = account["account_id"]
    account_session = new_session(
        http, token, device, "account", strategy, current=anonymous, account_id=account_id
    )
    j = Journey(token, device, persona, anonymous, account_id, account_session)
    if until == "account":
        return j
    resp = create_person(http, token, account_session, account_id, pii_of(persona))
    assert resp.status_code == 201, resp.text
    j.person_id = resp.json()["person_id"]
    j.questions = kyc_questions(http, token, account_session, j.person_id, device)
    if until == "pending":
        return j
    resp = send_answers(http, token, account_session, j.person_id, kyc_answers(http, j.person_id))
    assert resp.status_code == 200 and resp.json()["status"] == "established", resp.text
    j.person_session = new_session(
        http, token, device, "person", strategy, current=account_session, person_id=j.person_id
    )
    return j


# --- P2P transfers -------------------------------------------------------------------------

#: "The sender's own": its person session, or an amount of ``money(value, currency)``.
OWN: Any = object()


def p2p_transfer(
    http: httpx.Client,
    sender: Journey | None,
    to_person_id: str,
    value: str = "1.00",
    currency: str = "USD",
    *,
    idem: str | None = None,
    memo: Any = None,
    amount: Any = OWN,
    token: str | None = None,
    session: str | None = OWN,
    from_account_id: str | None = None,
) -> httpx.Response:
    """``POST /p2p/transfers`` of ``value`` from ``sender``'s account to ``to_person_id``.

    The sender's token and person session are sent unless ``token`` / ``session`` say
    otherwise (``session=None``: no session); ``amount`` replaces the whole amount object
    (wrong shapes), ``memo`` is left out when None. Without ``sender``, ``token`` and
    ``from_account_id`` say everything.
    """
    body: dict[str, Any] = {
        "from_account_id": from_account_id or (sender and sender.account_id),
        "to_person_id": to_person_id,
        "amount": money(value, currency) if amount is OWN else amount,
    }
    if memo is not None:
        body["memo"] = memo
    if session is OWN:
        session = sender.person_session if sender else None
    token = token or (sender.token if sender else None)
    return call(http, "POST", "/p2p/transfers", token=token, session=session, idem=idem, json_body=body)
