"""Two versions on the wire (A27): step 0, and every change of 1.2.0 undone under 1.1.0, over HTTP.

Each difference is asked of the same simulator twice, once per version (``svc-api-version``),
and the answer's own ``svc-api-version`` names the version that served it. Unknown versions are
refused before routing on every kind of path and change nothing.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from kit import register
from tests.sim.helpers.control import advance, open_document_request, unchanged
from tests.sim.helpers.journeys import Journey, journey, p2p_transfer
from tests.sim.helpers.webhooks import Receiver
from tests.sim.helpers.wire import assert_problem, call

OLD, NEW = "1.1.0", "1.2.0-20221215"
V_OLD, V_NEW = {"svc-api-version": OLD}, {"svc-api-version": NEW}
LEGACY = "/authorization/server_api/access_tokens"
CREDENTIALS = {"grant_type": "client_credentials"}
AUTH = ("sim-partner", "sim-secret")


@pytest.fixture
def acct(http: httpx.Client, token: str) -> Journey:
    return journey(http, token=token, until="account")


def as_(
    j: Journey, version: dict[str, str], http: httpx.Client, method: str, path: str, **kw: Any
) -> httpx.Response:
    """A call in ``j``'s latest session, under ``version``."""
    session = getattr(j, "person_session", None) or j.account_session
    resp = call(http, method, path, token=j.token, session=session, extra=version, **kw)
    assert resp.headers["svc-api-version"] == version["svc-api-version"], resp.headers
    return resp


# --- step 0 ------------------------------------------------------------------------------------


def test_no_header_is_the_default_and_every_answer_names_its_version(http: httpx.Client, token: str) -> None:
    plain = call(http, "GET", "/webhooks/jwks", token=token)
    assert plain.headers["svc-api-version"] == NEW
    assert "A27" not in plain.headers["svc-assumptions"].split(",")  # nothing asked, nothing named
    for version in (OLD, NEW):
        resp = call(http, "GET", "/webhooks/jwks", token=token, extra={"svc-api-version": version})
        assert resp.status_code == 200
        assert resp.headers["svc-api-version"] == version
        assert "A27" in resp.headers["svc-assumptions"].split(",")
    assert http.get("/_sim/health", headers=V_OLD).headers["svc-api-version"] == OLD


@pytest.mark.parametrize(
    ("method", "path", "kind"),
    [
        ("POST", "/oauth/accesstoken", "token"),
        ("POST", LEGACY, "token"),
        ("DELETE", LEGACY, "token"),
        ("POST", "/accounts", "partner"),
        ("GET", "/cards/card_x", "partner"),
        ("POST", "/accounts/acc_x/savings/close", "removed"),
        ("GET", "/accounts/acc_x/referral_code", "removed"),
        ("GET", "/_sim/health", "control"),
        ("GET", "/no/such/path", "unknown"),
    ],
)
@pytest.mark.parametrize("asked", ["1.0.0", "1.2.0", "2.0", ""])
def test_an_unknown_version_is_refused_before_routing(
    http: httpx.Client, token: str, method: str, path: str, kind: str, asked: str
) -> None:
    with unchanged(http, token):
        resp = http.request(
            method,
            path,
            headers={"svc-api-version": asked, "Authorization": f"Bearer {token}"},
            data=CREDENTIALS if kind == "token" else None,
        )
    assert resp.status_code == 400
    assert resp.headers["svc-api-version"] == NEW  # the default answered the refusal
    supported = register.value("A27")["versions"]
    if kind == "token":  # RFC 6749 §5.2 on the token endpoints
        body = resp.json()
        assert body["error"] == "invalid_request"
        assert all(v in body["error_description"] for v in supported)
    else:
        assert_problem(resp, 400, "unsupported-api-version")
        assert resp.json()["supported"] == supported
    if asked:
        assert asked not in resp.text.replace(NEW, "")  # what was sent is not echoed


