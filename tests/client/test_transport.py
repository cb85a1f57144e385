"""Retries: bounded, backoff with jitter, Retry-After honoured, one Idempotency-Key."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest

import kit
from kit import errors, register

from .conftest import onboard, record


def _two_customers(make_client):  # type: ignore[no-untyped-def]
    a = onboard(make_client(), 0)
    b = onboard(make_client(), 1)
    return a, b


def test_after_commit_fault_retried_with_one_key_moves_money_once(make_client, sleeps) -> None:  # type: ignore[no-untyped-def]
    a, b = _two_customers(make_client)
    before = a.api.sim.ledger().set_index("account_id")["balance"]
    a.api.sim.add_fault("POST", "/p2p/transfers", status=503, when="after_commit", times=1)
    recorder = record(a.api)
    transfer = a.api.p2p.transfer(
        from_account_id=a.account_id, to_person_id=b.person_id, amount="12.50", memo="lunch"
    )
    posts = [r for r in recorder.requests if r.url.path == "/p2p/transfers"]
    assert len(posts) == 2
    keys = {r.headers["idempotency-key"] for r in posts}
    assert len(keys) == 1
    assert posts[0].content == posts[1].content
    assert transfer.status == "completed" and transfer.amount == kit.Money(Decimal("12.50"))
    row = a.api.history.iloc[-1]
    assert (row["path"], row["status"], row["retries"], bool(row["replayed"])) == (
        "/p2p/transfers",
        201,
        1,
        True,
    )
    after = a.api.sim.ledger().set_index("account_id")["balance"]
    assert after[a.account_id] == before[a.account_id] - Decimal("12.50")
    assert after[b.account_id] == before[b.account_id] + Decimal("12.50")
    transfers = a.api.sim.ledger("transfers")
    assert len(transfers) == 1
    assert len(sleeps) == 1


def test_retry_after_is_honoured_and_retries_are_bounded(make_client, sleeps) -> None:  # type: ignore[no-untyped-def]
    api = make_client(max_retries=3)
    api.sim.add_fault("GET", "/sessions/user_session_initialization_data", status=503, retry_after=7)
    with pytest.raises(errors.InjectedFault) as info:
        api.sessions.init_data()
    assert sleeps == [7.0, 7.0, 7.0]
    assert info.value.retry_after == 7.0
    assert api.history.iloc[-1]["retries"] == 3


def test_backoff_is_exponential_with_seeded_jitter(make_client, sleeps) -> None:  # type: ignore[no-untyped-def]
    api = make_client(max_retries=4, backoff_base=1.0, backoff_cap=100.0, seed=42)
    api.sim.add_fault("GET", "/sessions/user_session_initialization_data", status=429)
    with pytest.raises(errors.InjectedFault) as info:
        api.sessions.init_data()
    assert info.value.status == 429
    rng = random.Random(42)
    expected = [c / 2 + rng.uniform(0, c / 2) for c in (1.0, 2.0, 4.0, 8.0)]
    assert sleeps == pytest.approx(expected)
    for attempt, delay in enumerate(sleeps):
        assert 2**attempt / 2 <= delay <= 2**attempt


def test_a_fault_that_clears_lets_the_call_succeed(make_client, sleeps) -> None:  # type: ignore[no-untyped-def]
    api = make_client()
    api.sim.add_fault("GET", "/sessions/user_session_initialization_data", status=503, times=2)
    init = api.sessions.init_data()
    assert init.enc == ("A256GCM",)
    assert len(sleeps) == 2 and api.history.iloc[-1]["retries"] == 2


def test_connection_errors_are_retried_then_wrapped(make_client, sleeps) -> None:  # type: ignore[no-untyped-def]
    api = make_client(base_url="http://127.0.0.1:9", max_retries=2)
    with pytest.raises(errors.TransportError, match="3 attempt"):
        api.sim.clock()
    assert len(sleeps) == 2
    assert api.history.iloc[-1]["code"] == "connection-error"


def test_every_partner_post_carries_a_fresh_idempotency_key(api: kit.Client) -> None:
    recorder = record(api)
    api.sessions.create("anonymous")
    api.accounts.create()
    api.accounts.create()
    posts = [r for r in recorder.requests if r.method == "POST" and r.url.path != "/oauth/accesstoken"]
    keys = [r.headers.get("idempotency-key") for r in posts]
    assert all(keys) and len(set(keys)) == len(keys) == 3
    token_posts = [r for r in recorder.requests if r.url.path == "/oauth/accesstoken"]
    assert all("idempotency-key" not in r.headers for r in token_posts)


def test_a_given_idempotency_key_replays(api: kit.Client) -> None:
    api.sessions.create("anonymous")
    first = api.accounts.create(idempotency_key="fixed-key-1")
    again = api.accounts.create(idempotency_key="fixed-key-1")
    assert first.account_id == again.account_id
    assert bool(api.history.iloc[-1]["replayed"]) is True
    with pytest.raises(errors.IdempotencyKeyReused):
        api.cards.create(first.account_id, type="virtual", idempotency_key="fixed-key-1")


@pytest.mark.parametrize("when", ["before_commit", "after_commit"])
def test_session_requests_survive_a_fault(make_client, sleeps, when: str) -> None:  # type: ignore[no-untyped-def]
    api = make_client()
    api.sessions.create("anonymous")
    account = api.accounts.create()
    api.sim.add_fault("POST", "/sessions", status=503, when=when, times=1)
    info = api.sessions.promote("account", account_id=account.account_id)
    assert info.session_type == "account" and len(sleeps) == 1
    # The session the client now holds works (a replay gave the new session, not a 401).
    assert api.cards.create(account.account_id, type="virtual").status == "active"


def test_a_rate_limited_session_request_is_the_429_not_a_spent_nonce(make_client, sleeps) -> None:  # type: ignore[no-untyped-def]
    """A device past its sessions a minute (A32) gets 429 rate-limited with Retry-After. The
    refused request used up its nonce (A04), so the client does not send it again after the wait
    (it would be refused as nonce-invalid, hiding the limit); other calls still retry a 429."""
    api = make_client()
    limit = int(register.value("A32")["max_sessions_per_device_per_minute"])
    for _ in range(limit):
        api.sessions.create("anonymous")
    with pytest.raises(errors.RateLimited) as caught:
        api.sessions.create("anonymous")
    assert caught.value.retry_after is not None and caught.value.retry_after > 0
    last = api.history.iloc[-1]
    assert (last["method"], last["path"], last["status"]) == ("POST", "/sessions", 429)
    assert last["retries"] == 0 and sleeps == []


def test_a_plain_http_client_loads_no_ca_and_trusts_nothing(api: kit.Client) -> None:
    """A client of the embedded simulator (``http://127.0.0.1``) never does TLS, so it skips the CA
    bundle; its context still requires a verified certificate, and with no CA none verifies."""
    import ssl

    from kit._tls import shared_ssl_context, tls_context_for

    plain = tls_context_for(api.config.base_url or "")
    assert (api.config.base_url or "").startswith("http://")
    assert plain.cert_store_stats()["x509_ca"] == 0 and plain.get_ca_certs() == []
    assert plain.verify_mode == ssl.CERT_REQUIRED and plain.check_hostname
    for tls in ("https://sandbox.example", "HTTPS://sandbox.example", "ftp://elsewhere"):
        assert tls_context_for(tls) is shared_ssl_context()
    assert shared_ssl_context().verify_mode == ssl.CERT_REQUIRED
