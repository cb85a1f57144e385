"""The ``sandbox`` profile against ``kit serve`` in a subprocess: only the base URL and the
credentials change, read from the environment (names in :mod:`kit._env`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import kit
from kit import _env as env
from kit._auth import fetch_token
from kit._sensitive import Sensitive
from tests.support.launcher import serve_process


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    with serve_process("--no-control", env={env.SIM_PARTNERS: "team-partner:team-secret"}) as server:
        yield server.base_url


@pytest.fixture
def sandbox_env(served: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(env.BASE_URL, served)
    monkeypatch.setenv(env.CLIENT_ID, "team-partner")
    monkeypatch.setenv(env.CLIENT_SECRET, "team-secret")
    return served


def test_sandbox_profile_reaches_an_account_and_closes_a_card(sandbox_env: str) -> None:
    with kit.connect("sandbox") as api:
        session = api.sessions.create("anonymous", expiration="fixed")
        assert session.session_type == "anonymous"
        account = api.accounts.create()
        assert account.account_id.startswith("acc_")
        api.sessions.promote("account", account_id=account.account_id)
        card = api.cards.create(account.account_id, type="virtual")
        closed = api.cards.close(card.card_id, reason="damaged")
        assert (closed.status, closed.close_reason) == ("closed", "damaged")
        assert set(api.history["status"]) <= {200, 201}
        # The control plane is a simulator-only part of the kit.
        with pytest.raises(AttributeError):
            api.sim  # noqa: B018


def test_sandbox_credentials_come_from_the_environment(
    sandbox_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(env.CLIENT_SECRET, "wrong-secret")
    with kit.connect("sandbox") as api, pytest.raises(kit.ApiError) as caught:
        api.sessions.create("anonymous")
    assert caught.value.status == 401
    assert "wrong-secret" not in str(caught.value)


def test_a_handed_over_token_is_used_without_fetching(
    sandbox_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # kit regress fetches the partner token once and hands it to kernels by environment.
    token = fetch_token(sandbox_env, "team-partner", Sensitive("team-secret")).access_token.reveal()
    monkeypatch.setenv(env.ACCESS_TOKEN, token)
    with kit.connect("sandbox") as api:
        api.sessions.create("anonymous")
        assert "/oauth/accesstoken" not in set(api.history["path"])
        assert token not in repr(api) and token not in api.history.to_csv()


def test_a_refused_handed_over_token_is_replaced_once(
    sandbox_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(env.ACCESS_TOKEN, "not-a-valid-token")
    with kit.connect("sandbox") as api:
        api.sessions.create("anonymous")
        paths = list(api.history["path"])
        assert paths.count("/oauth/accesstoken") == 1
