"""Deprecated endpoints are refused unless allowed; then they warn."""

from __future__ import annotations

import warnings

import pytest

import kit
from kit import errors


def test_legacy_endpoints_are_refused_by_default(api: kit.Client) -> None:
    with pytest.raises(errors.DeprecatedEndpoint, match="must not be used"):
        api.legacy_token()
    with pytest.raises(errors.DeprecatedEndpoint) as refused:
        api.legacy_revoke()
    assert "oauth" not in refused.value.hint  # the spec names no replacement for the DELETE
    assert len(api.history) == 0  # refused before any request


def test_only_the_post_is_said_to_have_a_replacement(make_client) -> None:  # type: ignore[no-untyped-def]
    """endpoint.2 names POST /oauth/accesstoken as the POST's replacement; endpoint.3 names none."""
    api = make_client(allow_deprecated=True)
    with pytest.warns(DeprecationWarning) as caught:
        legacy = api.legacy_token()
        api.legacy_revoke(legacy)
    post, delete = (str(w.message) for w in caught)
    assert post.startswith("POST ") and post.endswith("use POST /oauth/accesstoken")
    assert delete.startswith("DELETE ") and "oauth" not in delete and "names no replacement" in delete


def test_allowed_legacy_token_warns_and_works(make_client) -> None:  # type: ignore[no-untyped-def]
    api = make_client(allow_deprecated=True)
    with pytest.warns(DeprecationWarning, match="POST /oauth/accesstoken"):
        info = api.legacy_token()
    assert info.token_type == "Bearer"
    assert info.token.reveal() not in repr(info)
    assert api.history.iloc[-1]["path"] == "/authorization/server_api/access_tokens"


def test_legacy_revoke_revokes_and_the_client_recovers(make_client) -> None:  # type: ignore[no-untyped-def]
    api = make_client(allow_deprecated=True)
    api.sessions.init_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        api.legacy_revoke()
    assert api._requestor.auth.token is None
    api.sessions.init_data()  # a new token is fetched
    assert [e.path for e in api.calls.entries()].count("/oauth/accesstoken") == 2


def test_revoking_a_given_legacy_token(make_client) -> None:  # type: ignore[no-untyped-def]
    api = make_client(allow_deprecated=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        legacy = api.legacy_token()
        api.legacy_revoke(legacy)
    # The legacy token is dead; the client's own token is untouched.
    with pytest.raises(errors.InvalidPartnerToken):
        api._requestor.transport.request(
            "GET",
            "/webhooks/jwks",
            headers={"Authorization": f"Bearer {legacy.token.reveal()}"},
            partner=False,
        )
    api.sessions.init_data()


def test_a_legacy_token_carries_the_deprecation_headers(make_client) -> None:  # type: ignore[no-untyped-def]
    import warnings

    api = make_client(allow_deprecated=True)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        legacy = api.legacy_token()
    assert legacy.deprecation == "@1671062400"
    assert legacy.link == '</oauth/accesstoken>; rel="successor-version"'
    assert "@1671062400" in repr(legacy) and legacy.token.reveal() not in repr(legacy)
