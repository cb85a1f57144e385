"""The simulator's second personality: a choice overlay (``data/choices/other.toml``) changes the
wire as it says, over HTTP; the default personality is what every other test of tests/sim checks.

Each re-choosable value: ids (A60), ``svc-assumptions`` (A61), optional fields (A62), a session
where rule 5 says "should" (A63), problem codes (A64), close reasons (A15), lifetimes (A01, A04,
A06, A14), and the served OpenAPI document (A48). Bad overlays are refused, entry and key named.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from kit import _choices as choices
from kit import register
from kit._choices import ChoicesError
from kit.sim import Settings, create_app
from kit.sim.personality import resolve
from tests.sim.helpers.clients import CheckedClient, checked, embedded, served_client
from tests.sim.helpers.control import advance, clock_now, personas, reset
from tests.sim.helpers.encryption import Device
from tests.sim.helpers.journeys import journey, new_session, p2p_transfer
from tests.sim.helpers.resources import card_request, close_card, create_card, send_event
from tests.sim.helpers.wire import (
    IN_PROCESS,
    add_months,
    call,
    init_data,
    parse_time,
    partner_token,
    token_response,
)

OTHER = register.data_dir() / "choices" / "other.toml"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
PREFIX = "urn:partner-api-kit:problem:"


@pytest.fixture(scope="module")
def other_server() -> Iterator[Any]:
    yield from embedded(seed=7, choices=choices.load(OTHER))


@pytest.fixture(scope="module")
def _other_client(other_server: Any) -> Iterator[CheckedClient]:
    yield from served_client(other_server)


@pytest.fixture
def other(_other_client: CheckedClient) -> Iterator[CheckedClient]:
    """A checked client on the ``other.toml`` simulator, reset to seed 7."""
    yield from checked(_other_client)


def _problem(resp: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["code"] == code and body["type"] == PREFIX + code, body
    assert resp.headers["content-length"] == str(len(resp.content))
    return body


def _cards(http: httpx.Client) -> int:
    return int(http.get("/_sim/health").json()["stores"]["cards"]["size"])


def test_the_shipped_overlay_is_valid_and_re_chooses_every_kind_of_choice() -> None:
    overlay = choices.load(OTHER)
    assert {"A01", "A04", "A06", "A14", "A15", "A60", "A61", "A62", "A63", "A64"} <= set(overlay.entries())
    chosen = resolve(overlay)
    assert chosen.uuid_ids and not chosen.send_assumptions and chosen.require_session
    assert chosen.omitted == frozenset(register.value("A62")["sent"])
    assert set(chosen.close_reasons) < set(register.value("A15")["reasons"])


def test_ids_are_uuids_without_a_prefix_and_seeded(other: httpx.Client) -> None:
    j = journey(other)
    card = create_card(other, j.token, j.account_id, session=j.person_session)
    ids = [j.account_id, j.person_id, card["card_id"], card["account_id"]]
    assert all(UUID.match(str(i)) for i in ids), ids
    resp = other.get("/webhooks/jwks", headers={"Authorization": f"Bearer {j.token}"})
    assert UUID.match(resp.headers["svc-request-id"])
    # determinism: the same seed and the same calls give the same UUIDs
    reset(other, 7)
    again = journey(other)
    assert (again.account_id, again.person_id) == (j.account_id, j.person_id)
    assert create_card(other, again.token, again.account_id, session=again.person_session) == card


def test_the_default_personality_keeps_prefixed_ids(http: httpx.Client) -> None:
    j = journey(http, until="account")
    assert j.account_id.startswith("acc_") and not UUID.match(j.account_id)


def test_no_answer_names_its_choices(other: httpx.Client) -> None:
    j = journey(other)
    answers = [
        other.get("/openapi.json"),
        card_request(other, j.token, j.account_id, "physical"),  # a problem (session required)
        card_request(other, j.token, j.account_id, "physical", session=j.person_session),
        call(other, "GET", "/nowhere", token=j.token),
        call(other, "POST", "/accounts", token=j.token, idem="k1", json_body={"product": "x"}),
    ]
    assert [r.status_code for r in answers] == [200, 401, 201, 404, 401]
    assert all("svc-assumptions" not in r.headers for r in answers)


def test_an_idempotent_replay_does_not_bring_the_header_back(other: httpx.Client) -> None:
    j = journey(other)
    body = {"type": "virtual"}
    first = call(
        other,
        "POST",
        f"/accounts/{j.account_id}/cards",
        token=j.token,
        session=j.person_session,
        idem="same",
        json_body=body,
    )
    again = call(
        other,
        "POST",
        f"/accounts/{j.account_id}/cards",
        token=j.token,
        session=j.person_session,
        idem="same",
        json_body=body,
    )
    assert again.headers.get("Idempotent-Replayed") == "true" and again.json() == first.json()
    assert "svc-assumptions" not in first.headers and "svc-assumptions" not in again.headers


def test_optional_fields_are_left_out_and_needed_ones_stay(other: httpx.Client, http: httpx.Client) -> None:
    j = journey(other)
    card = create_card(other, j.token, j.account_id, session=j.person_session)
    assert "created_at" not in card and "last4" not in card
    assert {"card_id", "account_id", "type", "status", "expires_on", "close_reason"} <= set(card)
    read = call(other, "GET", f"/cards/{card['card_id']}", token=j.token, session=j.person_session).json()
    assert read == card
    event = send_event(
        other,
        j.token,
        j.account_id,
        {"event_type": register.spec()["inbound_event_types"][0]},
        session=j.person_session,
    )
    assert event.status_code == 202 and "received_at" not in event.json() and "event_id" in event.json()
    # the same calls on the default personality send them
    d = journey(http)
    default_card = create_card(http, d.token, d.account_id, session=d.person_session)
    assert "created_at" in default_card and "last4" in default_card


def test_a_new_account_has_no_created_at(other: httpx.Client) -> None:
    tok = partner_token(other)
    anonymous = new_session(other, tok, Device())
    resp = call(other, "POST", "/accounts", token=tok, session=anonymous, json_body={"product": "spending"})
    assert resp.status_code == 201, resp.text
    assert "created_at" not in resp.json() and resp.json()["balance"] == {
        "value": "500.00",
        "currency": "USD",
    }


def test_transfers_leave_out_created_at(other: httpx.Client) -> None:
    sender, receiver = journey(other), journey(other, persona_index=1)
    resp = p2p_transfer(other, sender, str(receiver.person_id), idem="t1")
    assert resp.status_code == 201, resp.text
    assert "created_at" not in resp.json() and UUID.match(resp.json()["transfer_id"])
    assert resp.json()["status"] == "completed"


def test_cards_and_events_need_a_session_where_the_default_needs_none(
    other: httpx.Client, http: httpx.Client
) -> None:
    j = journey(other)
    card = create_card(other, j.token, j.account_id, session=j.person_session)
    before = _cards(other)
    _problem(card_request(other, j.token, j.account_id, "physical"), 401, "session-required")
    _problem(call(other, "GET", f"/cards/{card['card_id']}", token=j.token), 401, "session-required")
    _problem(close_card(other, j.token, card["card_id"], {"reason": "lost"}), 401, "session-required")
    event = {"event_type": register.spec()["inbound_event_types"][0]}
    _problem(send_event(other, j.token, j.account_id, event), 401, "session-required")
    assert _cards(other) == before
    still = call(other, "GET", f"/cards/{card['card_id']}", token=j.token, session=j.person_session)
    assert still.json()["status"] == "active"
    # the default personality: the partner token suffices (A31)
    d = journey(http, until="account")
    assert card_request(http, d.token, d.account_id, "physical").status_code == 201


def test_other_codes_for_refusals(other: httpx.Client) -> None:
    j = journey(other)
    card = create_card(other, j.token, j.account_id, session=j.person_session)
    assert (
        close_card(other, j.token, card["card_id"], {"reason": "lost"}, session=j.person_session).status_code
        == 200
    )
    _problem(close_card(other, j.token, card["card_id"], None, session=j.person_session), 409, "card-closed")
    body = _problem(
        card_request(other, j.token, j.account_id, "gold", session=j.person_session), 422, "invalid-card-type"
    )
    assert body["allowed"] == register.value("A13")["types"]
    receiver = journey(other, persona_index=1)
    resp = p2p_transfer(other, j, str(receiver.person_id), value="100000.00", idem="big")
    _problem(resp, 422, "insufficient-balance")
    # a code the overlay does not rename stays ours
    _problem(
        call(other, "GET", "/cards/nope", token=j.token, session=j.person_session), 404, "card-not-found"
    )


def test_the_shorter_close_reason_list_and_its_refusal_names_it(other: httpx.Client) -> None:
    j = journey(other)
    card = create_card(other, j.token, j.account_id, session=j.person_session)
    allowed = ["lost", "stolen", "customer_request"]
    for reason in ("damaged", "fraud_suspected", "account_closed"):  # ours, not this server's
        body = _problem(
            close_card(other, j.token, card["card_id"], {"reason": reason}, session=j.person_session),
            422,
            "invalid-close-reason",
        )
        assert body["allowed"] == allowed
    read = call(other, "GET", f"/cards/{card['card_id']}", token=j.token, session=j.person_session).json()
    assert read["status"] == "active" and read["close_reason"] is None
    ok = close_card(
        other, j.token, card["card_id"], {"reason": body["allowed"][-1]}, session=j.person_session
    )
    assert ok.status_code == 200 and ok.json()["close_reason"] == "customer_request"


def test_lifetimes_follow_the_overlay(other: httpx.Client) -> None:
    chosen = choices.load(OTHER)
    token = token_response(other)
    assert token.json()["expires_in"] == chosen.chosen("A01", "token_lifetime_seconds") == 3600
    tok = token.json()["access_token"]
    now = clock_now(other)
    init = init_data(other, tok)
    assert parse_time(init["nonce_expires_at"]) - now == timedelta(seconds=120)
    j = journey(other, token=tok)
    session = call(
        other, "GET", f"/persons/{j.person_id}/document_requests", token=tok, session=j.person_session
    )
    expires = parse_time(session.headers["svc-session-expires-at"])
    assert timedelta(0) < expires - now <= timedelta(seconds=600)
    temporary = create_card(other, tok, j.account_id, "temporary", session=j.person_session)
    physical = create_card(other, tok, j.account_id, "physical", session=j.person_session)
    today = now.date()
    assert temporary["expires_on"] == (today + timedelta(days=7)).isoformat()
    assert physical["expires_on"] == add_months(today, 24).isoformat()
    # the session's fixed lifetime of 600 s, then 401 session-expired
    advance(other, 601)
    after = call(
        other, "GET", f"/persons/{j.person_id}/document_requests", token=tok, session=j.person_session
    )
    _problem(after, 401, "session-expired")


def test_the_served_document_follows_the_overlay(other: httpx.Client, http: httpx.Client) -> None:
    theirs, ours = other.get("/openapi.json").json(), http.get("/openapi.json").json()
    card, default_card = theirs["components"]["schemas"]["CardOut"], ours["components"]["schemas"]["CardOut"]
    assert "created_at" not in card["properties"] and "last4" not in card["properties"]
    assert "created_at" not in card.get("required", []) and "created_at" in default_card["properties"]
    assert card["properties"]["card_id"].get("format") == "uuid"
    reasons = theirs["components"]["schemas"]["CardClose"]["properties"]["reason"]["enum"]
    assert reasons == ["lost", "stolen", "customer_request", None]
    assert theirs["info"]["x-choices"]["A14"] == {"months": 24, "temporary_days": 7}
    assert theirs["info"]["x-choices"]["A06"]["fixed_seconds"] == 600
    assert "x-choices" not in ours["info"]
    assert ours == json.loads((register.data_dir() / "openapi.json").read_text())
    docs = other.get("/docs")
    assert docs.status_code == 200 and "/openapi.json" in docs.text


@pytest.mark.parametrize(
    ("data", "entry", "key"),
    [
        ({"A99": {"x": 1}}, "A99", ""),
        ({"A14": {"years": 2}}, "A14", "years"),
        ({"A14": {"months": "two"}}, "A14", "months"),
        ({"A27": {"version": "9.9.9"}}, "A27", "version"),
        ({"A60": {"id_format": "ulid"}}, "A60", "id_format"),
        ({"A62": {"sent": ["card.card_id"]}}, "A62", "sent"),
        ({"A64": {"codes": {"card-not-found": "No Card!"}}}, "A64", "codes"),
        ({"A15": {"reasons": []}}, "A15", "reasons"),
        ({"A06": {"fixed_seconds": 0}}, "A06", "fixed_seconds"),
        ({"A04": {"rsa_bits": 3072}}, "A04", "rsa_bits"),
        ({"A02": {"header": "X Token"}}, "A02", "header"),
    ],
)
def test_a_bad_overlay_is_refused_naming_entry_and_key(data: dict[str, Any], entry: str, key: str) -> None:
    with pytest.raises(ChoicesError) as refused:
        create_app(Settings(choices=choices.parse(data)))
    assert refused.value.entry == entry and refused.value.key == key
    assert f"[{entry}]" in str(refused.value) and key in str(refused.value)


def test_personas_are_the_same_under_the_overlay(other: httpx.Client, http: httpx.Client) -> None:
    assert personas(other) == personas(http)


def test_an_unexpected_failure_under_the_overlay_names_no_choices() -> None:
    import asyncio

    app = create_app(Settings(choices=choices.load(OTHER), allowed_hosts=IN_PROCESS))

    @app.fastapi().get("/sessions/_explode")
    async def explode() -> None:
        raise RuntimeError("internals")

    async def get() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://sim") as client:
            return await client.get("/sessions/_explode")

    resp = asyncio.run(get())
    assert resp.status_code == 500 and resp.json()["code"] == "internal-error"
    assert UUID.match(resp.headers["svc-request-id"]) and "svc-assumptions" not in resp.headers
