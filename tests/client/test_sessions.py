"""Sessions: create, promote, open directly (encrypted token), end; svc-session-id handling."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest

import kit
import kit._sensitive
from kit import errors

from .conftest import onboard, record


def test_anonymous_session_and_its_view(api: kit.Client) -> None:
    assert api.session is None
    info = api.sessions.create("anonymous", expiration="sliding")
    assert info.session_type == "anonymous" and info.expiration_strategy == "sliding"
    assert info.device_id == api.device.device_id
    assert info.expires_at is not None
    assert info.expires_at == api.sim.clock() + timedelta(minutes=15)
    assert api.session == info
    assert "ses_" not in repr(api.session) + api.session._repr_html_()


def test_each_session_request_uses_fresh_init_data(api: kit.Client) -> None:
    recorder = record(api)
    api.sessions.create("anonymous")
    api.sessions.create("anonymous")
    paths = [r.url.path for r in recorder.requests if r.url.path != "/oauth/accesstoken"]
    assert paths == ["/sessions/user_session_initialization_data", "/sessions"] * 2


def test_promotion_sends_the_current_session_and_supersedes_it(api: kit.Client) -> None:
    api.sessions.create("anonymous")
    anonymous = api._requestor.current
    account = api.accounts.create()
    recorder = record(api)
    info = api.sessions.promote("account", account_id=account.account_id)
    assert info.session_type == "account" and info.account_id == account.account_id
    post = next(r for r in recorder.requests if r.url.path == "/sessions")
    assert post.headers["svc-session-id"] == anonymous.token.reveal()  # type: ignore[union-attr]
    with pytest.raises(errors.SessionSuperseded):
        api._requestor.call("POST", "/accounts", json={"product": "spending"}, session=anonymous)


def test_sliding_expiry_follows_the_response_header(api: kit.Client) -> None:
    api.sessions.create("anonymous", expiration="sliding")
    account = api.accounts.create()
    api.sessions.promote("account", account_id=account.account_id)
    assert api.session is not None and api.session.expires_at is not None
    first = api.session.expires_at
    api.sim.advance(600)
    api.cards.create(account.account_id, type="virtual")
    assert api.session.expires_at == first + timedelta(seconds=600)  # type: ignore[union-attr]
    api.sim.advance(15 * 60)
    with pytest.raises(errors.SessionExpired):
        api.cards.create(account.account_id, type="virtual")


def test_fixed_sessions_do_not_slide(api: kit.Client) -> None:
    info = api.sessions.create("anonymous", expiration="fixed")
    assert info.expires_at == api.sim.clock() + timedelta(minutes=30)


def test_open_direct_session_for_a_bound_device(api: kit.Client) -> None:
    customer = onboard(api)
    api.sessions.end()
    recorder = record(api)
    info = api.sessions.open("person", person_id=customer.person_id)
    assert info.session_type == "person"
    post = next(r for r in recorder.requests if r.url.path == "/sessions")
    assert "svc-session-id" not in post.headers
    # The token came encrypted to the device key and works.
    card = api.cards.create(customer.account_id, type="virtual")
    assert card.status == "active"
    info = api.sessions.open("account", account_id=customer.account_id)
    assert info.session_type == "account"
    assert api.document_requests.list(customer.person_id) == []


def test_another_device_is_not_recognized(make_client) -> None:  # type: ignore[no-untyped-def]
    customer = onboard(make_client())
    stranger = make_client()
    with pytest.raises(errors.DeviceNotRecognized):
        stranger.sessions.open("account", account_id=customer.account_id)
    assert stranger.session is None


def test_end_kills_the_session(api: kit.Client) -> None:
    api.sessions.create("anonymous")
    dead = api._requestor.current
    api.sessions.end()
    assert api.session is None
    with pytest.raises(errors.InvalidSession):
        api._requestor.call("POST", "/accounts", json={"product": "spending"}, session=dead)
    api.sessions.end()  # nothing to end: a no-op


def test_promote_without_a_session_is_refused_locally(api: kit.Client) -> None:
    with pytest.raises(errors.SessionRequired):
        api.sessions.promote("account", account_id="acc_x")
    assert len(api.history) == 0


def test_ecdh_es_can_be_chosen_for_requests(make_client) -> None:  # type: ignore[no-untyped-def]
    api = make_client(jwe_alg="ECDH-ES+A256KW")
    recorder = record(api)
    customer = onboard(api)
    assert customer.person_id.startswith("per_")
    from kit.crypto import protected_header

    sent = [r for r in recorder.requests if r.url.path == "/sessions"]
    import json

    algs = {protected_header(json.loads(r.content)["encrypted_data"])["alg"] for r in sent}
    assert algs == {"ECDH-ES+A256KW"}


def test_session_is_sent_on_card_routes_and_checked(make_client) -> None:  # type: ignore[no-untyped-def]
    a = onboard(make_client(), 0)
    b = onboard(make_client(), 1)
    card = a.api.cards.create(a.account_id, type="virtual")
    recorder = record(b.api)
    with pytest.raises(errors.SessionNotBound):
        b.api.cards.get(card.card_id)  # B's person session is not bound to A's account
    assert recorder.requests[-1].headers["svc-session-id"] == b.api._requestor.current.token.reveal()  # type: ignore[union-attr]


def test_kyc_questions_are_decrypted_and_wrapped(api: kit.Client) -> None:
    onboard_partial = onboard(api, promote=False)
    questions = api.kyc.questions(onboard_partial.person_id)
    assert isinstance(questions, kit.Sensitive)
    items = questions.reveal()
    assert len(items) == 3 and all({"question_id", "text", "choices"} <= set(q) for q in items)


def test_wrong_kyc_answers_count_down_then_lock(make_client) -> None:  # type: ignore[no-untyped-def]
    api = make_client()
    api.sessions.create("anonymous")
    account = api.accounts.create()
    api.sessions.promote("account", account_id=account.account_id)
    person = api.persons.create(account.account_id, **api.sim.persona(2).pii)
    right = {a["question_id"]: a["choice"] for a in api.sim.kyc_answers(person.person_id).reveal()}
    wrong = {qid: "not-a-choice" for qid in right}
    assert [api.kyc.answer(person.person_id, wrong).attempts_left for _ in range(3)] == [2, 1, 0]
    with pytest.raises(errors.KycLocked):
        api.kyc.answer(person.person_id, right)
    with pytest.raises(errors.InvalidSessionTransition):
        api.sessions.promote("person", person_id=person.person_id)


def test_control_plane_clock_fund_and_personas(api: kit.Client) -> None:
    start = api.sim.clock()
    assert api.sim.advance(90) == start + timedelta(seconds=90)
    assert api.sim.advance_to(start + timedelta(seconds=100)) == start + timedelta(seconds=100)
    assert api.sim.advance_to(start.date() + timedelta(days=2)) == datetime.combine(
        start.date() + timedelta(days=2), time(0), tzinfo=UTC
    )
    with pytest.raises(ValueError, match="never goes back"):
        api.sim.advance_to(start)
    customer = onboard(api)
    assert str(api.sim.fund(customer.account_id, "25.00")) == "525.00 USD"
    frame = api.sim.personas()
    assert len(frame) >= 3 and set(frame["first_name"]) == {kit._sensitive.MASK}
    assert api.sim.health()["status"] == "ok"


def test_init_data_describes_each_public_key_without_its_numbers(api) -> None:  # type: ignore[no-untyped-def]
    init = api.sessions.init_data()
    by_alg = {k["alg"]: k for k in init.keys}
    assert by_alg["RSA-OAEP-256"]["kty"] == "RSA" and by_alg["RSA-OAEP-256"]["size"] == 2048
    assert by_alg["ECDH-ES+A256KW"]["crv"] == "P-256"
    assert all(k["use"] == "enc" and k["kid"] in init.kids for k in init.keys)
    assert not any({"n", "e", "x", "y", "d"} & set(k) for k in init.keys)


CAMEL = kit.register.data_dir() / "choices" / "camel.toml"


@pytest.mark.parametrize("choices", [None, CAMEL], ids=["own", "camel"])
def test_a_session_request_built_and_sent_twice_has_its_nonce_refused(choices) -> None:  # type: ignore[no-untyped-def]
    """``api.sessions.build_request`` builds what ``create`` sends, in the server's own spelling
    (the camel dialect's token header, names and values too), sends nothing and records nothing;
    sent by hand twice, the first is a session and the second reuses its nonce."""
    with kit.connect("sim", choices=choices, sleep=lambda _: None) as api:
        request = api.sessions.build_request("anonymous", expiration="fixed")
        calls = len(api.history)
        with api.config.http_client() as http:
            first, again = http.send(request), http.send(request)
        assert len(api.history) == calls and api.session is None
        assert not {"idempotency-key", "x-idempotency-key"} & set(request.headers)
    assert first.status_code == 201, first.text
    assert (again.status_code, again.json()["code"]) == (400, "nonce-invalid")
