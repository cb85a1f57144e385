"""The client pins a version (A27): the header on every call, the token where that version issues
it, ``api.api_version`` from the server, a typed error on a mismatch, and no drift for 1.1.0."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

import kit
from kit import errors
from kit._config import resolve
from kit._contract import Contract
from kit._transport import Transport

OLD, NEW = "1.1.0", "1.2.0-20221215"


def test_a_pinned_client_sends_the_version_and_takes_its_token_where_that_version_issues_it(
    make_client: Callable[..., kit.Client],
) -> None:
    api = make_client(api_version=OLD)
    assert api.api_version is None  # nothing answered yet
    api.token()
    api.sessions.create("anonymous")
    account = api.accounts.create()
    api.sessions.promote("account", account_id=account.account_id)
    assert api.api_version == OLD
    rows = api.history[["method", "path", "status"]].values.tolist()
    assert rows[0] == ["POST", "/authorization/server_api/access_tokens", 200]  # 1.1.0's own
    assert "/oauth/accesstoken" not in api.history["path"].tolist()
    with pytest.raises(errors.UnknownCardType) as refused:  # change 3
        api.cards.create(account.account_id, type="temporary")
    assert refused.value.allowed == ["physical", "virtual"]
    old = api.legacy_token()  # not refused, no warning: not deprecated in 1.1.0
    assert old.deprecation is None and old.token_type == "Bearer"
    assert len(api.drift) == 0  # judged by 1.1.0's contract


def test_an_unpinned_client_reports_the_default(make_client: Callable[..., kit.Client]) -> None:
    api = make_client()
    api.sessions.create("anonymous")
    assert api.api_version == NEW
    assert api.history["path"].tolist()[0] == "/oauth/accesstoken"
    with pytest.raises(errors.DeprecatedEndpoint):
        api.legacy_token()


def test_an_unknown_version_is_refused_by_the_server(make_client: Callable[..., kit.Client]) -> None:
    api = make_client(api_version="0.9")
    with pytest.raises(errors.UnsupportedApiVersion) as refused:
        api.sim.health()
    assert refused.value.supported == [OLD, NEW]
    with pytest.raises(errors.OAuthError, match=r"1\.1\.0, 1\.2\.0-20221215"):
        api.token()


def test_a_server_answering_under_another_version_is_a_typed_error() -> None:
    served = [NEW, OLD]
    mock = httpx.MockTransport(lambda _: httpx.Response(200, headers={"svc-api-version": served.pop(0)}))
    options = {"base_url": "http://127.0.0.1:9", "api_version": OLD, "drift": "off", "transport": mock}
    transport = Transport(resolve("sim", options, environ={}), history=kit._history.History())
    with pytest.raises(errors.ApiVersionMismatch, match=r"pinned svc-api-version 1\.1\.0.*under 1\.2\.0"):
        transport.request("GET", "/cards/card_1", partner=False)
    transport.request("GET", "/cards/card_1", partner=False)
    assert transport.served_version == OLD
    transport.close()


def test_the_drift_check_judges_an_answer_by_its_versions_contract() -> None:
    headers = {"svc-request-id": "r1", "svc-api-version": OLD, "content-type": "application/json"}
    body = {"account_id": "acc_1", "savings_status": "closed"}
    path = "/accounts/acc_1/savings/close"
    assert Contract.for_version(OLD).check("POST", path, 200, headers, body) == []
    new_rows = Contract.for_version(NEW).check("POST", path, 200, {**headers, "svc-api-version": NEW}, body)
    assert [r.field for r in new_rows]  # not an operation of 1.2.0's contract
    unknown = Contract.for_version("0.9").check(
        "GET", "/webhooks/jwks", 200, {**headers, "svc-api-version": "0.9"}, {"keys": []}
    )
    assert "header svc-api-version" in [r.field for r in unknown]
