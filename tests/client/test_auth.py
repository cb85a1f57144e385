"""Partner auth: fetched when needed, cached, re-fetched exactly once on a 401 token problem."""

from __future__ import annotations

import httpx
import pytest

import kit
from kit import _env as env
from kit import errors
from kit._auth import TokenGrant, fetch_token
from kit._requestor import CurrentSession
from kit._sensitive import Sensitive
from kit.models import SessionInfo

from .conftest import onboard, record


def _token_requests(recorder) -> int:  # type: ignore[no-untyped-def]
    return sum(1 for r in recorder.requests if r.url.path == "/oauth/accesstoken")


def _token_fetches(api: kit.Client) -> int:
    """Token requests the client made, read from its call history (every one is recorded)."""
    return sum(1 for entry in api.calls.entries() if entry.path == "/oauth/accesstoken")


def test_token_is_fetched_once_and_cached(api: kit.Client) -> None:
    recorder = record(api)
    for _ in range(3):
        api.sessions.init_data()
    assert _token_requests(recorder) == 1
    token_request = next(r for r in recorder.requests if r.url.path == "/oauth/accesstoken")
    assert token_request.headers["authorization"].startswith("Basic ")
    assert token_request.content == b"grant_type=client_credentials"
    assert all(
        r.headers["authorization"].startswith("Bearer ")
        for r in recorder.requests
        if r.url.path != "/oauth/accesstoken"
    )


def test_token_refetched_exactly_once_after_reset_revokes_it(api: kit.Client, sim_url: str) -> None:
    api.sessions.init_data()
    assert _token_fetches(api) == 1
    # Revoke every token behind the client's back (the control plane, register A45).
    assert httpx.post(f"{sim_url}/_sim/reset", json={}).status_code == 200
    recorder = record(api)
    api.sessions.init_data()
    assert _token_fetches(api) == 2
    paths = [r.url.path for r in recorder.requests]
    assert paths == [
        "/sessions/user_session_initialization_data",  # 401 invalid-partner-token
        "/oauth/accesstoken",
        "/sessions/user_session_initialization_data",  # 200
    ]
    history = api.history
    assert list(history["status"].tail(3)) == [401, 200, 200]
    assert history["code"].iloc[-3] == "invalid-partner-token"


def test_a_persistent_401_is_not_retried_in_a_loop(make_client) -> None:  # type: ignore[no-untyped-def]
    api = make_client()
    api.sessions.init_data()
    # Make every new token useless too: revoke after each fetch by swapping in a bad token.
    auth = api._requestor.auth
    original_accept = auth.accept

    def accept_then_spoil(grant: TokenGrant) -> None:
        original_accept(grant._replace(access_token=Sensitive("not-a-real-token")))

    auth.accept = accept_then_spoil  # type: ignore[method-assign]
    auth.invalidate()
    recorder = record(api)
    with pytest.raises(errors.InvalidPartnerToken):
        api.sessions.init_data()
    assert [r.url.path for r in recorder.requests].count("/oauth/accesstoken") == 2
    assert len(recorder.requests) == 4  # token, call(401), token, call(401): then give up


def test_session_401_does_not_refetch_the_token(api: kit.Client) -> None:
    onboard(api, promote=False)
    api.sessions.end()  # the client forgets it…
    fetches = _token_fetches(api)
    stale = api._requestor.current
    assert stale is None
    customer_card_route = "/cards/card_x"
    with pytest.raises(errors.InvalidSession):
        # …so present a dead token by hand: the server answers 401 invalid-session.
        dead = CurrentSession(Sensitive("ses_dead"), SessionInfo("account", "sliding", None, "dev"))
        api._requestor.call("GET", customer_card_route, session=dead)
    assert _token_fetches(api) == fetches


def test_token_info_is_masked(api: kit.Client) -> None:
    info = api.token()
    assert info.token_type == "Bearer" and info.expires_in == 86400 and info.scope == "partner"
    token = info.token.reveal()
    for shown in (repr(info), str(info), info._repr_html_(), repr(api._requestor.auth), repr(api)):
        assert token not in shown
    assert "sim-secret" not in repr(api.config)


def test_fetch_token_makes_the_exchange_on_its_own(sim_url: str) -> None:
    client_id, secret = next(iter(env.SIM_PARTNER_CLIENTS.items()))
    grant = fetch_token(sim_url, client_id, Sensitive(secret))
    assert (grant.token_type, grant.expires_in, grant.scope) == ("Bearer", 86400, "partner")
    assert "access_token" not in grant.raw and grant.access_token.reveal() not in repr(grant)
    with httpx.Client() as http:
        assert fetch_token(sim_url, client_id, Sensitive(secret), http=http).token_type == "Bearer"
    with pytest.raises(errors.InvalidClient):
        fetch_token(sim_url, client_id, Sensitive("wrong-secret"))
    with pytest.raises(errors.TransportError):
        fetch_token("http://127.0.0.1:9", client_id, Sensitive(secret), timeout=2.0)


def test_the_token_fetch_a_call_triggered_sits_inside_it_in_the_history(make_client) -> None:  # type: ignore[no-untyped-def]
    api = make_client()
    api.sessions.init_data()  # needs a partner token: the auth flow fetches one first
    token, init = api.calls.entries()[-2:]
    assert (token.path, init.path) == ("/oauth/accesstoken", "/sessions/user_session_initialization_data")
    # "time" is when a call started: the fetch started after, and ended before, the call it served
    assert init.time <= token.time
    assert token.time.timestamp() + token.ms / 1000 <= init.time.timestamp() + init.ms / 1000 + 0.001
