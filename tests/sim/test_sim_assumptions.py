"""``svc-assumptions`` names the register entries of the path actually taken (issue 13).

One row per route × outcome: a request, the status and code it must get, and the exact set of
register ids its ``svc-assumptions`` must name — every error of the order of checks and the
success paths. The rule (kit/sim/pipeline.py, docs/contract.md): A02 whenever the partner token
is checked; a valid session's lifetime A06; the session an endpoint needs A43; the binding of a
session A31; the JWE rules A04; the route's body shape; a refusal's own entries; A21 on every
error body. Each row is written out by hand, so a step that forgets its entry, or names one it
did not rely on, fails its row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.sim.helpers.control import add_fault, advance, kyc_answers, open_document_request
from tests.sim.helpers.encryption import Device
from tests.sim.helpers.journeys import Journey, create_session, journey, new_session, p2p_transfer
from tests.sim.helpers.resources import (
    create_card,
    create_person,
    pii_of,
    send_answers,
    submit_document,
    wrong_answers,
)
from tests.sim.helpers.webhooks import subscription_request
from tests.sim.helpers.wire import basic_auth, call, init_data, partner_token, post_raw

JWE = "a.b.c.d.e"  # refused by decryption (step 11) whenever a case gets that far
SESSION = {"session_type": "anonymous", "expiration_strategy": "fixed", "encrypted_data": JWE}
GRANT = {"grant_type": "client_credentials"}
HOOK = "http://127.0.0.1:9/h"


@dataclass
class World:
    """A fresh simulator (seed 7) with two established customers and a card of the first."""

    http: httpx.Client
    token: str
    a: Journey
    b: Journey
    card: str


@pytest.fixture
def world(http: httpx.Client) -> World:
    token = partner_token(http)
    a = journey(http, token=token)
    b = journey(http, token=token, persona_index=1)
    return World(http, token, a, b, create_card(http, token, a.account_id)["card_id"])


@dataclass(frozen=True)
class Req:
    """A request described by data: ``path`` is formatted with ``w`` (the world); ``session``
    names a world attribute (``"a.person_session"``) or a maker (``"new-anonymous"``)."""

    method: str
    path: str
    body: Any = None
    session: str | None = None
    token: str | None = "partner"  # "partner": the world's token; None: no Authorization header
    idem: str | None = None

    def __call__(self, w: World) -> httpx.Response:
        token = w.token if self.token == "partner" else self.token
        session = _session(w, self.session)
        path = self.path.format(w=w)
        return call(
            w.http, self.method, path, token=token, session=session, idem=self.idem, json_body=self.body
        )


def _session(w: World, name: str | None) -> str | None:
    if name is None or name.startswith("ses_"):
        return name
    if name == "new-anonymous":
        return new_session(w.http, w.token, Device())
    if name == "new-account":  # a's device is bound to its account: a direct account session
        return new_session(w.http, w.token, w.a.device, "account", account_id=w.a.account_id)
    if name == "expired":  # past the fixed lifetime (30 min)
        advance(w.http, 1801)
        return w.a.person_session
    who, attribute = name.split(".")
    return str(getattr(getattr(w, who), attribute))


def _twice(first: Req, second: Req) -> Callable[[World], httpx.Response]:
    return lambda w: (first(w), second(w))[1]


# --- requests that need more than one call -------------------------------------------------------


def _basic(path: str, **form: str) -> Callable[[World], httpx.Response]:
    return lambda w: w.http.post(path, data={**GRANT, **form}, headers={"Authorization": basic_auth()})


def _session_with(change: Callable[[dict[str, Any]], None]) -> Callable[[World], httpx.Response]:
    """``POST /sessions`` (anonymous) whose plaintext ``change`` has altered."""

    def send(w: World) -> httpx.Response:
        init = init_data(w.http, w.token)
        device = Device()
        plaintext = device.plaintext(init["nonce"])
        change(plaintext)
        return create_session(w.http, w.token, device, init=init, plaintext=plaintext)

    return send


def _nonce_reused(w: World) -> httpx.Response:
    init, device = init_data(w.http, w.token), Device()
    assert create_session(w.http, w.token, device, init=init).status_code == 201
    return create_session(w.http, w.token, device, init=init)


def _rate_limited(w: World) -> httpx.Response:
    device = Device()
    for _ in range(30):
        new_session(w.http, w.token, device)
    return create_session(w.http, w.token, device)


def _fresh_account(w: World) -> tuple[Device, str, str]:
    """A new device's anonymous session and the account it created."""
    device = Device()
    anonymous = new_session(w.http, w.token, device)
    return (
        device,
        anonymous,
        Req("POST", "/accounts", {"product": "spending"}, anonymous)(w).json()["account_id"],
    )


