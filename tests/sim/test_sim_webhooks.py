"""Webhooks (A23-A26, A38-A40): subscriptions, signed deliveries, retries on simulator time,
document requests."""

from __future__ import annotations

import json
import socket
import time
from datetime import UTC, date, datetime, timedelta
from datetime import time as dtime
from typing import Any

import httpx
import pytest

from tests.sim.helpers.contract import (
    API_VERSION,
    DEPRECATION,
    ECHO,
    PARTNER_B,
    RETRY_OFFSETS,
    WEBHOOK_EVENTS,
)
from tests.sim.helpers.control import advance, clock_now, deliveries, open_document_request
from tests.sim.helpers.encryption import encrypt_for_server
from tests.sim.helpers.journeys import journey
from tests.sim.helpers.resources import close_card, create_card, list_documents, submit_document
from tests.sim.helpers.webhooks import (
    Receiver,
    signature_is_valid,
    signing_keys,
    subscribe,
    subscription_request,
    verify_signature,
)
from tests.sim.helpers.wire import assert_problem, call, init_data, parse_time, partner_token, wait_until


def deliveries_of(http: httpx.Client, event_type: str) -> list[dict[str, Any]]:
    return [d for d in deliveries(http) if d["type"] == event_type]


def wait_delivery(http: httpx.Client, pred: Any, timeout: float = 5.0) -> list[dict[str, Any]]:
    return wait_until(lambda: [d for d in deliveries(http) if pred(d)], timeout) or []


def closed(http: httpx.Client, token: str, card_id: str, reason: str = "lost") -> dict:
    """Close a card (200) and return it."""
    resp = close_card(http, token, card_id, {"reason": reason})
    assert resp.status_code == 200, resp.text
    return resp.json()


# --- subscriptions -----


def test_subscription_is_created(http: httpx.Client, token: str, receiver: Receiver) -> None:
    resp = subscription_request(http, token, receiver.url, WEBHOOK_EVENTS)
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert set(body) == {"subscription_id", "url", "events"}
    assert body["subscription_id"].startswith("sub_")
    assert body["url"] == receiver.url
    assert body["events"] == WEBHOOK_EVENTS


@pytest.mark.parametrize(
    ("events", "code", "extra"),
    [
        (["card.created"], "unknown-event-type", None),
        (["card.closed", ECHO], "unknown-event-type", None),
        (
            ["person.document_request.created"],
            "event-renamed",
            {"person.document_request.created": "document_request.created"},
        ),
        (
            ["person.document_request.completed", "document_request.created"],
            "event-renamed",
            {"person.document_request.completed": "document_request.completed"},
        ),
        (
            ["bogus", "person.document_request.created"],
            "event-renamed",
            {"person.document_request.created": "document_request.created"},
        ),
        (
            ["person.document_request.created", "bogus"],
            "event-renamed",
            {"person.document_request.created": "document_request.created"},
        ),
        ([], "validation-error", None),
        ("card.closed", "validation-error", None),
    ],
)
def test_bad_subscription_events(
    http: httpx.Client, token: str, receiver: Receiver, events: Any, code: str, extra: Any
) -> None:
    body = assert_problem(subscription_request(http, token, receiver.url, events), 422, code)
    if code == "event-renamed":
        assert body["renamed"] == extra
    if code == "unknown-event-type":
        assert sorted(body["allowed"]) == sorted(WEBHOOK_EVENTS)
    # nothing was subscribed: a closed card is delivered nowhere
    j = journey(http, token=token, until="account")
    closed(http, token, create_card(http, token, j.account_id)["card_id"])
    time.sleep(0.2)
    assert receiver.received() == []
    assert deliveries(http) == []


@pytest.mark.parametrize("url", ["not a url", "ftp://127.0.0.1/x", "/relative/path", "http://", 5])
def test_bad_subscription_url(http: httpx.Client, token: str, url: Any) -> None:
    body = assert_problem(subscription_request(http, token, url, ["card.closed"]), 422, "validation-error")
    assert body["errors"][0]["field"] == "/url"


@pytest.mark.parametrize("url", ["http://example.com/hook", "https://10.1.2.3/hook"])
def test_non_loopback_webhook_urls_are_not_allowed(http: httpx.Client, token: str, url: str) -> None:
    assert_problem(subscription_request(http, token, url, ["card.closed"]), 422, "webhook-url-not-allowed")


def test_subscriptions_and_jwks_need_the_token(http: httpx.Client) -> None:
    assert_problem(http.get("/webhooks/jwks"), 401, "invalid-partner-token")
    assert_problem(http.post("/webhooks/subscriptions", json={}), 401, "invalid-partner-token")