def test_kit_serve_api_version_sets_the_default() -> None:
    from kit.sim.app import create_app
    from kit.sim.settings import Settings

    with pytest.raises(ValueError, match="api_version"):
        create_app(Settings(api_version="0.9"))
    from fastapi.testclient import TestClient

    with TestClient(create_app(Settings(api_version=OLD, allowed_hosts=("testserver",)))) as client:
        resp = client.post("/oauth/accesstoken", data=CREDENTIALS, auth=AUTH)
        assert resp.status_code == 404 and resp.headers["svc-api-version"] == OLD
        resp = client.post("/oauth/accesstoken", data=CREDENTIALS, auth=AUTH, headers=V_NEW)
        assert resp.status_code == 200 and resp.headers["svc-api-version"] == NEW


# --- change 1: the token endpoints ------------------------------------------------------------------


def test_change_1_no_oauth_endpoint_and_an_undeprecated_legacy_endpoint_under_1_1_0(
    http: httpx.Client,
) -> None:
    gone = http.post("/oauth/accesstoken", data=CREDENTIALS, auth=AUTH, headers=V_OLD)
    assert_problem(gone, 404, "not-found")
    issued = http.post(LEGACY, data=CREDENTIALS, auth=AUTH, headers=V_OLD)
    assert issued.status_code == 200 and issued.json()["token_type"] == "Bearer"
    assert "deprecation" not in issued.headers and "link" not in issued.headers
    bad = http.post(LEGACY, data={"grant_type": "password"}, auth=AUTH, headers=V_OLD)
    assert bad.status_code == 400 and "deprecation" not in bad.headers
    token = issued.json()["access_token"]
    assert call(http, "GET", "/webhooks/jwks", token=token).status_code == 200  # good under 1.2.0 too
    revoked = http.delete(LEGACY, headers={**V_OLD, "Authorization": f"Bearer {token}"})
    assert revoked.status_code == 204 and "deprecation" not in revoked.headers
    now = http.post(LEGACY, data=CREDENTIALS, auth=AUTH, headers=V_NEW)
    assert now.status_code == 200 and now.headers["deprecation"] == "@1671062400"


def test_change_1_strict_mode_refuses_the_legacy_endpoint_only_where_it_is_deprecated(
    strict_http: httpx.Client,
) -> None:
    assert strict_http.post(LEGACY, data=CREDENTIALS, auth=AUTH).status_code == 410
    old = strict_http.post(LEGACY, data=CREDENTIALS, auth=AUTH, headers=V_OLD)
    assert old.status_code == 200 and "deprecation" not in old.headers


# --- changes 2 and 3: cards ---------------------------------------------------------------------------


def _card(
    http: httpx.Client, j: Journey, version: dict[str, str], card_type: str = "physical"
) -> httpx.Response:
    return as_(j, version, http, "POST", f"/accounts/{j.account_id}/cards", json_body={"type": card_type})


def test_change_2_close_takes_no_reason_under_1_1_0(http: httpx.Client, acct: Journey) -> None:
    card = _card(http, acct, V_OLD).json()
    path = f"/cards/{card['card_id']}"
    with unchanged(http, acct.token, (path,)):
        refused = as_(acct, V_OLD, http, "POST", f"{path}/close", json_body={"reason": "lost"})
    assert_problem(refused, 422, "unknown-field")
    closed = as_(acct, V_OLD, http, "POST", f"{path}/close")
    assert closed.status_code == 200 and closed.json()["status"] == "closed"
    other = _card(http, acct, V_NEW).json()
    with_reason = as_(
        acct, V_NEW, http, "POST", f"/cards/{other['card_id']}/close", json_body={"reason": "lost"}
    )
    assert with_reason.status_code == 200 and with_reason.json()["close_reason"] == "lost"