def _promotion(w: World) -> httpx.Response:
    device, anonymous, account_id = _fresh_account(w)
    return create_session(w.http, w.token, device, "account", current=anonymous, account_id=account_id)


def _anonymous_person(w: World) -> httpx.Response:
    _, anonymous, account_id = _fresh_account(w)
    return create_person(w.http, w.token, anonymous, account_id, pii_of(w.a.persona))


def _person(session: str, account: str = "a.account_id") -> Callable[[World], httpx.Response]:
    return lambda w: create_person(w.http, w.token, _session(w, session), _session(w, account) or "",
                                   pii_of(w.b.persona))  # fmt: skip


def _locked(w: World) -> httpx.Response:
    j = journey(w.http, token=w.token, persona_index=2, until="pending")
    wrong = wrong_answers(j.questions, kyc_answers(w.http, j.person_id or ""))
    for _ in range(4):
        resp = send_answers(w.http, w.token, j.account_session, j.person_id or "", wrong)
    return resp


def _expired_card_closed(w: World) -> httpx.Response:
    card = create_card(w.http, w.token, w.a.account_id, "temporary")["card_id"]
    advance(w.http, 31 * 86400)
    return call(
        w.http, "POST", f"/cards/{card}/close", token=partner_token(w.http), json_body={"reason": "lost"}
    )


def _transfer(value: str = "5.00", to: str = "b", **kw: Any) -> Callable[[World], httpx.Response]:
    def send(w: World) -> httpx.Response:
        if isinstance(kw.get("session"), str):
            kw["session"] = _session(w, kw["session"])
        return p2p_transfer(w.http, w.a, getattr(w, to).person_id or "", value, **kw)

    return send


def _read_transfer(w: World) -> httpx.Response:
    transfer_id = _transfer(idem="t-0")(w).json()["transfer_id"]
    return call(w.http, "GET", f"/p2p/transfers/{transfer_id}", token=w.token, session=w.b.person_session)


def _submit(twice: bool = False) -> Callable[[World], httpx.Response]:
    def send(w: World) -> httpx.Response:
        doc = open_document_request(w.http, w.a.person_id or "")
        resp = submit_document(w.http, w.token, w.a.person_session, doc, {"kind": "utility bill"})
        return submit_document(w.http, w.token, w.a.person_session, doc, {"kind": "x"}) if twice else resp

    return send


def _faulted(w: World) -> httpx.Response:
    add_fault(w.http, method="GET", path="/cards/{card_id}", status=503, rate=1.0, when="before_commit")
    return Req("GET", "/cards/{w.card}")(w)


def _replayed(w: World) -> httpx.Response:
    card = Req("POST", "/accounts/{w.a.account_id}/cards", {"type": "virtual"}, idem="replay-1")
    first, again = card(w), card(w)
    assert again.headers["idempotent-replayed"] == "true"
    assert again.headers["svc-assumptions"] == first.headers["svc-assumptions"]
    return again


def _subscribe(url: str, *events: str) -> Callable[[World], httpx.Response]:
    return lambda w: subscription_request(w.http, w.token, url, list(events))


# --- the table ------------------------------------------------------------------------------------