def test_jwks_holds_public_es256_keys(http: httpx.Client, token: str) -> None:
    keys = signing_keys(http, token)["keys"]
    assert keys
    for key in keys:
        assert key["kty"] == "EC" and key["crv"] == "P-256"
        assert key.get("kid")
        assert "d" not in key


# --- a delivery -----


def test_card_closed_is_delivered_signed(http: httpx.Client, token: str, receiver: Receiver) -> None:
    sub = subscribe(http, token, receiver.url, ["card.closed"])
    j = journey(http, token=token, until="account")
    card = create_card(http, token, j.account_id)
    now = clock_now(http)
    closed(http, token, card["card_id"], "stolen")
    got = receiver.wait_for(1)
    assert len(got) == 1, "the first attempt goes out at once"
    req = got[0]
    assert req.path == "/hook"
    assert req.headers.get("content-type", "").startswith("application/json")
    body = req.json()
    assert set(body) == {"id", "type", "api_version", "created_at", "data"}, body
    assert body["id"].startswith("evt_")
    assert body["type"] == "card.closed"
    assert body["api_version"] == API_VERSION
    assert parse_time(body["created_at"]) == now
    assert body["data"] == call(http, "GET", f"/cards/{card['card_id']}", token=token).json()
    assert body["data"]["close_reason"] == "stolen"

    keys = signing_keys(http, token)
    header = verify_signature(req.headers["svc-webhook-signature"], req.body, keys)
    assert set(header) == {"alg", "kid", "iat", "svc_event_id"}, header
    assert header["alg"] == "ES256"
    assert header["svc_event_id"] == body["id"]
    assert header["iat"] == int(now.timestamp())
    # the verifier is honest: a changed body does not verify
    assert not signature_is_valid(
        req.headers["svc-webhook-signature"], req.body.replace(b"stolen", b"lost__"), keys
    )
    assert "deprecation" not in req.headers

    record = wait_delivery(http, lambda d: d["status"] == "delivered")
    assert len(record) == 1
    assert record[0]["event_id"] == body["id"]
    assert record[0]["subscription_id"] == sub["subscription_id"]
    assert record[0]["type"] == "card.closed"
    assert [a["status_code"] for a in record[0]["attempts"]] == [200]
    assert parse_time(record[0]["attempts"][0]["at"]) == now


def test_only_subscriptions_listing_the_event_receive_it(http: httpx.Client, token: str) -> None:
    wanted, unwanted = Receiver(), Receiver()
    try:
        subscribe(http, token, wanted.url, ["card.closed"])
        subscribe(http, token, unwanted.url, ["document_request.created"])
        j = journey(http, token=token, until="account")
        closed(http, token, create_card(http, token, j.account_id)["card_id"])
        assert len(wanted.wait_for(1)) == 1
        time.sleep(0.2)
        assert unwanted.received() == []
    finally:
        wanted.close()
        unwanted.close()


def test_other_partners_subscriptions_see_nothing(http: httpx.Client, token: str, receiver: Receiver) -> None:
    token_b = partner_token(http, *PARTNER_B)
    subscribe(http, token_b, receiver.url, ["card.closed"])
    j = journey(http, token=token, until="account")
    closed(http, token, create_card(http, token, j.account_id)["card_id"])
    time.sleep(0.3)
    assert receiver.received() == []


# --- retries on simulator time -----


def test_retries_follow_the_simulator_clock(http: httpx.Client, token: str, receiver: Receiver) -> None:
    receiver.fail_next = 5
    subscribe(http, token, receiver.url, ["card.closed"])
    j = journey(http, token=token, until="account")
    card = create_card(http, token, j.account_id)
    start = clock_now(http)
    closed(http, token, card["card_id"])
    assert len(receiver.wait_for(1)) == 1
    wait_delivery(http, lambda d: len(d["attempts"]) == 1)
    time.sleep(0.3)  # the clock is frozen: no retry without advancing it
    assert len(receiver.received()) == 1
    rec = deliveries_of(http, "card.closed")[0]
    assert rec["status"] == "pending"
    elapsed = 0
    for n, offset in enumerate(RETRY_OFFSETS, start=2):
        advance(http, offset - elapsed - 1)
        elapsed = offset - 1
        time.sleep(0.05)
        assert len(receiver.received()) == n - 1, f"attempt {n} went out before +{offset}s"
        advance(http, 1)
        elapsed = offset
        assert len(receiver.wait_for(n)) == n, f"attempt {n} not sent at +{offset}s"
    rec = wait_delivery(http, lambda d: d["status"] == "delivered")
    assert rec, deliveries(http)
    attempts = rec[0]["attempts"]
    assert [a["status_code"] for a in attempts] == [500] * 5 + [200]
    offsets = [(parse_time(a["at"]) - start).total_seconds() for a in attempts]
    assert offsets == [0, *RETRY_OFFSETS]
    # every attempt carries the same event id and a valid signature
    keys = signing_keys(http, token)
    ids = {r.json()["id"] for r in receiver.received()}
    assert len(ids) == 1
    for r in receiver.received():
        verify_signature(r.headers["svc-webhook-signature"], r.body, keys)


