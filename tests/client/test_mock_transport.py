"""The client over an ``httpx.MockTransport`` (``kit.connect(..., transport=...)``): no server,
no socket. Retries, error mapping and the token exchange, each answer written here."""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from joserfc import jwe
from joserfc.jwk import RSAKey

import kit
from kit import errors

BASE = "https://sandbox.example"
REGISTRY = jwe.JWERegistry(algorithms=["RSA-OAEP-256", "A256GCM"])
Handler = Callable[[httpx.Request], httpx.Response]


@pytest.fixture
def no_sockets(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Any socket connection attempted in the test fails it."""
    tried: list[object] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        tried.append(args)
        raise AssertionError("a socket was opened")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    yield tried
    assert tried == []


def _problem(status: int, code: str, **extra: Any) -> httpx.Response:
    body = {"type": f"https://errors.example/{code}", "title": code, "status": status, "code": code, **extra}
    headers = {"content-type": "application/problem+json", "svc-request-id": f"req-{code}"}
    return httpx.Response(status, json=body, headers=headers)


def _token() -> httpx.Response:
    return httpx.Response(200, json={"access_token": "tok-1", "token_type": "Bearer", "expires_in": 3600})


def _client(handler: Handler, sleeps: list[float] | None = None, **options: Any) -> kit.Client:
    return kit.connect(
        "sandbox",
        base_url=BASE,
        client_id="partner-1",
        client_secret="s3cret-value",
        transport=httpx.MockTransport(handler),
        sleep=(sleeps if sleeps is not None else []).append,
        seed=1,
        drift="off",
        **options,
    )


class Sandbox:
    """A stand-in partner sandbox for a session creation: token, init data, ``POST /sessions``."""

    def __init__(self) -> None:
        private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.key = RSAKey.import_key(private)
        self.seen: list[httpx.Request] = []
        self.plaintext: dict[str, Any] = {}

    def jwks(self) -> dict[str, Any]:
        public = self.key.as_dict(private=False)
        return {"keys": [{**public, "kid": "srv-1", "alg": "RSA-OAEP-256", "use": "enc"}]}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        route = (request.method, request.url.path)
        if route == ("POST", "/oauth/accesstoken"):
            return _token()
        if route == ("GET", "/sessions/user_session_initialization_data"):
            body = {"jwks": self.jwks(), "enc": ["A256GCM"], "nonce": "n-1", "nonce_expires_at": None}
            return httpx.Response(200, json=body)
        if route == ("POST", "/sessions"):
            sent = json.loads(request.content)
            opened = jwe.decrypt_compact(sent["encrypted_data"], self.key, registry=REGISTRY)
            self.plaintext = json.loads(opened.plaintext or b"")
            answer = {
                "session_token": "sess-1",
                "session_type": sent["session_type"],
                "expiration_strategy": "sliding",
            }
            return httpx.Response(
                201, json=answer, headers={"svc-session-expires-at": "2030-01-01T00:00:00Z"}
            )
        return _problem(404, "not-found")


def test_a_sandbox_session_is_created_through_the_given_transport(no_sockets: list[object]) -> None:
    sandbox = Sandbox()
    api = _client(sandbox)
    try:
        info = api.sessions.create("anonymous")
    finally:
        api.close()
    assert info.session_type == "anonymous" and info.expires_at is not None
    assert [(r.method, r.url.path) for r in sandbox.seen] == [
        ("POST", "/oauth/accesstoken"),
        ("GET", "/sessions/user_session_initialization_data"),
        ("POST", "/sessions"),
    ]
    assert sandbox.plaintext["nonce"] == "n-1" and "device_jwks" in sandbox.plaintext
    created = sandbox.seen[-1]
    assert created.headers["authorization"] == "Bearer tok-1"
    assert created.headers["user-agent"] == f"partner-api-kit/{kit.__version__}"
    assert "idempotency-key" in created.headers


def test_the_token_exchange_is_basic_auth_and_a_form() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return _token()

    api = _client(handler)
    try:
        token = api.token()
    finally:
        api.close()
    (exchange,) = seen
    assert exchange.url.path == "/oauth/accesstoken"
    assert (
        exchange.headers["authorization"] == "Basic " + base64.b64encode(b"partner-1:s3cret-value").decode()
    )
    assert exchange.content == b"grant_type=client_credentials"
    assert token.token_type == "Bearer" and token.expires_in == 3600


def test_a_revoked_partner_token_is_fetched_again_once() -> None:
    tokens = iter(["tok-old", "tok-new"])
    seen: list[tuple[str, str | None]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.url.path, request.headers.get("authorization")))
        if request.url.path == "/oauth/accesstoken":
            return httpx.Response(200, json={"access_token": next(tokens), "token_type": "Bearer"})
        if request.headers["authorization"] == "Bearer tok-old":
            return _problem(401, "invalid-partner-token")
        return httpx.Response(200, json={"keys": []})

    api = _client(handler)
    try:
        api.webhooks.jwks()
        paths = [entry.path for entry in api.calls.entries()]
    finally:
        api.close()
    assert [path for path, _ in seen] == [
        "/oauth/accesstoken",
        "/webhooks/jwks",
        "/oauth/accesstoken",
        "/webhooks/jwks",
    ]
    assert seen[-1][1] == "Bearer tok-new"
    assert paths == ["/oauth/accesstoken", "/webhooks/jwks", "/oauth/accesstoken", "/webhooks/jwks"]


def test_a_refused_token_is_invalid_client() -> None:
    answer = httpx.Response(401, json={"error": "invalid_client", "error_description": "no such client"})
    api = _client(lambda request: answer)
    try:
        with pytest.raises(errors.InvalidClient):
            api.token()
    finally:
        api.close()


def test_503_and_429_are_sent_again_with_the_same_key_and_body() -> None:
    answers = iter([_problem(503, "service-unavailable"), httpx.Response(429, headers={"retry-after": "3"})])
    posts: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/oauth/accesstoken":
            return _token()
        posts.append(request)
        return next(
            answers, httpx.Response(201, json={"subscription_id": "sub-1", "events": ["card.closed"]})
        )

    sleeps: list[float] = []
    api = _client(handler, sleeps)
    try:
        api.webhooks.subscribe("https://hooks.example/x", ["card.closed"])
        (entry,) = [e for e in api.calls.entries() if e.path == "/webhooks/subscriptions"]
    finally:
        api.close()
    assert len(posts) == 3
    assert len({r.headers["idempotency-key"] for r in posts}) == 1
    assert len({r.content for r in posts}) == 1
    assert len(sleeps) == 2 and sleeps[1] == 3.0  # the second wait is the answer's Retry-After
    assert entry.retries == 2 and entry.status == 201


def test_a_connection_error_after_the_last_retry_is_a_transport_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/oauth/accesstoken":
            return _token()
        raise httpx.ConnectError("refused", request=request)

    sleeps: list[float] = []
    api = _client(handler, sleeps, max_retries=2)
    try:
        with pytest.raises(errors.TransportError, match="after 3 attempt"):
            api.webhooks.jwks()
        last = api.calls.entries()[-1]
    finally:
        api.close()
    assert len(sleeps) == 2
    assert (last.path, last.status, last.code, last.retries) == (
        "/webhooks/jwks",
        None,
        "connection-error",
        2,
    )


def test_an_error_answer_is_its_typed_error_with_the_request_id() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/oauth/accesstoken":
            return _token()
        return _problem(404, "card-not-found", detail="no card card 1")

    api = _client(handler)
    try:
        with pytest.raises(errors.CardNotFound) as raised:
            api.cards.get("card 1/2")
        entry = api.calls.entries()[-1]
    finally:
        api.close()
    assert raised.value.request_id == "req-card-not-found"
    assert entry.path == "/cards/card%201%2F2"  # the id quoted as one segment
    assert (entry.status, entry.code) == (404, "card-not-found")


def test_a_500_is_not_sent_again() -> None:
    count = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/oauth/accesstoken":
            return _token()
        count.append(1)
        return _problem(500, "internal-error")

    api = _client(handler)
    try:
        with pytest.raises(errors.ApiError) as raised:
            api.webhooks.jwks()
    finally:
        api.close()
    assert raised.value.status == 500 and len(count) == 1


def test_the_token_before_any_client_goes_through_the_given_transport(no_sockets: list[object]) -> None:
    from kit._auth import fetch_token
    from kit._sensitive import Sensitive

    grant = fetch_token(
        BASE, "partner-1", Sensitive("s3cret-value"), transport=httpx.MockTransport(lambda r: _token())
    )
    assert grant.access_token.reveal() == "tok-1"


#: The operations whose paths the seed does not show, by the keys a dialect will name them with.
UNSHOWN = {
    "create_account": (),
    "create_person": ("account_id",),
    "kyc_questions": ("person_id",),
    "kyc_answers": ("person_id",),
    "create_card": ("account_id",),
    "get_card": ("card_id",),
    "end_session": (),
    "create_transfer": (),
    "get_transfer": ("transfer_id",),
    "subscribe_webhooks": (),
    "webhook_keys": (),
    "list_document_requests": ("person_id",),
    "submit_document": ("document_request_id",),
}


def test_each_operation_has_a_key_and_a_template_with_its_parameters() -> None:
    import string

    from kit._outgoing import OPERATIONS

    for key, params in UNSHOWN.items():
        template = OPERATIONS[key].template
        assert tuple(name for _, name, _, _ in string.Formatter().parse(template) if name) == params, key


def test_a_resource_sends_one_outgoing_request_with_its_operation_and_parameters() -> None:
    from kit._outgoing import Outgoing

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/oauth/accesstoken":
            return _token()
        return httpx.Response(200, json={"card_id": "c 1", "status": "active"})

    api = _client(handler)
    sent: list[Outgoing] = []
    transport = api._requestor.transport
    send = transport.send
    transport.send = lambda outgoing: (sent.append(outgoing), send(outgoing))[1]  # type: ignore[method-assign]
    try:
        api.cards.get("c 1")
    finally:
        api.close()
    outgoing, token = sent  # the token exchange, made inside the call by the auth flow, is one too
    assert token.operation.key == "access_token" and not token.partner
    assert (outgoing.operation.key, outgoing.method, outgoing.operation.template) == (
        "get_card",
        "GET",
        "/cards/{card_id}",
    )
    assert outgoing.params == {"card_id": "c 1"} and outgoing.path == "/cards/c%201"