CARDS = "/accounts/{w.a.account_id}/cards"
CLOSE = "/cards/{w.card}/close"
EVENTS = "/accounts/{w.a.account_id}/events"
PERSONS = "/accounts/{w.a.account_id}/persons"
TOKEN_ERROR = "invalid-partner-token"
A_PERSON = "a.person_session"
Send = Callable[[World], httpx.Response]
# (case id, request, status, code or None, the exact ids)
# fmt: off
CASES: list[tuple[str, Send, int, str | None, str]] = [
    # partner level
    ("token", _basic("/oauth/accesstoken"), 200, None, "A01"),
    ("token-invalid-scope", _basic("/oauth/accesstoken", scope="admin"), 400, None, "A01,A21"),
    ("token-pii", _basic("/oauth/accesstoken", date_of_birth="1950-03-14"), 400, None, "A01,A11,A21"),
    ("legacy-token", _basic("/authorization/server_api/access_tokens"), 200, None, "A01,A03"),
    ("legacy-revoke", lambda w: call(w.http, "DELETE", "/authorization/server_api/access_tokens",
                                     token=partner_token(w.http)), 204, None, "A02,A03"),
    ("legacy-revoke-no-token", Req("DELETE", "/authorization/server_api/access_tokens", token=None), 401,
     TOKEN_ERROR, "A02,A03,A21"),
    # step 1: route
    ("removed", Req("POST", "/accounts/acc_1/savings/close", token=None), 404, "endpoint-removed", "A21,A29"),
    ("no-such-path", Req("GET", "/nowhere"), 404, "not-found", "A21,A44"),
    ("method-not-allowed", Req("PUT", "/sessions"), 405, "method-not-allowed", "A21,A44"),
    # step 2: partner token
    ("init-data", Req("GET", "/sessions/user_session_initialization_data"), 200, None, "A02,A04"),
    ("no-token", Req("GET", "/sessions/user_session_initialization_data", token=None), 401, TOKEN_ERROR,
     "A02,A21"),
    ("unknown-token", Req("GET", "/cards/{w.card}", token="nope"), 401, TOKEN_ERROR, "A02,A21"),
    ("basic-scheme", lambda w: w.http.get(f"/cards/{w.card}", headers={"Authorization": basic_auth()}), 401,
     TOKEN_ERROR, "A02,A21"),
    # step 3: body parsing and size
    ("malformed-json", lambda w: post_raw(w.http, "/sessions", b"{", token=w.token), 400, "malformed-json",
     "A02,A21,A22"),
    ("not-json", lambda w: post_raw(w.http, "/sessions", b"a=1", "text/plain", token=w.token), 415,
     "unsupported-media-type", "A02,A21,A22"),
    ("too-large", lambda w: post_raw(w.http, "/sessions", b'{"a":"' + b"x" * 70_000 + b'"}', token=w.token),
     413, "payload-too-large", "A02,A21,A22"),
    # step 4: idempotency; injected faults
    ("idempotency-key-invalid", Req("POST", CARDS, {"type": "virtual"}, idem="k" * 256), 400,
     "idempotency-key-invalid", "A02,A20,A21"),
    ("idempotency-key-reused", _twice(Req("POST", CARDS, {"type": "virtual"}, idem="k1"),
                                      Req("POST", CARDS, {"type": "physical"}, idem="k1")), 422,
     "idempotency-key-reused", "A02,A20,A21"),
    ("idempotent-replay", _replayed, 201, None, "A02,A13,A14,A20,A31,A35"),
    ("p2p-without-key", _transfer(), 400, "idempotency-key-required", "A02,A20,A21"),
    ("injected-fault", _faulted, 503, "injected-fault", "A02,A21,A45"),
    # step 5: session validity
    ("expired-session-on-a-card-route", Req("GET", "/cards/{w.card}", session="expired"), 401,
     "session-expired", "A02,A06,A21"),
    ("superseded-session", Req("POST", "/accounts", {"product": "spending"}, "a.anonymous"), 401,
     "session-superseded", "A02,A07,A21"),
    ("unknown-session", Req("GET", "/cards/{w.card}", session="ses_unknown"), 401, "invalid-session",
     "A02,A21,A30,A34"),
    # step 6: session type
    ("account-without-session", Req("POST", "/accounts", {"product": "spending"}), 401, "session-required",
     "A02,A21,A43"),
    ("account-with-person-session", Req("POST", "/accounts", {"product": "spending"}, A_PERSON),
     403, "session-type-not-allowed", "A02,A06,A21,A43"),
    ("p2p-with-account-session", _transfer(idem="t-2", session="new-account"), 403,
     "session-type-not-allowed", "A02,A06,A20,A21,A43"),
    # step 7: the resource exists
    ("card-not-found", Req("GET", "/cards/card_nope"), 404, "card-not-found", "A02,A21,A30,A35"),
    ("account-not-found", Req("POST", "/accounts/acc_nope/persons", {"encrypted_pii": JWE}, A_PERSON),
     404, "account-not-found", "A02,A06,A10,A21,A30,A43"),
    ("person-not-found", Req("GET", "/persons/per_nope/kyc/questions", session=A_PERSON), 404,
     "person-not-found", "A02,A06,A11,A21,A30,A43"),
    ("transfer-not-found", Req("GET", "/p2p/transfers/p2p_nope", session=A_PERSON), 404,
     "transfer-not-found", "A02,A06,A18,A21,A30,A43"),
    ("document-request-not-found", Req("POST", "/document_requests/doc_nope/submit",
                                       {"encrypted_document": JWE}, A_PERSON), 404,
     "document-request-not-found", "A02,A06,A21,A26,A30,A43"),
    # step 8: the session is bound to it
    ("card-with-another-customers-session", Req("GET", "/cards/{w.card}", session="b.person_session"), 403,
     "session-not-bound", "A02,A06,A21,A31"),
    ("person-by-another-devices-anonymous-session", _person("new-anonymous"), 403, "session-not-bound",
     "A02,A06,A21,A31,A42,A43"),
    # step 9: clear-text PII
    ("pii-in-an-event", Req("POST", EVENTS, {"event_type": "password.forgot", "details": {"dateOfBirth": 1}}),
     422, "pii-must-be-encrypted", "A02,A11,A21,A31"),
    ("pii-in-a-session-request", Req("POST", "/sessions", {"birth_date": "x"}), 422, "pii-must-be-encrypted",
     "A02,A11,A21"),
    # step 10: schema
    ("unknown-field", Req("POST", "/sessions", {"colour": "red"}), 422, "unknown-field",
     "A02,A05,A06,A21,A22"),
    ("unknown-session-type", Req("POST", "/sessions", {**SESSION, "session_type": "guest"}), 422,
     "unknown-session-type", "A02,A05,A06,A21"),
    ("unknown-product", Req("POST", "/accounts", {"product": "savings"}, "new-anonymous"), 422,
     "unknown-product", "A02,A06,A10,A21,A43"),
    ("unknown-card-type", Req("POST", CARDS, {"type": "gold"}), 422, "unknown-card-type",
     "A02,A13,A21,A31,A35"),
    ("unknown-close-reason", Req("POST", CLOSE, {"reason": "bored"}), 422, "unknown-close-reason",
     "A02,A15,A21,A31"),
    ("unknown-event-type", Req("POST", EVENTS, {"event_type": "x.y"}), 422, "unknown-event-type",
     "A02,A17,A21,A31"),
    # step 11: decryption
    ("invalid-encrypted-data", Req("POST", "/sessions", SESSION), 400, "invalid-encrypted-data",
     "A02,A04,A05,A06,A21"),
    ("nonce-invalid", _nonce_reused, 400, "nonce-invalid", "A02,A04,A05,A06,A21"),
    ("invalid-device-key", _session_with(lambda p: p.update(device_jwks={"keys": []})), 400,
     "invalid-device-key", "A02,A04,A05,A06,A09,A21"),
    # step 12: the plaintext's schema
    ("unknown-platform", _session_with(lambda p: p["device"].update(platform="symbian")), 422,
     "unknown-platform", "A02,A04,A05,A06,A09,A21"),
    # step 13: state
    ("invalid-session-transition", lambda w: create_session(w.http, w.token, Device(), "person",
                                                            current=_session(w, "new-anonymous"),
                                                            person_id=w.a.person_id), 409,
     "invalid-session-transition", "A02,A04,A05,A06,A07,A09,A21"),
    ("device-not-recognized", lambda w: create_session(w.http, w.token, Device(), "account",
                                                       account_id=w.a.account_id), 403,
     "device-not-recognized", "A02,A04,A05,A06,A08,A09,A21"),
    ("rate-limited", _rate_limited, 429, "rate-limited", "A02,A04,A05,A06,A09,A21,A32"),
    ("card-already-closed", _twice(Req("POST", CLOSE), Req("POST", CLOSE)), 409, "card-already-closed",
     "A02,A15,A16,A21,A31"),
    ("card-not-active", _expired_card_closed, 409, "card-not-active", "A02,A14,A15,A16,A21,A31"),
    ("kyc-locked", _locked, 409, "kyc-locked", "A02,A04,A06,A12,A21,A31,A43"),
    ("document-request-not-open", _submit(twice=True), 409, "document-request-not-open",
     "A02,A04,A06,A21,A26,A31,A43"),
    # step 14: business rules
    ("invalid-amount", _transfer("0", idem="t-3"), 422, "invalid-amount",
     "A02,A06,A19,A20,A21,A31,A36,A37,A43"),
    ("insufficient-funds", _transfer("100000.00", idem="t-4"), 422, "insufficient-funds",
     "A02,A06,A20,A21,A31,A36,A37,A43"),
    ("self-transfer", _transfer(to="a", idem="t-5"), 422, "self-transfer", "A02,A06,A20,A21,A31,A36,A37,A43"),
    ("event-renamed", _subscribe(HOOK, "person.document_request.created"), 422, "event-renamed",
     "A02,A21,A23"),
    ("other-webhook-event", _subscribe(HOOK, "card.lost"), 422, "unknown-event-type", "A02,A21,A23,A40"),
    ("webhook-url-not-allowed", _subscribe("http://example.com/h", "card.closed"), 422,
     "webhook-url-not-allowed", "A02,A21,A23,A39"),
    # success paths
    ("anonymous-session", lambda w: create_session(w.http, w.token, Device()), 201, None,
     "A02,A04,A05,A06,A09"),
    ("promotion", _promotion, 201, None, "A02,A04,A05,A06,A07,A09"),
    ("direct-account-session", lambda w: create_session(w.http, w.token, w.a.device, "account",
                                                        account_id=w.a.account_id), 201, None,
     "A02,A04,A05,A06,A08,A09"),
    ("end-session", Req("DELETE", "/sessions", session=A_PERSON), 204, None, "A02,A34"),
    ("end-without-session", Req("DELETE", "/sessions"), 401, "session-required", "A02,A21,A34"),
    ("account", Req("POST", "/accounts", {"product": "spending"}, "new-anonymous"), 201, None,
     "A02,A06,A09,A10,A19,A43"),
    ("person-by-the-creating-devices-anonymous-session", _anonymous_person, 201, None,
     "A02,A04,A06,A11,A31,A42,A43"),
    ("person-by-a-bound-person-session", _person("a.person_session"), 201, None, "A02,A04,A06,A11,A31,A43"),
    ("kyc-questions", Req("GET", "/persons/{w.a.person_id}/kyc/questions", session=A_PERSON), 200, None,
     "A02,A06,A12,A31,A43"),
    ("card", Req("POST", CARDS, {"type": "virtual"}), 201, None, "A02,A13,A14,A31,A35"),
    ("card-with-a-bound-session", Req("POST", CARDS, {"type": "virtual"}, A_PERSON), 201, None,
     "A02,A06,A13,A14,A31,A35"),
    ("read-card", Req("GET", "/cards/{w.card}"), 200, None, "A02,A14,A31,A35"),
    ("close-card", Req("POST", CLOSE, {"reason": "lost"}), 200, None, "A02,A14,A15,A16,A31,A35"),
    ("event", Req("POST", EVENTS, {"event_type": "password.changed"}), 202, None, "A02,A17,A31"),
    ("transfer", _transfer(idem="t-6"), 201, None, "A02,A06,A18,A19,A20,A31,A36,A43"),
    ("read-transfer-as-receiver", _read_transfer, 200, None, "A02,A06,A18,A19,A36,A43"),
    ("subscribe", _subscribe(HOOK, "card.closed"), 201, None, "A02,A23"),
    ("webhook-keys", Req("GET", "/webhooks/jwks"), 200, None, "A02,A24"),
    ("documents", Req("GET", "/persons/{w.a.person_id}/document_requests", session=A_PERSON), 200, None,
     "A02,A06,A26,A31,A43"),
    ("submit-document", _submit(), 200, None, "A02,A04,A06,A26,A31,A43"),
    ("control-plane", lambda w: w.http.get("/_sim/clock"), 200, None, "A45"),
    ("control-plane-refusal", lambda w: w.http.get("/_sim/persons/per_nope/kyc_answers"), 404,
     "person-not-found", "A21,A45"),
]
# fmt: on