def test_delivery_fails_after_six_attempts(http: httpx.Client, token: str, receiver: Receiver) -> None:
    receiver.fail_always = True
    subscribe(http, token, receiver.url, ["card.closed"])
    j = journey(http, token=token, until="account")
    closed(http, token, create_card(http, token, j.account_id)["card_id"])
    receiver.wait_for(1)
    elapsed = 0
    for n, offset in enumerate(RETRY_OFFSETS, start=2):
        advance(http, offset - elapsed)
        elapsed = offset
        receiver.wait_for(n)
    rec = wait_delivery(http, lambda d: d["status"] == "failed")
    assert rec, deliveries(http)
    assert len(rec[0]["attempts"]) == 6
    advance(http, 3600)
    time.sleep(0.3)
    assert len(receiver.received()) == 6
    assert len(deliveries_of(http, "card.closed")[0]["attempts"]) == 6


def test_connection_errors_count_as_failures(http: httpx.Client, token: str) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    subscribe(http, token, f"http://127.0.0.1:{port}/hook", ["card.closed"])
    j = journey(http, token=token, until="account")
    closed(http, token, create_card(http, token, j.account_id)["card_id"])
    rec = wait_delivery(http, lambda d: len(d["attempts"]) == 1)
    assert rec and rec[0]["status"] == "pending"
    advance(http, 1)
    rec = wait_delivery(http, lambda d: len(d["attempts"]) == 2)
    assert rec, deliveries(http)


# --- card.expired -----


def test_card_expired_goes_only_to_subscriptions_listing_it(http: httpx.Client, token: str) -> None:
    listing, not_listing = Receiver(), Receiver()
    try:
        sub = subscribe(http, token, listing.url, ["card.closed", "card.expired"])
        subscribe(http, token, not_listing.url, ["card.closed"])
        j = journey(http, token=token, until="account")
        card = create_card(http, token, j.account_id, "temporary")
        expiry = datetime.combine(
            date.fromisoformat(card["expires_on"]) + timedelta(days=1), dtime(0, 0), UTC
        )
        advance(http, int((expiry - clock_now(http)).total_seconds()))
        got = listing.wait_for(1)
        assert len(got) == 1, "card.expired not delivered"
        req = got[0]
        assert req.headers.get("deprecation") == DEPRECATION
        body = req.json()
        assert body["type"] == "card.expired"
        tok = partner_token(http)
        assert body["data"] == call(http, "GET", f"/cards/{card['card_id']}", token=tok).json()
        assert body["data"]["status"] == "expired"
        header = verify_signature(req.headers["svc-webhook-signature"], req.body, signing_keys(http, tok))
        assert header["iat"] == int(expiry.timestamp()), "iat is simulator time"
        assert parse_time(body["created_at"]) == expiry
        time.sleep(0.2)
        assert not_listing.received() == []
        recs = deliveries_of(http, "card.expired")
        assert [r["subscription_id"] for r in recs] == [sub["subscription_id"]]
    finally:
        listing.close()
        not_listing.close()


# --- document requests -----


def test_document_request_created_listed_and_completed(
    http: httpx.Client, token: str, receiver: Receiver
) -> None:
    subscribe(http, token, receiver.url, ["document_request.created", "document_request.completed"])
    j = journey(http, token=token)
    resp = http.post(f"/_sim/persons/{j.person_id}/document_requests", json={})
    assert resp.status_code == 201, resp.text
    doc = resp.json()
    doc_id = doc["document_request_id"]
    assert doc_id.startswith("doc_")
    assert doc["status"] == "open"
    assert doc["person_id"] == j.person_id

    created = receiver.wait_for(1)
    assert len(created) == 1
    assert created[0].json()["type"] == "document_request.created"
    now = clock_now(http)

    listed = list_documents(http, token, j.person_id, j.person_session)
    assert listed.status_code == 200, listed.text
    items = listed.json()["document_requests"]
    assert [d["document_request_id"] for d in items] == [doc_id]
    assert created[0].json()["data"] == items[0]
    assert set(items[0]) == {
        "document_request_id",
        "person_id",
        "account_id",
        "status",
        "document_type",
        "created_at",
        "completed_at",
    }, items[0]
    assert items[0]["status"] == "open" and items[0]["completed_at"] is None
    assert items[0]["account_id"] == j.account_id
    assert items[0]["document_type"] == "proof_of_address"
    assert parse_time(items[0]["created_at"]) == now
    advance(http, 60)

    resp = submit_document(http, token, j.person_session, doc_id, {"kind": "utility_bill"})
    assert resp.status_code == 200, resp.text
    assert resp.json()["status"] == "completed"
    assert parse_time(resp.json()["completed_at"]) == now + timedelta(seconds=60)
    done = receiver.wait_for(2)
    assert [r.json()["type"] for r in done] == ["document_request.created", "document_request.completed"]
    assert done[1].json()["data"]["status"] == "completed"

    resp = submit_document(http, token, j.person_session, doc_id, {"kind": "utility_bill"})
    assert_problem(resp, 409, "document-request-not-open")
    time.sleep(0.2)
    assert len(receiver.received()) == 2


