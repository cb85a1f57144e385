"""Webhook verification (kit.webhooks.verify) and the sim profile's loopback receiver."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from joserfc import jws
from joserfc.jwk import ECKey
from joserfc.jws import JWSRegistry

import kit
import kit.crypto
from kit import errors
from kit.webhooks import verify

from .conftest import onboard

KEY = ECKey.import_key(
    json.loads((Path(__file__).parents[1] / "keys" / "device_ec_p256_fixed.json").read_text())
)
OTHER = ECKey.import_key(
    json.loads((Path(__file__).parents[1] / "keys" / "device_ec_p256_fixed_b.json").read_text())
)
JWKS = {"keys": [{**KEY.as_dict(private=False), "kid": "sig-1", "use": "sig", "alg": "ES256"}]}
REG = JWSRegistry(algorithms=["ES256"], strict_check_header=False)
NOW = 1736154000


def _delivery(
    event_id: str = "evt_1", *, key: ECKey = KEY, body_id: str | None = None, **header: object
) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(
        {
            "id": body_id or event_id,
            "type": "card.closed",
            "api_version": "1.2.0-20221215",
            "created_at": "2025-01-06T09:00:00Z",
            "data": {"card_id": "card_1", "status": "closed"},
        }
    ).encode()
    protected = {"alg": "ES256", "kid": "sig-1", "iat": NOW, "svc_event_id": event_id, **header}
    compact = jws.serialize_compact(protected, body, key, registry=REG)
    head, _, signature = compact.split(".")
    return body, {"svc-webhook-signature": f"{head}..{signature}"}


def test_a_good_delivery_verifies() -> None:
    body, headers = _delivery()
    event = verify(body, headers, JWKS, now=NOW + 10, seen=None)
    assert (event.id, event.type, event.kid, event.iat) == ("evt_1", "card.closed", "sig-1", NOW)
    assert event.data["card_id"] == "card_1"


def test_headers_are_case_insensitive() -> None:
    body, headers = _delivery()
    shouted = {"SVC-Webhook-Signature": headers["svc-webhook-signature"]}
    event = verify(body, shouted, JWKS, now=NOW, seen=None)  # not found: SignatureMissing
    assert (event.id, event.kid, event.iat) == ("evt_1", "sig-1", NOW)
    assert event == verify(body, headers, JWKS, now=NOW, seen=None)


def test_a_tampered_body_is_rejected() -> None:
    body, headers = _delivery()
    tampered = body.replace(b'"closed"', b'"active"')
    with pytest.raises(errors.SignatureInvalid):
        verify(tampered, headers, JWKS, now=NOW, seen=None)


def test_a_signature_by_another_key_is_rejected() -> None:
    body, headers = _delivery(key=OTHER)
    with pytest.raises(errors.SignatureInvalid):
        verify(body, headers, JWKS, now=NOW, seen=None)


def test_an_unknown_kid_is_rejected() -> None:
    body, headers = _delivery(kid="sig-unknown")
    with pytest.raises(errors.UnknownSigningKey):
        verify(body, headers, JWKS, now=NOW, seen=None)


def test_event_id_must_match_the_body() -> None:
    body, headers = _delivery("evt_1", body_id="evt_2")
    with pytest.raises(errors.EventMismatch):
        verify(body, headers, JWKS, now=NOW, seen=None)


@pytest.mark.parametrize("offset", [301, -301, 3600])
def test_skew_over_five_minutes_is_rejected(offset: int) -> None:
    body, headers = _delivery()
    with pytest.raises(errors.SignatureExpired):
        verify(body, headers, JWKS, now=NOW + offset, seen=None)
    verify(body, headers, JWKS, now=NOW + (300 if offset > 0 else -300), seen=None)


def test_duplicates_are_rejected_and_only_verified_ids_are_remembered() -> None:
    seen: set[str] = set()
    body, headers = _delivery()
    forged_body, forged_headers = _delivery(key=OTHER)
    with pytest.raises(errors.SignatureInvalid):
        verify(forged_body, forged_headers, JWKS, now=NOW, seen=seen)
    assert seen == set()
    verify(body, headers, JWKS, now=NOW, seen=seen)
    with pytest.raises(errors.DuplicateDelivery):
        verify(body, headers, JWKS, now=NOW, seen=seen)


def test_missing_and_malformed_signatures() -> None:
    body, headers = _delivery()
    with pytest.raises(errors.SignatureMissing):
        verify(body, {}, JWKS, now=NOW, seen=None)
    head, _, sig = headers["svc-webhook-signature"].split(".")
    payload = base64.urlsafe_b64encode(body).rstrip(b"=").decode()
    with pytest.raises(errors.SignatureMalformed):  # attached, not detached
        verify(body, {"svc-webhook-signature": f"{head}.{payload}.{sig}"}, JWKS, now=NOW, seen=None)
    with pytest.raises(errors.SignatureMalformed):
        verify(body, {"svc-webhook-signature": "not-a-jws"}, JWKS, now=NOW, seen=None)


@pytest.mark.parametrize("extra", [{"b64": False, "crit": ["b64"]}, {"crit": ["kid"]}])
def test_b64_and_crit_headers_are_refused(extra: dict) -> None:
    body, headers = _delivery(**extra)
    with pytest.raises(errors.SignatureInvalid, match="b64 or crit"):
        verify(body, headers, JWKS, now=NOW, seen=None)


def test_other_algorithms_are_refused() -> None:
    body, _ = _delivery()
    header = (
        base64.urlsafe_b64encode(
            json.dumps({"alg": "none", "kid": "sig-1", "iat": NOW, "svc_event_id": "evt_1"}).encode()
        )
        .rstrip(b"=")
        .decode()
    )
    with pytest.raises(errors.SignatureInvalid, match="only ES256"):
        verify(body, {"svc-webhook-signature": f"{header}..AAAA"}, JWKS, now=NOW, seen=None)


# -- the receiver, against the simulator ------------------------------------------------------


def test_receiver_gets_and_verifies_card_closed(api: kit.Client, capfd: pytest.CaptureFixture[str]) -> None:
    customer = onboard(api)
    subscription = api.webhooks.listen()
    assert subscription.url.startswith("http://127.0.0.1:")
    card = api.cards.create(customer.account_id, type="temporary")
    api.cards.close(card.card_id, reason="lost")
    event = api.webhooks.wait_for("card.closed", timeout=10)
    assert event.data["card_id"] == card.card_id and event.data["close_reason"] == "lost"
    assert event.created_at == api.sim.clock()
    events = api.webhooks.events
    row = events[events["id"] == event.id].iloc[0]
    assert bool(row["verified"]) and not bool(row["duplicate"]) and row["resource_id"] == card.card_id
    assert "data" not in events.columns
    deliveries = api.sim.deliveries()
    assert list(deliveries[deliveries["event_id"] == event.id]["status"]) == ["delivered"]
    with pytest.raises(errors.WebhookTimeout):
        api.webhooks.wait_for("card.closed", timeout=0.3)  # the one event was taken
    assert capfd.readouterr().err == ""  # neither the simulator nor the receiver logs


def test_wait_received_returns_what_arrived_verified_or_not(api: kit.Client) -> None:
    customer = onboard(api)
    api.webhooks.listen()
    api.webhooks._keys = kit.crypto.WebhookKeys(JWKS)  # type: ignore[attr-defined]
    api.webhooks._receiver._refresh = None  # type: ignore[union-attr]
    with pytest.raises(errors.WebhookTimeout, match=r"card\.closed"):
        api.webhooks.wait_received("card.closed", timeout=0.2)
    first, second = (api.cards.create(customer.account_id, type="virtual").card_id for _ in range(2))
    api.cards.close(first)
    events = api.webhooks.wait_received("card.closed", timeout=10)
    assert list(events["type"]) == ["card.closed"] and not events["verified"].any()
    assert list(events["resource_id"]) == [first]  # read from the body as sent, unsigned or not
    with pytest.raises(errors.WebhookTimeout, match=second):
        api.webhooks.wait_received("card.closed", resource_id=second, timeout=0.2)
    api.cards.close(second)
    mine = api.webhooks.wait_received("card.closed", resource_id=second, timeout=10)
    assert list(mine["resource_id"]) == [second]  # another card's delivery is not this one's
    assert len(api.webhooks.events) == 2


def test_document_request_webhooks(api: kit.Client) -> None:
    customer = onboard(api)
    api.webhooks.listen()
    created = api.sim.create_document_request(customer.person_id)
    event = api.webhooks.wait_for("document_request.created", timeout=10)
    assert event.data["document_request_id"] == created.document_request_id
    listed = api.document_requests.list(customer.person_id)
    assert [d.document_request_id for d in listed] == [created.document_request_id]
    done = api.document_requests.submit(created.document_request_id, document={"kind": "utility_bill"})
    assert done.status == "completed"
    api.webhooks.wait_for("document_request.completed", timeout=10)
    with pytest.raises(errors.DocumentRequestNotOpen):
        api.document_requests.submit(created.document_request_id, document={"kind": "again"})


def test_deliveries_to_a_rejecting_receiver_are_recorded_as_failures(
    api: kit.Client, capfd: pytest.CaptureFixture[str]
) -> None:
    customer = onboard(api)
    api.webhooks.listen()
    # Rotate the receiver's keys to a set that does not hold the simulator's key.
    api.webhooks._keys = kit.crypto.WebhookKeys(JWKS)  # type: ignore[attr-defined]
    api.webhooks._receiver._refresh = None  # type: ignore[union-attr]
    card = api.cards.create(customer.account_id, type="virtual")
    api.cards.close(card.card_id)
    with pytest.raises(errors.WebhookTimeout):
        api.webhooks.wait_for("card.closed", timeout=1.0)
    events = api.webhooks.events
    assert list(events["error"]) == ["UnknownSigningKey"]
    assert not events["verified"].any()
    assert capfd.readouterr().err == ""


def test_subscribing_old_names_explains_the_rename(api: kit.Client) -> None:
    with pytest.raises(errors.EventRenamed) as info:
        api.webhooks.subscribe("http://127.0.0.1:9/x", ["person.document_request.created"])
    assert info.value.renamed == {"person.document_request.created": "document_request.created"}
    assert "document_request.created" in str(info.value)


def test_after_a_reset_the_session_is_dropped_and_the_receiver_subscribes_again(api: kit.Client) -> None:
    api.webhooks.listen()
    onboard(api)
    api.sim.reset(7)  # every subscription, token and session is gone on the simulator's side
    assert api.session is None and api.webhooks.events.empty
    customer = onboard(api)
    card = api.cards.create(customer.account_id, type="virtual")
    api.cards.close(card.card_id, reason="lost")
    assert api.webhooks.wait_for("card.closed", timeout=10).data["card_id"] == card.card_id


# -- replay protection is the caller's, said in the call ---------------------------------------


def test_verify_asks_for_the_replay_store_and_none_checks_no_replay() -> None:
    body, headers = _delivery()
    with pytest.raises(TypeError, match="seen"):
        verify(body, headers, JWKS, now=NOW)  # type: ignore[call-arg]
    verify(body, headers, JWKS, now=NOW, seen=None)
    verify(body, headers, JWKS, now=NOW, seen=None)  # replayed, and nothing says so: no store
    assert "no replay check" in " ".join((verify.__doc__ or "").split()).lower()


# -- the receiver reads a body only by a Content-Length it can trust ---------------------------


def _raw_post(url: str, length: str, body: bytes = b"") -> tuple[int, dict[str, object]]:
    import socket
    from urllib.parse import urlsplit

    where = urlsplit(url)
    with socket.create_connection((where.hostname, where.port), timeout=5) as sock:
        head = f"POST {where.path} HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n"
        sock.sendall(head.encode() + body)  # the connection stays open: "to the end" never comes
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    head_part, _, payload = answer.partition(b"\r\n\r\n")
    return int(head_part.split()[1]), json.loads(payload)


@pytest.mark.parametrize(
    ("length", "status", "code"),
    [
        ("-1", 400, "invalid-content-length"),
        ("-5", 400, "invalid-content-length"),
        ("0x10", 400, "invalid-content-length"),
        (str(10**9), 413, "payload-too-large"),
    ],
)
def test_the_receiver_refuses_a_negative_or_oversize_content_length(
    length: str, status: int, code: str
) -> None:
    from datetime import UTC, datetime

    from kit.webhooks import Receiver

    receiver = Receiver(keys=lambda: kit.crypto.WebhookKeys(JWKS), clock=lambda: datetime.now(UTC))
    try:
        got, problem = _raw_post(receiver.url, length, b"{}")
        assert (got, problem["status"], problem["code"]) == (status, status, code)
        assert receiver.frame().empty  # nothing was read, nothing recorded as a delivery
    finally:
        receiver.close()
