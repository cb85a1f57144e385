"""Partner auth: fetched when needed, cached, re-fetched exactly once on a 401 token problem."""

from __future__ import annotations

import httpx
import pytest

import kit
from kit import errors

from .conftest import onboard, record


def _token_requests(recorder) -> int:  # type: ignore[no-untyped-def]
    return sum(1 for r in recorder.requests if r.url.path == "/oauth/accesstoken")


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
    assert api._transport.auth.fetch_count == 1
    # Revoke every token behind the client's back (DESIGN §3.11).
    assert httpx.post(f"{sim_url}/_sim/reset", json={}).status_code == 200
    recorder = record(api)
    api.sessions.init_data()
    assert api._transport.auth.fetch_count == 2
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
    auth = api._transport.auth
    original_store = auth.store

    def store_then_spoil(body):  # type: ignore[no-untyped-def]
        ok = original_store(dict(body, access_token="not-a-real-token"))
        return ok

    auth.store = store_then_spoil  # type: ignore[method-assign]
    auth.invalidate()
    recorder = record(api)
    with pytest.raises(errors.InvalidPartnerToken):
        api.sessions.init_data()
    assert [r.url.path for r in recorder.requests].count("/oauth/accesstoken") == 2
    assert len(recorder.requests) == 4  # token, call(401), token, call(401): then give up


def test_session_401_does_not_refetch_the_token(api: kit.Client) -> None:
    onboard(api, promote=False)
    api.sessions.end()  # the client forgets it…
    fetches = api._transport.auth.fetch_count
    stale = api._current
    assert stale is None
    customer_card_route = "/cards/card_x"
    with pytest.raises(errors.InvalidSession):
        # …so present a dead token by hand: the server answers 401 invalid-session.
        from kit.sensitive import Sensitive
        from kit.sessions import CurrentSession

        dead = CurrentSession(Sensitive("ses_dead"), "account", "sliding", None, "dev")
        api._call("GET", customer_card_route, session=dead)
    assert api._transport.auth.fetch_count == fetches


def test_token_info_is_masked(api: kit.Client) -> None:
    info = api.token()
    assert info.token_type == "Bearer" and info.expires_in == 86400 and info.scope == "partner"
    token = info.token.reveal()
    for shown in (repr(info), str(info), info._repr_html_(), repr(api._transport.auth), repr(api)):
        assert token not in shown
    assert "sim-secret" not in repr(api.config)