def test_change_3_no_temporary_card_under_1_1_0(http: httpx.Client, acct: Journey) -> None:
    with unchanged(http, acct.token):
        refused = _card(http, acct, V_OLD, "temporary")
    assert_problem(refused, 422, "unknown-card-type")
    assert refused.json()["allowed"] == ["physical", "virtual"]
    assert _card(http, acct, V_OLD, "virtual").status_code == 201
    assert _card(http, acct, V_NEW, "temporary").status_code == 201


# --- change 4: inbound events -----------------------------------------------------------------------


def test_change_4_any_inbound_event_type_under_1_1_0(http: httpx.Client, acct: Journey) -> None:
    path = f"/accounts/{acct.account_id}/events"
    taken = as_(acct, V_OLD, http, "POST", path, json_body={"event_type": "password.reset"})
    assert taken.status_code == 202 and taken.json()["event_type"] == "password.reset"
    assert_problem(
        as_(acct, V_OLD, http, "POST", path, json_body={"event_type": ""}), 422, "validation-error"
    )
    assert_problem(
        as_(acct, V_NEW, http, "POST", path, json_body={"event_type": "password.reset"}),
        422,
        "unknown-event-type",
    )


# --- change 5: savings close ---------------------------------------------------------------------------


def test_change_5_savings_close_exists_under_1_1_0_only(http: httpx.Client, acct: Journey) -> None:
    path = f"/accounts/{acct.account_id}/savings/close"
    served = as_(acct, V_OLD, http, "POST", path)
    assert served.status_code == 200
    assert served.json() == {"account_id": acct.account_id, "savings_status": "closed"}
    assert "A65" in served.headers["svc-assumptions"].split(",")
    assert_problem(as_(acct, V_OLD, http, "GET", path), 405, "method-not-allowed")
    assert_problem(as_(acct, V_OLD, http, "POST", path, json_body={"x": 1}), 422, "unknown-field")
    assert_problem(call(http, "POST", path, extra=V_OLD), 401, "invalid-partner-token")  # a route now
    assert call(http, "POST", path, token=acct.token, extra=V_OLD).status_code == 200  # no session needed
    for method in ("POST", "GET"):
        assert_problem(call(http, method, path, extra=V_NEW), 404, "endpoint-removed")
        assert_problem(call(http, method, path), 404, "endpoint-removed")


# --- change 6: webhooks ----------------------------------------------------------------------------------


def _subscribe(
    http: httpx.Client, token: str, url: str, events: list[str], version: dict[str, str]
) -> httpx.Response:
    return call(
        http,
        "POST",
        "/webhooks/subscriptions",
        token=token,
        extra=version,
        json_body={"url": url, "events": events},
    )


def test_change_6_subscriptions_name_the_events_of_their_version(
    http: httpx.Client, token: str, receiver: Receiver
) -> None:
    old_names = ["card.expired", "person.document_request.created", "person.document_request.completed"]
    assert _subscribe(http, token, receiver.url, old_names, V_OLD).status_code == 201
    for events in (["card.closed"], ["document_request.created"]):
        refused = _subscribe(http, token, receiver.url, events, V_OLD)
        assert_problem(refused, 422, "unknown-event-type")
        assert refused.json()["allowed"] == old_names
    assert_problem(_subscribe(http, token, receiver.url, old_names[1:], V_NEW), 422, "event-renamed")


