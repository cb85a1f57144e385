"""The client speaking a dialect, over an ``httpx.MockTransport`` (no server): the token
request's client authentication (A01), the re-fetch of a refused token by RFC 6750, their codes
mapped to the kit's classes (A64), a moved path (A67) and the 404 that names its key."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest

import kit
from kit import errors
from tests.client.test_mock_transport import _client

pytestmark = pytest.mark.drift_expected  # the stand-ins answer only what each test needs

Handler = Callable[[httpx.Request], httpx.Response]


def dialect(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "dialect.toml"
    path.write_text(text, encoding="utf-8")
    return path


def client(handler: Handler, choices: Path | None = None) -> kit.Client:
    return _client(handler, choices=choices)


def token(request: httpx.Request, tokens: list[str]) -> httpx.Response:
    tokens.append(f"tok-{len(tokens) + 1}")
    return httpx.Response(200, json={"access_token": tokens[-1], "token_type": "Bearer", "expires_in": 3600})


def problem(status: int, code: str, **headers: str) -> httpx.Response:
    body = {"type": "about:blank", "title": code, "status": status, "code": code}
    return httpx.Response(status, json=body, headers={"content-type": "application/problem+json", **headers})


def test_form_post_client_authentication_sends_no_basic(tmp_path: Path) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return token(request, [])

    with client(handler, dialect(tmp_path, '[A01]\nclient_auth = "post"\n')) as api:
        api.token()
    (sent,) = seen
    form = dict(parse_qsl(sent.content.decode()))
    assert "authorization" not in sent.headers
    assert form == {
        "grant_type": "client_credentials",
        "client_id": "partner-1",
        "client_secret": "s3cret-value",
    }
    with client(handler) as ours:
        ours.token()
    assert seen[-1].headers["authorization"].startswith("Basic ") and b"client_secret" not in seen[-1].content


def test_a_token_refused_by_rfc_6750_is_fetched_again_whatever_the_code(tmp_path: Path) -> None:
    tokens: list[str] = []
    presented: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/oauth/accesstoken":
            return token(request, tokens)
        presented.append(request.headers["x-partner-token"])
        if len(presented) == 1:  # the first token is refused with a generic code
            return problem(401, "unauthorized", **{"www-authenticate": 'Token error="invalid_token"'})
        return httpx.Response(200, json={"keys": []})

    text = '[A02]\nheader = "X-Partner-Token"\nscheme = "Token"\n'
    text += '[A64.codes]\ninvalid-partner-token = "unauthorized"\n'
    with client(handler, dialect(tmp_path, text)) as api:
        assert api.webhooks.jwks() == {"keys": []}
    assert presented == ["Token tok-1", "Token tok-2"]


def test_one_code_of_theirs_for_several_of_ours_is_their_shared_class(tmp_path: Path) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/oauth/accesstoken":
            return token(request, [])
        return problem(404, "gone")

    text = '[A64.codes]\ncard-not-found = "gone"\ntransfer-not-found = "gone"\n'
    with client(handler, dialect(tmp_path, text)) as api, pytest.raises(errors.NotFound) as missing:
        api.cards.get("card_1")
    error = missing.value
    assert type(error) is errors.NotFound and error.code == "gone"
    assert "card-not-found, transfer-not-found" in str(error)
    one = dialect(tmp_path, '[A64.codes]\ncard-not-found = "gone"\n')
    with client(handler, one) as api, pytest.raises(errors.CardNotFound):
        api.cards.get("card_1")  # one of ours: its own class


def test_a_moved_path_is_called_and_a_404_names_its_key(tmp_path: Path) -> None:
    paths: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/oauth/accesstoken":
            return token(request, [])
        paths.append(request.url.raw_path.decode())
        return problem(404, "not-found")

    text = '[A67.paths]\nget_card = "/v2/payment-cards/{card_id}"\n'
    with client(handler, dialect(tmp_path, text)) as api, pytest.raises(errors.ApiError) as moved:
        api.cards.get("card 1")
    assert paths == ["/v2/payment-cards/card%201"]
    assert "GET /v2/payment-cards/card%201 is A67 paths.get_card, this dialect file's" in str(moved.value)
    with client(handler) as ours, pytest.raises(errors.ApiError) as plain:
        ours.cards.get("card_2")
    assert (
        "check the id, or the path: GET /cards/card_2 is A67 paths.get_card, the simulator's choice"
        in str(plain.value)
    )


def test_partner_api_choices_names_the_file_for_every_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Any] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return token(request, [])

    monkeypatch.setenv("PARTNER_API_CHOICES", str(dialect(tmp_path, '[A01]\nclient_auth = "post"\n')))
    with client(handler) as api:
        api.token()
    assert "authorization" not in seen[-1].headers
    monkeypatch.setenv("PARTNER_API_CHOICES", str(dialect(tmp_path, '[A01]\nclient_auth = "mtls"\n')))
    with pytest.raises(errors.ConfigError, match=r"\[A01\] client_auth"):
        client(handler)
