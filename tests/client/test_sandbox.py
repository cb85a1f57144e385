"""The ``sandbox`` profile against ``kit serve`` in a subprocess: only the base URL and the
credentials change, read from the environment (DESIGN §4)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import kit
from kit.errors import ConfigError
from tests.serving import kit_serve


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    with kit_serve("--no-control", env={"KIT_SIM_PARTNERS": "team-partner:team-secret"}) as url:
        yield url


@pytest.fixture
def sandbox_env(served: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("PARTNER_API_BASE_URL", served)
    monkeypatch.setenv("PARTNER_API_CLIENT_ID", "team-partner")
    monkeypatch.setenv("PARTNER_API_CLIENT_SECRET", "team-secret")
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
    monkeypatch.setenv("PARTNER_API_CLIENT_SECRET", "wrong-secret")
    with kit.connect("sandbox") as api, pytest.raises(kit.ApiError) as caught:
        api.sessions.create("anonymous")
    assert caught.value.status == 401
    assert "wrong-secret" not in str(caught.value)


def test_sandbox_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PARTNER_API_BASE_URL", "PARTNER_API_CLIENT_ID", "PARTNER_API_CLIENT_SECRET"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError) as caught:
        kit.connect("sandbox")
    for name in ("PARTNER_API_BASE_URL", "PARTNER_API_CLIENT_ID", "PARTNER_API_CLIENT_SECRET"):
        assert name in str(caught.value)


def test_a_handed_over_token_is_used_without_fetching(
    sandbox_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # kit regress fetches the partner token once and hands it to kernels by environment.
    import httpx

    token = httpx.post(
        f"{sandbox_env}/oauth/accesstoken",
        data={"grant_type": "client_credentials"},
        auth=("team-partner", "team-secret"),
    ).json()["access_token"]
    monkeypatch.setenv("PARTNER_API_ACCESS_TOKEN", token)
    with kit.connect("sandbox") as api:
        api.sessions.create("anonymous")
        assert "/oauth/accesstoken" not in set(api.history["path"])
        assert token not in repr(api) and token not in api.history.to_csv()


def test_a_refused_handed_over_token_is_replaced_once(
    sandbox_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARTNER_API_ACCESS_TOKEN", "not-a-valid-token")
    with kit.connect("sandbox") as api:
        api.sessions.create("anonymous")
        paths = list(api.history["path"])
        assert paths.count("/oauth/accesstoken") == 1