def test_change_6_deliveries_are_of_the_subscriptions_version(
    http: httpx.Client, token: str, receiver: Receiver
) -> None:
    person = journey(http, token=token)
    old = _subscribe(
        http, token, receiver.url + "/old", ["card.expired", "person.document_request.created"], V_OLD
    )
    new = _subscribe(
        http, token, receiver.url + "/new", ["card.closed", "card.expired", "document_request.created"], V_NEW
    )
    assert old.status_code == new.status_code == 201
    card = _card(http, person, V_OLD).json()
    assert as_(person, V_OLD, http, "POST", f"/cards/{card['card_id']}/close").status_code == 200
    open_document_request(http, person.person_id)
    expiring = _card(http, person, V_NEW).json()
    advance(http, 4 * 366 * 86400)  # past the card's expiry (A14)
    got = receiver.wait_for(5)
    seen = sorted(
        (
            "/" + r.path.rsplit("/", 1)[-1],
            r.json()["type"],
            r.json()["api_version"],
            r.headers.get("deprecation"),
        )
        for r in got
    )
    # A27: a delivery says its version in the header too, the same as its body's api_version
    assert [(r.json()["api_version"], r.headers.get("svc-api-version")) for r in got] == [
        (r.json()["api_version"],) * 2 for r in got
    ]
    assert seen == [
        ("/new", "card.closed", NEW, None),  # a close under 1.1.0 reaches a 1.2.0 subscription
        ("/new", "card.expired", NEW, "@1671062400"),
        ("/new", "document_request.created", NEW, None),
        ("/old", "card.expired", OLD, None),  # not deprecated in 1.1.0
        ("/old", "person.document_request.created", OLD, None),  # and nothing for the close
    ], seen
    assert {r.json()["data"]["card_id"] for r in got if "card" in r.json()["type"]} == {
        card["card_id"],
        expiring["card_id"],
    }


# --- change 7: P2P ---------------------------------------------------------------------------------------


def test_change_7_no_role_header_under_1_1_0(http: httpx.Client, pair: tuple[Journey, Journey]) -> None:
    sender, receiver_ = pair
    sent = p2p_transfer(http, sender, receiver_.person_id, idem="versions-p2p")
    assert sent.status_code == 201 and sent.headers["svc-p2p-role"] == "sender"
    path = f"/p2p/transfers/{sent.json()['transfer_id']}"
    for who, role in ((sender, "sender"), (receiver_, "receiver")):
        old = call(http, "GET", path, token=who.token, session=who.person_session, extra=V_OLD)
        assert old.status_code == 200 and "svc-p2p-role" not in old.headers
        assert old.json()["viewer_role"] == role  # the person session still tells them apart
        new = call(http, "GET", path, token=who.token, session=who.person_session, extra=V_NEW)
        assert new.headers["svc-p2p-role"] == role


# --- change 8: Refer a Friend -------------------------------------------------------------------------------


def test_change_8_refer_a_friend_under_1_1_0_removed_under_1_2_0(
    http: httpx.Client, token: str, acct: Journey
) -> None:
    friend = journey(http, token=token, persona_index=1, until="account")
    code = as_(friend, V_OLD, http, "GET", f"/accounts/{friend.account_id}/referral_code")
    assert code.status_code == 200 and code.json()["account_id"] == friend.account_id
    referral_code = code.json()["referral_code"]
    assert referral_code.startswith("raf_")
    path = f"/accounts/{acct.account_id}/referrals"
    accepted = as_(acct, V_OLD, http, "POST", path, json_body={"referral_code": referral_code})
    assert accepted.status_code == 202 and accepted.json()["status"] == "accepted"
    for bad in ("raf_nobody", "x", f"raf_{acct.account_id.split('_', 1)[1]}"):
        assert_problem(
            as_(acct, V_OLD, http, "POST", path, json_body={"referral_code": bad}),
            422,
            "invalid-referral-code",
        )
    for method, removed in (
        ("GET", f"/accounts/{acct.account_id}/referral_code"),
        ("POST", path),
        ("DELETE", path),
    ):
        assert_problem(call(http, method, removed), 404, "endpoint-removed")  # no token needed
        assert_problem(call(http, method, removed, extra=V_NEW), 404, "endpoint-removed")


# --- the contract of each version ---------------------------------------------------------


def test_openapi_json_is_1_2_0s(http: httpx.Client) -> None:
    doc = http.get("/openapi.json").json()
    assert doc["info"]["version"] == NEW
    assert "/accounts/{account_id}/savings/close" not in doc["paths"]
    assert "/accounts/{account_id}/referrals" not in doc["paths"]
