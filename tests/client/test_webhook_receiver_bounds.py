"""What anyone on this machine can make the client's loopback receiver spend (issue 58, finding 9):
key fetches for unknown kids, the rows it keeps, a connection that sends nothing."""

from __future__ import annotations

import socket
import time
from datetime import UTC, datetime
from urllib.parse import urlsplit

import httpx
import pytest

import kit
import kit.crypto
from kit.webhooks import IDLE_TIMEOUT_S, MAX_RECEIVED, Receiver

from .test_webhooks import JWKS, _delivery

#: Posts with a kid the receiver does not know, all within one refresh interval.
UNKNOWN_KID_POSTS = 5


def _jwks_fetches(api: kit.Client) -> int:
    history = api.history
    return int((history["path"] == "/webhooks/jwks").sum())


def test_unknown_kids_within_the_interval_fetch_the_keys_at_most_once(api: kit.Client) -> None:
    url = api.webhooks.listen().url  # fetches the keys once, to subscribe
    before = _jwks_fetches(api)
    with httpx.Client(timeout=10) as client:
        for n in range(UNKNOWN_KID_POSTS):
            body, headers = _delivery(f"evt_forged_{n}", kid=f"sig-unknown-{n}")
            assert client.post(url, content=body, headers=headers).status_code == 400
    assert _jwks_fetches(api) - before <= 1, api.history[["method", "path", "status"]]
    events = api.webhooks.events
    assert list(events["error"]) == ["UnknownSigningKey"] * UNKNOWN_KID_POSTS
    assert not events["verified"].any()


@pytest.mark.slow  # a thousand and more deliveries posted: ≈4 s
def test_the_receiver_keeps_at_most_its_maximum_of_rows_the_oldest_dropped() -> None:
    receiver = Receiver(keys=lambda: kit.crypto.WebhookKeys(JWKS), clock=lambda: datetime.now(UTC))
    extra = 25
    try:
        with httpx.Client(timeout=10) as client:
            for n in range(MAX_RECEIVED + extra):  # unsigned: each answered 400 and recorded
                assert client.post(receiver.url, content=b'{"id": "evt_%d"}' % n).status_code == 400
        ids = list(receiver.frame()["id"])
        assert len(ids) == MAX_RECEIVED
        assert (ids[0], ids[-1]) == (f"evt_{extra}", f"evt_{MAX_RECEIVED + extra - 1}")
    finally:
        receiver.close()


@pytest.mark.slow  # it waits out the idle timeout: ≈10 s
def test_a_connection_that_sends_nothing_is_closed_after_the_idle_timeout() -> None:
    receiver = Receiver(keys=lambda: kit.crypto.WebhookKeys(JWKS), clock=lambda: datetime.now(UTC))
    where = urlsplit(receiver.url)
    try:
        with socket.create_connection((where.hostname, where.port), timeout=IDLE_TIMEOUT_S + 5) as sock:
            started = time.monotonic()
            assert sock.recv(1) == b"", "the receiver answered a request never sent"
            waited = time.monotonic() - started  # recv raises TimeoutError if it stays open
        assert waited >= IDLE_TIMEOUT_S - 1, f"closed after {waited:.1f} s, before the time-out"
    finally:
        receiver.close()
