"""The authorization matrix (issue #6, item 3): every partner route × every way of not
being allowed, refused with the status and code of the wire contract (order of checks), and nothing
changed. A person can never read or move another person's money or cards.

The world is built once for the module; refused requests change nothing (each case checks
it), so the cases share it. The two conditions that move the clock build their own.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.sim.helpers.clients import CheckedClient
from tests.sim.helpers.contract import PARTNER_B
from tests.sim.helpers.control import advance, open_document_request, reset, snapshot
from tests.sim.helpers.encryption import Device
from tests.sim.helpers.journeys import Journey, journey, new_session, p2p_transfer
from tests.sim.helpers.resources import create_card
from tests.sim.helpers.wire import assert_problem, basic_auth, call, money, partner_token

JWE = "a.b.c.d.e"  # never decrypted: every case is refused before decryption


@dataclass
class World:
    token: str
    token_b: str
    a: Journey
    b: Journey
    c: Journey
    d: Journey  # a customer of the other partner
    card: str
    transfer: str  # A → C
    doc: str
    anonymous: str
    revoked_token: str
    ended_session: str

    def state(self, http: httpx.Client) -> dict[str, Any]:
        return snapshot(http, self.token, (f"/cards/{self.card}",))


def build_world(http: httpx.Client) -> World:
    reset(http, 7)
    token = partner_token(http)
    a = journey(http, token=token)
    b = journey(http, token=token, persona_index=1)
    c = journey(http, token=token, persona_index=2)
    token_b = partner_token(http, *PARTNER_B)
    d = journey(http, token=token_b, persona_index=3)
    card = create_card(http, token, a.account_id)["card_id"]
    resp = p2p_transfer(http, a, c.person_id, "5.00", idem="authz-a-to-c")
    assert resp.status_code == 201, resp.text
    doc = open_document_request(http, a.person_id)
    revoked = partner_token(http)
    assert call(http, "DELETE", "/authorization/server_api/access_tokens", token=revoked).status_code == 204
    ended = new_session(http, token, Device())
    assert call(http, "DELETE", "/sessions", token=token, session=ended).status_code == 204
    return World(
        token, token_b, a, b, c, d, card, resp.json()["transfer_id"], doc,
        new_session(http, token, Device()), revoked, ended,
    )  # fmt: skip


# --- the routes --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    method: str
    path: Callable[[World], str]
    body: Callable[[World], Any] | None = None


ROUTES: dict[str, Route] = {
    "init-data": Route("GET", lambda w: "/sessions/user_session_initialization_data"),
    "create-session": Route(
        "POST",
        lambda w: "/sessions",
        lambda w: {"session_type": "anonymous", "expiration_strategy": "fixed", "encrypted_data": JWE},
    ),
    "end-session": Route("DELETE", lambda w: "/sessions"),
    "create-account": Route("POST", lambda w: "/accounts", lambda w: {"product": "spending"}),
    "create-person": Route(
        "POST", lambda w: f"/accounts/{w.a.account_id}/persons", lambda w: {"encrypted_pii": JWE}
    ),
    "kyc-questions": Route("GET", lambda w: f"/persons/{w.a.person_id}/kyc/questions"),
    "kyc-answers": Route(
        "POST", lambda w: f"/persons/{w.a.person_id}/kyc/answers", lambda w: {"encrypted_answers": JWE}
    ),
    "create-card": Route(
        "POST", lambda w: f"/accounts/{w.a.account_id}/cards", lambda w: {"type": "virtual"}
    ),
    "get-card": Route("GET", lambda w: f"/cards/{w.card}"),
    "close-card": Route("POST", lambda w: f"/cards/{w.card}/close", lambda w: {"reason": "stolen"}),
    "send-event": Route(
        "POST", lambda w: f"/accounts/{w.a.account_id}/events", lambda w: {"event_type": "password.changed"}
    ),
    "create-transfer": Route(
        "POST",
        lambda w: "/p2p/transfers",
        lambda w: {"from_account_id": w.a.account_id, "to_person_id": w.b.person_id, "amount": money("9.00")},
    ),
    "get-transfer": Route("GET", lambda w: f"/p2p/transfers/{w.transfer}"),
    "subscribe": Route(
        "POST",
        lambda w: "/webhooks/subscriptions",
        lambda w: {"url": "http://127.0.0.1:9/h", "events": ["card.closed"]},
    ),
    "jwks": Route("GET", lambda w: "/webhooks/jwks"),
    "list-documents": Route("GET", lambda w: f"/persons/{w.a.person_id}/document_requests"),
    "submit-document": Route(
        "POST", lambda w: f"/document_requests/{w.doc}/submit", lambda w: {"encrypted_document": JWE}
    ),
}
ALL = list(ROUTES)
SESSION_REQUIRED = [
    "end-session",
    "create-account",
    "create-person",
    "kyc-questions",
    "kyc-answers",
    "create-transfer",
    "get-transfer",
    "list-documents",
    "submit-document",
]
SESSION_CHECKED = [r for r in ALL if r != "init-data"]  # init data does not use a session
UNAUTHORIZED = "invalid-partner-token"

# --- the conditions: (bearer token, session) and what each route must answer -------------------

Who = Callable[[World], "str | None"]


@dataclass(frozen=True)
class Condition:
    token: Callable[[World], str | None]
    session: Callable[[World], str | None]
    expect: dict[str, tuple[int, str]]
    www_authenticate: str | None = None


def _all(routes: list[str], status: int, code: str) -> dict[str, tuple[int, str]]:
    return dict.fromkeys(routes, (status, code))


def _person_a(w: World) -> str | None:
    return w.a.person_session


CONDITIONS: dict[str, Condition] = {
    "no-token": Condition(lambda w: None, _person_a, _all(ALL, 401, UNAUTHORIZED), "Bearer"),
    "basic-scheme": Condition(lambda w: "BASIC", _person_a, _all(ALL, 401, UNAUTHORIZED), "Bearer"),
    "unknown-token": Condition(
        lambda w: "tok_" + secrets.token_urlsafe(32),
        _person_a,
        _all(ALL, 401, UNAUTHORIZED),
        'Bearer error="invalid_token"',
    ),
    "revoked-token": Condition(
        lambda w: w.revoked_token, _person_a, _all(ALL, 401, UNAUTHORIZED), 'Bearer error="invalid_token"'
    ),
    "no-session": Condition(
        lambda w: w.token, lambda w: None, _all(SESSION_REQUIRED, 401, "session-required")
    ),
    "unknown-session": Condition(
        lambda w: w.token,
        lambda w: "ses_" + secrets.token_urlsafe(32),
        _all(SESSION_CHECKED, 401, "invalid-session"),
    ),
    "ended-session": Condition(
        lambda w: w.token, lambda w: w.ended_session, _all(SESSION_CHECKED, 401, "invalid-session")
    ),
    "superseded-session": Condition(
        lambda w: w.token,
        lambda w: w.a.account_session,  # promoted to the person session since
        _all([r for r in SESSION_CHECKED if r != "end-session"], 401, "session-superseded"),
    ),
    "other-partners-session": Condition(
        lambda w: w.token, lambda w: w.d.person_session, _all(SESSION_CHECKED, 401, "invalid-session")
    ),
    "anonymous-session": Condition(
        lambda w: w.token,
        lambda w: w.anonymous,
        {
            **_all(
                [r for r in SESSION_REQUIRED if r not in ("end-session", "create-account", "create-person")],
                403,
                "session-type-not-allowed",
            ),
            **_all(
                ["create-card", "get-card", "close-card", "send-event", "create-person"],
                403,
                "session-not-bound",
            ),
        },
    ),
    "person-session-opening-an-account": Condition(
        lambda w: w.token, _person_a, {"create-account": (403, "session-type-not-allowed")}
    ),
    "another-persons-session": Condition(
        lambda w: w.token,
        lambda w: w.b.person_session,
        {
            **_all(
                [
                    "create-person",
                    "kyc-questions",
                    "kyc-answers",
                    "create-card",
                    "get-card",
                    "close-card",
                    "send-event",
                    "create-transfer",
                    "list-documents",
                    "submit-document",
                ],
                403,
                "session-not-bound",
            ),
            "get-transfer": (404, "transfer-not-found"),  # A → C: B is neither
        },
    ),
    "other-partner": Condition(
        lambda w: w.token_b,
        lambda w: w.d.person_session,
        {
            "create-person": (404, "account-not-found"),
            "kyc-questions": (404, "person-not-found"),
            "kyc-answers": (404, "person-not-found"),
            "create-card": (404, "account-not-found"),
            "get-card": (404, "card-not-found"),
            "close-card": (404, "card-not-found"),
            "send-event": (404, "account-not-found"),
            "create-transfer": (404, "account-not-found"),
            "get-transfer": (404, "transfer-not-found"),
            "list-documents": (404, "person-not-found"),
            "submit-document": (404, "document-request-not-found"),
        },
    ),
}
TABLE = [(cond, route) for cond, c in CONDITIONS.items() for route in c.expect]


def send(http: httpx.Client, w: World, route: str, token: str | None, session: str | None) -> httpx.Response:
    r = ROUTES[route]
    headers = {}
    if token == "BASIC":
        headers["Authorization"] = basic_auth()
        token = None
    return call(
        http,
        r.method,
        r.path(w),
        token=token,
        session=session,
        idem=f"authz-{secrets.token_hex(8)}" if r.method == "POST" else None,
        json_body=r.body(w) if r.body else None,
        extra=headers,
    )


@pytest.fixture(scope="module")
def world(_sim_client: CheckedClient) -> Iterator[World]:
    w = build_world(_sim_client)
    _sim_client.violations.clear()
    yield w
    violations = list(_sim_client.violations)
    _sim_client.violations.clear()
    assert not violations, violations


@pytest.mark.parametrize(("condition", "route"), TABLE)
def test_refused(_sim_client: CheckedClient, world: World, condition: str, route: str) -> None:
    cond = CONDITIONS[condition]
    status, code = cond.expect[route]
    before = world.state(_sim_client)
    resp = send(_sim_client, world, route, cond.token(world), cond.session(world))
    assert_problem(resp, status, code)
    if cond.www_authenticate:
        assert resp.headers.get("www-authenticate") == cond.www_authenticate
    assert world.state(_sim_client) == before
    assert not _sim_client.violations, _sim_client.violations


def test_the_table_covers_every_route_and_the_refusals_can_be_lifted(
    _sim_client: CheckedClient, world: World
) -> None:
    assert {route for _, route in TABLE} == set(ROUTES)
    # the same calls with the right token and session succeed: the matrix tests the refusal,
    # not a broken request (GETs only, so the shared world stays as it is)
    for route, session in [
        ("init-data", None),
        ("kyc-questions", world.a.person_session),
        ("get-card", world.a.person_session),
        ("get-transfer", world.a.person_session),
        ("get-transfer", world.c.person_session),
        ("jwks", None),
        ("list-documents", world.a.person_session),
    ]:
        resp = send(_sim_client, world, route, world.token, session)
        assert resp.status_code == 200, (route, resp.text)


def test_b_can_never_move_or_see_as_money_or_cards(_sim_client: CheckedClient, world: World) -> None:
    """Customer B, with B's own valid person session, against everything of A's."""
    before = world.state(_sim_client)
    tok, b = world.token, world.b.person_session
    a = world.a
    to_b = {"from_account_id": a.account_id, "to_person_id": world.b.person_id, "amount": money("400.00")}
    to_c = {"from_account_id": a.account_id, "to_person_id": world.c.person_id, "amount": money("1.00")}
    attempts = [
        ("POST", "/p2p/transfers", to_b),
        ("POST", "/p2p/transfers", to_c),
        ("POST", f"/cards/{world.card}/close", {"reason": "fraud_suspected"}),
        ("POST", f"/accounts/{a.account_id}/cards", {"type": "temporary"}),
        ("GET", f"/cards/{world.card}", None),
        ("GET", f"/p2p/transfers/{world.transfer}", None),
        ("GET", f"/persons/{a.person_id}/kyc/questions", None),
    ]  # fmt: skip
    for method, path, body in attempts:
        resp = call(
            _sim_client, method, path, token=tok, session=b, idem=secrets.token_hex(8), json_body=body
        )
        assert resp.status_code in (403, 404), (method, path, resp.text)
        assert a.account_id not in resp.text.replace(path, "")  # nothing of A's comes back
    assert world.state(_sim_client) == before


@pytest.fixture
def fresh_world(http: httpx.Client) -> World:
    return build_world(http)


@pytest.mark.parametrize(
    ("seconds", "session", "expect", "www"),
    [
        (86400, _person_a, _all(ALL, 401, UNAUTHORIZED), 'Bearer error="invalid_token"'),
        (
            1800,
            _person_a,
            _all([r for r in SESSION_CHECKED if r != "end-session"], 401, "session-expired"),
            None,
        ),
    ],
    ids=["expired-token", "expired-session"],
)
def test_refused_after_the_clock_moved(
    http: httpx.Client, fresh_world: World, seconds: int, session: Who, expect: dict, www: str | None
) -> None:
    w = fresh_world
    advance(http, seconds)
    before = w.state(http)
    wrong = []
    for route, (status, code) in expect.items():
        resp = send(http, w, route, w.token, session(w))
        got = (resp.status_code, resp.json().get("code") if resp.content else None)
        if got != (status, code) or (www and resp.headers.get("www-authenticate") != www):
            wrong.append(f"{route}: {got} (expected {(status, code)})")
    assert not wrong, "\n".join(wrong)
    assert w.state(http) == before