def test_document_request_errors(http: httpx.Client, token: str) -> None:
    j = journey(http, token=token)
    other = journey(http, persona_index=1, token=token)
    doc_id = open_document_request(http, j.person_id)
    path = f"/document_requests/{doc_id}/submit"
    bad = {"encrypted_document": "not.a.jwe.at.all"}
    resp = call(http, "POST", path, token=token, session=j.person_session, json_body=bad)
    assert_problem(resp, 400, "invalid-encrypted-data")
    init = init_data(http, token)
    good = {"encrypted_document": encrypt_for_server(init, {"kind": "x"})}
    assert_problem(call(http, "POST", path, token=token, json_body=good), 401, "session-required")
    assert_problem(
        call(http, "POST", path, token=token, session=other.person_session, json_body=good),
        403,
        "session-not-bound",
    )
    nope = "/document_requests/doc_nope/submit"
    resp = call(http, "POST", nope, token=token, session=j.person_session, json_body=good)
    assert_problem(resp, 404, "document-request-not-found")
    assert_problem(list_documents(http, token, j.person_id, other.person_session), 403, "session-not-bound")
    resp = submit_document(http, token, j.person_session, doc_id, [1, 2])
    body = assert_problem(resp, 422, "validation-error")
    assert body["errors"][0]["field"] == "/encrypted_document"
    token_b = partner_token(http, *PARTNER_B)
    b = journey(http, persona_index=2, token=token_b)
    assert_problem(list_documents(http, token_b, j.person_id, b.person_session), 404, "person-not-found")
    assert_problem(
        call(http, "POST", path, token=token_b, session=b.person_session, json_body=good),
        404,
        "document-request-not-found",
    )
    listed = list_documents(http, token, j.person_id, j.person_session).json()["document_requests"]
    assert listed[0]["status"] == "open", "refused submissions must leave it open"
    assert_problem(list_documents(http, token, j.person_id, j.account_session), 401, "session-superseded")
    resp = call(http, "POST", path, token=token, session=j.person_session, json_body=good)
    assert resp.status_code == 200, resp.text


def test_deliveries_are_in_the_control_plane_with_every_attempt(
    http: httpx.Client, token: str, receiver: Receiver
) -> None:
    receiver.fail_next = 1
    subscribe(http, token, receiver.url, ["card.closed"])
    j = journey(http, token=token, until="account")
    closed(http, token, create_card(http, token, j.account_id)["card_id"])
    receiver.wait_for(1)
    advance(http, 1)
    rec = wait_delivery(http, lambda d: d["status"] == "delivered")
    assert rec, deliveries(http)
    assert [a["status_code"] for a in rec[0]["attempts"]] == [500, 200]
    assert json.loads(receiver.received()[1].body)["id"] == rec[0]["event_id"]


def test_redirects_are_not_followed(http: httpx.Client, token: str) -> None:
    first, target = Receiver(), Receiver()
    try:
        first.redirect_to = target.url
        subscribe(http, token, first.url, ["card.closed"])
        j = journey(http, token=token, until="account")
        closed(http, token, create_card(http, token, j.account_id)["card_id"])
        assert len(first.wait_for(1)) == 1
        rec = wait_delivery(http, lambda d: len(d["attempts"]) == 1)
        assert rec, deliveries(http)
        assert rec[0]["status"] == "pending", "a 302 is not a 2xx: the attempt failed"
        assert rec[0]["attempts"][0]["status_code"] == 302
        time.sleep(0.2)
        assert target.received() == []
    finally:
        first.close()
        target.close()


def test_extra_webhook_hosts_can_be_allowed_at_start() -> None:
    from kit.sim import Settings
    from kit.sim.server import start_embedded

    server = start_embedded(Settings(seed=7, webhook_hosts=("hooks.example.test",)))
    try:
        with httpx.Client(base_url=server.base_url, timeout=10) as client:
            tok = partner_token(client)

            def sub(url: str) -> httpx.Response:
                return subscription_request(client, tok, url, ["card.closed"])

            assert sub("https://hooks.example.test/in").status_code == 201
            assert sub("http://localhost:9/in").status_code == 201
            assert_problem(sub("https://other.example.test/in"), 422, "webhook-url-not-allowed")
    finally:
        server.stop()