@pytest.mark.parametrize(("case", "send", "status", "code", "expected"), CASES, ids=[c[0] for c in CASES])
def test_svc_assumptions_names_the_path_taken(
    world: World, case: str, send: Send, status: int, code: str | None, expected: str
) -> None:
    resp = send(world)
    assert resp.status_code == status, resp.text
    if code is not None:
        assert resp.json()["code"] == code, resp.text
    assert resp.headers.get("svc-assumptions") == expected


def test_the_table_is_large_and_covers_every_refusal_step() -> None:
    assert len(CASES) >= 40
    assert len({c[0] for c in CASES}) == len(CASES)
    codes = {c[3] for c in CASES}
    steps = [
        "not-found", TOKEN_ERROR, "malformed-json", "idempotency-key-required", "session-expired",
        "session-type-not-allowed", "card-not-found", "session-not-bound", "pii-must-be-encrypted",
        "unknown-field", "invalid-encrypted-data", "unknown-platform", "invalid-session-transition",
        "insufficient-funds",
    ]  # fmt: skip
    assert set(steps) <= codes, set(steps) - codes


def test_a_strict_refusal_names_the_deprecated_endpoint(strict_http: httpx.Client) -> None:
    resp = strict_http.post("/authorization/server_api/access_tokens", data=GRANT)
    assert resp.status_code == 410
    assert resp.headers["svc-assumptions"] == "A03,A21"


def test_ids_are_those_of_the_register_and_sorted() -> None:
    from kit import register

    known = {entry["id"] for entry in register.assumptions()}
    for _, _, _, _, expected in CASES:
        assert set(expected.split(",")) <= known, expected
        assert expected.split(",") == sorted(expected.split(",")), expected  # as the header lists them
