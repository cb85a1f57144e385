"""Helpers for the simulator's HTTP contract tests (DESIGN §3).

Written from the wire contract alone, with joserfc and ``cryptography`` directly: nothing
here imports the client package (``kit.client``…) or the simulator's insides. The tests
speak HTTP to a running simulator, as any independent client would.
"""

from __future__ import annotations

import base64
import calendar
import json
import os
import re
import threading
import time
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicNumbers
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from joserfc import jwe, jws
from joserfc.errors import JoseError
from joserfc.jwe import JWERegistry
from joserfc.jwk import ECKey, RSAKey
from joserfc.jws import JWSRegistry

# --- literal values of the contract (DESIGN §3) -------------------------------------------

API_VERSION = "1.2.0-20221215"
PROBLEM_PREFIX = "urn:partner-api-kit:problem:"
PROBLEM_CT = "application/problem+json"
PARTNER_A = ("sim-partner", "sim-secret")
PARTNER_B = ("sim-partner-b", "sim-secret-b")
DEPRECATION = "@1671062400"
SUCCESSOR_LINK = '</oauth/accesstoken>; rel="successor-version"'
CLOCK_START = datetime(2025, 1, 6, 9, 0, 0, tzinfo=UTC)  # /tmp/brief.md
INBOUND_EVENT_TYPES = [
    "email_address.update_fails_verification",
    "login.failed_too_many_times",
    "password.change_failure",
    "password.changed",
    "password.forgot",
    "password.reset_failed",
    "username.forgot",
    "username.reset_failed",
]
CLOSE_REASONS = ["lost", "stolen", "damaged", "fraud_suspected", "customer_request", "account_closed"]
CARD_TYPES = ["physical", "virtual", "temporary"]
WEBHOOK_EVENTS = [
    "card.closed",
    "card.expired",
    "document_request.created",
    "document_request.completed",
]
PII_FIELDS = [
    "first_name",
    "last_name",
    "date_of_birth",
    "dob",
    "birth_date",
    "national_id",
    "ssn",
    "tax_id",
    "passport_number",
]
FORBIDDEN_JWE_HEADERS = ["zip", "jku", "jwk", "x5u", "x5c", "crit"]
KEYS_DIR = Path(__file__).resolve().parent.parent / "keys"

SERVER_JWE = JWERegistry(algorithms=["RSA-OAEP-256", "ECDH-ES+A256KW", "A256GCM"])
DEVICE_JWE = JWERegistry(algorithms=["ECDH-ES+A256KW", "A256GCM"])
WEBHOOK_JWS = JWSRegistry(algorithms=["ES256"], strict_check_header=False)

# A value no simulator would make up: it must never come back in an error body.
ECHO = "Zq9EchoCanary4242"


# --- small utilities ---------------------------------------------------------------------


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64u_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def parse_time(text: str) -> datetime:
    """An RFC 3339 UTC timestamp (``Z`` or ``+00:00``) as an aware datetime."""
    assert isinstance(text, str) and re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", text), text
    assert text.endswith("Z") or text.endswith("+00:00"), f"not UTC: {text}"
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    assert value.utcoffset() == timedelta(0)
    return value


def money(value: str, currency: str = "USD") -> dict[str, str]:
    return {"value": value, "currency": currency}


def add_months(day: date, months: int) -> date:
    """The last day of the month ``months`` after ``day``'s month (A14)."""
    month_index = day.year * 12 + (day.month - 1) + months
    year, month = divmod(month_index, 12)
    month += 1
    return date(year, month, calendar.monthrange(year, month)[1])


def wait_until(predicate: Any, timeout: float = 5.0, interval: float = 0.02) -> Any:
    """Poll ``predicate`` (bounded, real time) until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() >= deadline:
            return result
        time.sleep(interval)


def headers(
    token: str | None = None,
    session: str | None = None,
    idem: str | None = None,
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    out: dict[str, str] = {}
    if token is not None:
        out["Authorization"] = f"Bearer {token}"
    if session is not None:
        out["svc-session-id"] = session
    if idem is not None:
        out["Idempotency-Key"] = idem
    if extra:
        out.update(extra)
    return out


def call(
    http: httpx.Client,
    method: str,
    path: str,
    *,
    token: str | None = None,
    session: str | None = None,
    idem: str | None = None,
    json_body: Any = None,
    content: bytes | str | None = None,
    extra: dict[str, str] | None = None,
) -> httpx.Response:
    """One request: bearer token, session and idempotency key as headers when given."""
    hdrs = headers(token, session, idem, extra)
    if content is not None:
        return http.request(method, path, headers=hdrs, content=content)
    if json_body is not None:
        return http.request(method, path, headers=hdrs, json=json_body)
    return http.request(method, path, headers=hdrs)


# --- assertions on answers ---------------------------------------------------------------


def assert_common_headers(resp: httpx.Response) -> None:
    assert resp.headers.get("svc-request-id"), f"no svc-request-id on {resp.request.url.path}"
    assert resp.headers.get("svc-api-version") == API_VERSION, dict(resp.headers)


def assert_problem(
    resp: httpx.Response, status: int, code: str, *, not_echo: tuple[str, ...] = (ECHO,)
) -> dict[str, Any]:
    """An RFC 9457 problem with the contract's fields; returns the body."""
    assert resp.status_code == status, f"{resp.status_code} != {status}: {resp.text[:600]}"
    ctype = resp.headers.get("content-type", "").split(";")[0].strip()
    assert ctype == PROBLEM_CT, f"content-type {ctype!r}: {resp.text[:300]}"
    body = resp.json()
    assert isinstance(body, dict), body
    assert body.get("code") == code, body
    assert body.get("type") == PROBLEM_PREFIX + code, body
    assert body.get("status") == status, body
    assert isinstance(body.get("title"), str) and body["title"], body
    assert isinstance(body.get("detail"), str) and body["detail"], body
    assert_common_headers(resp)
    for value in not_echo:
        assert value not in resp.text, f"the answer echoes a submitted value: {resp.text[:300]}"
    return body


def assert_oauth_error(resp: httpx.Response, status: int, error: str) -> dict[str, Any]:
    """An RFC 6749 §5.2 error body (the token endpoints' one exception to problem+json)."""
    assert resp.status_code == status, f"{resp.status_code} != {status}: {resp.text[:400]}"
    ctype = resp.headers.get("content-type", "").split(";")[0].strip()
    assert ctype == "application/json", ctype
    body = resp.json()
    assert body.get("error") == error, body
    assert set(body) <= {"error", "error_description", "error_uri"}, body
    if "error_description" in body:
        assert isinstance(body["error_description"], str)
    assert_common_headers(resp)
    return body


def assert_error_fields(body: dict[str, Any], *pointers: str) -> None:
    """``errors`` lists each of ``pointers`` as a JSON Pointer ``field`` with a message."""
    errors = body.get("errors")
    assert isinstance(errors, list) and errors, body
    for err in errors:
        assert isinstance(err.get("field"), str), err
        assert err["field"] == "" or err["field"].startswith("/"), err
        assert isinstance(err.get("message"), str) and err["message"], err
    fields = [err["field"] for err in errors]
    for pointer in pointers:
        assert pointer in fields, (pointer, fields)


# --- partner level -----------------------------------------------------------------------


def token_response(
    http: httpx.Client,
    client_id: str = PARTNER_A[0],
    secret: str = PARTNER_A[1],
    *,
    path: str = "/oauth/accesstoken",
) -> httpx.Response:
    return http.post(path, data={"grant_type": "client_credentials"}, auth=(client_id, secret))


def partner_token(http: httpx.Client, client_id: str = PARTNER_A[0], secret: str = PARTNER_A[1]) -> str:
    """A partner access token by client credentials and HTTP Basic (§3.1)."""
    resp = token_response(http, client_id, secret)
    assert resp.status_code == 200, resp.text
    return resp.json()["access_token"]


def init_data(http: httpx.Client, token: str) -> dict[str, Any]:
    resp = call(http, "GET", "/sessions/user_session_initialization_data", token=token)
    assert resp.status_code == 200, resp.text
    return resp.json()


# --- control plane -----------------------------------------------------------------------


def reset(http: httpx.Client, seed: int = 7) -> None:
    resp = http.post("/_sim/reset", json={"seed": seed})
    assert resp.status_code == 200, resp.text


def clock_now(http: httpx.Client) -> datetime:
    resp = http.get("/_sim/clock")
    assert resp.status_code == 200, resp.text
    return parse_time(resp.json()["now"])


def advance(http: httpx.Client, seconds: int) -> datetime:
    resp = http.post("/_sim/clock/advance", json={"seconds": seconds})
    assert resp.status_code == 200, resp.text
    return parse_time(resp.json()["now"])


def personas(http: httpx.Client) -> list[dict[str, Any]]:
    resp = http.get("/_sim/personas")
    assert resp.status_code == 200, resp.text
    return resp.json()["personas"]


def kyc_answers(http: httpx.Client, person_id: str) -> list[dict[str, Any]]:
    resp = http.get(f"/_sim/persons/{person_id}/kyc_answers")
    assert resp.status_code == 200, resp.text
    return resp.json()["answers"]


def ledger(http: httpx.Client) -> dict[str, Any]:
    resp = http.get("/_sim/ledger")
    assert resp.status_code == 200, resp.text
    return resp.json()


def balance(http: httpx.Client, account_id: str) -> str:
    for acc in ledger(http)["accounts"]:
        if acc["account_id"] == account_id:
            bal = acc["balance"]
            assert bal["currency"] == "USD"
            return bal["value"]
    raise AssertionError(f"{account_id} not in the ledger")


def deliveries(http: httpx.Client) -> list[dict[str, Any]]:
    resp = http.get("/_sim/webhooks/deliveries")
    assert resp.status_code == 200, resp.text
    return resp.json()["deliveries"]


def fund(http: httpx.Client, account_id: str, value: str) -> httpx.Response:
    return http.post(f"/_sim/accounts/{account_id}/fund", json={"amount": money(value)})


def add_fault(http: httpx.Client, **fault: Any) -> str:
    resp = http.post("/_sim/faults", json=fault)
    assert resp.status_code == 201, resp.text
    return resp.json()["fault_id"]


def snapshot(http: httpx.Client, token: str | None = None, paths: tuple[str, ...] = ()) -> dict[str, Any]:
    """A fingerprint of observable state: ledger, webhook deliveries, clock, and GETs.

    ``paths`` are fetched with the partner token only (no session: a sliding session's
    expiry would move).
    """
    snap: dict[str, Any] = {
        "ledger": ledger(http),
        "deliveries": deliveries(http),
        "clock": http.get("/_sim/clock").json(),
    }
    for path in paths:
        resp = call(http, "GET", path, token=token)
        snap[path] = (resp.status_code, resp.json())
    return snap


# --- JOSE: the device, JWEs to the server and from it --------------------------------------


def load_key(name: str) -> ECKey | RSAKey:
    data = json.loads((KEYS_DIR / f"{name}.json").read_text())
    return RSAKey.import_key(data) if data["kty"] == "RSA" else ECKey.import_key(data)


class Device:
    """A device: id, metadata and an EC P-256 key pair held in memory (§3.3)."""

    def __init__(
        self,
        device_id: str | None = None,
        *,
        platform: str = "ios",
        model: str = "TestPhone 1",
        os_version: str = "17.2",
        key: ECKey | None = None,
    ) -> None:
        self.device_id = device_id or f"dev-{uuid.uuid4().hex[:16]}"
        self.platform = platform
        self.model = model
        self.os_version = os_version
        self.key = key or ECKey.generate_key("P-256", private=True)

    @classmethod
    def for_persona(cls, persona: dict[str, Any], **kw: Any) -> Device:
        dev = persona.get("device") or {}
        return cls(
            dev.get("device_id"),
            platform=dev.get("platform", "ios"),
            model=dev.get("model", "TestPhone 1"),
            os_version=dev.get("os_version", "17.2"),
            **kw,
        )

    def public_jwk(self) -> dict[str, Any]:
        jwk = dict(self.key.as_dict(private=False))
        jwk["use"] = "enc"
        return jwk

    def device_data(self) -> dict[str, str]:
        return {
            "device_id": self.device_id,
            "platform": self.platform,
            "model": self.model,
            "os_version": self.os_version,
        }

    def plaintext(
        self,
        nonce: str | None,
        *,
        account_id: str | None = None,
        person_id: str | None = None,
        jwk: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The plaintext of ``encrypted_data`` for ``POST /sessions``."""
        body: dict[str, Any] = {
            "device": self.device_data(),
            "device_jwks": {"keys": [jwk if jwk is not None else self.public_jwk()]},
        }
        if nonce is not None:
            body["nonce"] = nonce
        if account_id is not None:
            body["account_id"] = account_id
        if person_id is not None:
            body["person_id"] = person_id
        return body

    def decrypt(self, token: str) -> dict[str, Any]:
        return decrypt_from_server(self, token)


_imported: dict[str, Any] = {}


def server_key(init: dict[str, Any], alg: str = "RSA-OAEP-256") -> dict[str, Any]:
    """The init data's public JWK for ``alg``."""
    for key in init["jwks"]["keys"]:
        if key.get("alg") == alg:
            return key
    raise AssertionError(f"no key with alg {alg} in {init['jwks']}")


def _import(jwk: dict[str, Any]) -> Any:
    cache_key = json.dumps(jwk, sort_keys=True)
    if cache_key not in _imported:
        cls = RSAKey if jwk["kty"] == "RSA" else ECKey
        _imported[cache_key] = cls.import_key(jwk)
    return _imported[cache_key]


def encrypt_for_server(init: dict[str, Any], plaintext: Any, alg: str = "RSA-OAEP-256") -> str:
    """A compact JWE of ``plaintext`` (JSON) to the server's key for ``alg``, kid set."""
    jwk = server_key(init, alg)
    data = plaintext if isinstance(plaintext, bytes) else json.dumps(plaintext).encode()
    return jwe.encrypt_compact(
        {"alg": alg, "enc": "A256GCM", "kid": jwk["kid"]}, data, _import(jwk), registry=SERVER_JWE
    )


def protected_header(token: str) -> dict[str, Any]:
    return json.loads(b64u_decode(token.split(".")[0]))


def decrypt_from_server(device: Device, token: str) -> dict[str, Any]:
    """Decrypt a JWE the server sent to ``device`` (ECDH-ES+A256KW + A256GCM only)."""
    assert isinstance(token, str) and token.count(".") == 4, token
    header = protected_header(token)
    assert header.get("alg") == "ECDH-ES+A256KW", header
    assert header.get("enc") == "A256GCM", header
    for name in FORBIDDEN_JWE_HEADERS:
        assert name not in header, header
    obj = jwe.decrypt_compact(token, device.key, registry=DEVICE_JWE)
    return json.loads(obj.plaintext)


def raw_jwe(
    header: dict[str, Any],
    plaintext: Any,
    rsa_jwk: dict[str, Any] | None,
    *,
    wrap: str = "RSA-OAEP-256",
    cek_len: int = 32,
    deflate: bool = False,
) -> str:
    """A hand-made compact JWE with any protected header (for the allow-list tests).

    ``wrap`` says how the CEK is carried: ``RSA-OAEP-256``, ``RSA-OAEP``, ``RSA1_5`` (to
    ``rsa_jwk``) or ``none`` (empty encrypted key, as for ``dir``). Content: AES-GCM.
    """
    data = plaintext if isinstance(plaintext, bytes) else json.dumps(plaintext).encode()
    if deflate:
        comp = zlib.compressobj(wbits=-15)
        data = comp.compress(data) + comp.flush()
    cek = AESGCM.generate_key(bit_length=cek_len * 8)
    if wrap == "none":
        encrypted_key = b""
    else:
        assert rsa_jwk is not None
        pub = RSAPublicNumbers(
            int.from_bytes(b64u_decode(rsa_jwk["e"]), "big"),
            int.from_bytes(b64u_decode(rsa_jwk["n"]), "big"),
        ).public_key()
        if wrap == "RSA-OAEP-256":
            pad: Any = padding.OAEP(padding.MGF1(hashes.SHA256()), hashes.SHA256(), None)
        elif wrap == "RSA-OAEP":
            pad = padding.OAEP(padding.MGF1(hashes.SHA1()), hashes.SHA1(), None)
        elif wrap == "RSA1_5":
            pad = padding.PKCS1v15()
        else:
            raise ValueError(wrap)
        encrypted_key = pub.encrypt(cek, pad)
    protected = b64u(json.dumps(header).encode())
    iv = os.urandom(12)
    sealed = AESGCM(cek).encrypt(iv, data, protected.encode("ascii"))
    ciphertext, tag = sealed[:-16], sealed[-16:]
    return ".".join([protected, b64u(encrypted_key), b64u(iv), b64u(ciphertext), b64u(tag)])


def tamper(token: str, part: int) -> str:
    """Flip one byte in the middle of part ``part`` of a compact JWE."""
    parts = token.split(".")
    raw = bytearray(b64u_decode(parts[part]))
    assert raw, f"part {part} is empty"
    raw[len(raw) // 2] ^= 0x01
    parts[part] = b64u(bytes(raw))
    return ".".join(parts)


# --- sessions ------------------------------------------------------------------------------


def create_session(
    http: httpx.Client,
    token: str,
    device: Device,
    session_type: str = "anonymous",
    strategy: str = "fixed",
    *,
    current: str | None = None,
    account_id: str | None = None,
    person_id: str | None = None,
    init: dict[str, Any] | None = None,
    alg: str = "RSA-OAEP-256",
    idem: str | None = None,
    plaintext: dict[str, Any] | None = None,
    encrypted_data: str | None = None,
) -> httpx.Response:
    """``POST /sessions`` (§3.3); fetches fresh init data (a new nonce) unless given."""
    if encrypted_data is None:
        if init is None:
            init = init_data(http, token)
        if plaintext is None:
            plaintext = device.plaintext(init["nonce"], account_id=account_id, person_id=person_id)
        encrypted_data = encrypt_for_server(init, plaintext, alg)
    body = {
        "session_type": session_type,
        "expiration_strategy": strategy,
        "encrypted_data": encrypted_data,
    }
    return call(http, "POST", "/sessions", token=token, session=current, idem=idem, json_body=body)


def session_token_of(resp: httpx.Response, device: Device) -> str:
    body = resp.json()
    if "encrypted_session_token" in body:
        return device.decrypt(body["encrypted_session_token"])["session_token"]
    return body["session_token"]


def new_session(
    http: httpx.Client,
    token: str,
    device: Device,
    session_type: str = "anonymous",
    strategy: str = "fixed",
    **kw: Any,
) -> str:
    resp = create_session(http, token, device, session_type, strategy, **kw)
    assert resp.status_code == 201, resp.text
    return session_token_of(resp, device)


# --- resources -----------------------------------------------------------------------------


def create_account(http: httpx.Client, token: str, anonymous: str, **kw: Any) -> dict[str, Any]:
    resp = call(
        http,
        "POST",
        "/accounts",
        token=token,
        session=anonymous,
        json_body={"product": "spending"},
        **kw,
    )
    assert resp.status_code == 201, resp.text
    return resp.json()


def pii_of(persona: dict[str, Any]) -> dict[str, str]:
    return {k: persona[k] for k in ("first_name", "last_name", "date_of_birth", "national_id")}


def create_person(
    http: httpx.Client,
    token: str,
    session: str,
    account_id: str,
    pii: dict[str, Any],
    alg: str = "RSA-OAEP-256",
) -> httpx.Response:
    init = init_data(http, token)
    return call(
        http,
        "POST",
        f"/accounts/{account_id}/persons",
        token=token,
        session=session,
        json_body={"encrypted_pii": encrypt_for_server(init, pii, alg)},
    )


def kyc_questions(
    http: httpx.Client, token: str, session: str, person_id: str, device: Device
) -> list[dict[str, Any]]:
    resp = call(http, "GET", f"/persons/{person_id}/kyc/questions", token=token, session=session)
    assert resp.status_code == 200, resp.text
    return device.decrypt(resp.json()["encrypted_questions"])["questions"]


def send_answers(
    http: httpx.Client,
    token: str,
    session: str,
    person_id: str,
    answers: list[dict[str, Any]],
) -> httpx.Response:
    init = init_data(http, token)
    return call(
        http,
        "POST",
        f"/persons/{person_id}/kyc/answers",
        token=token,
        session=session,
        json_body={"encrypted_answers": encrypt_for_server(init, {"answers": answers})},
    )


def wrong_answers(questions: list[dict[str, Any]], right: list[dict[str, Any]]) -> list[dict]:
    """For every question a choice among its choices that is not the right one."""
    right_by_q = {a["question_id"]: a["choice"] for a in right}
    out = []
    for q in questions:
        choice = next(c for c in q["choices"] if c != right_by_q[q["question_id"]])
        out.append({"question_id": q["question_id"], "choice": choice})
    return out


def create_card(
    http: httpx.Client,
    token: str,
    account_id: str,
    card_type: str = "physical",
    session: str | None = None,
) -> dict[str, Any]:
    resp = call(
        http,
        "POST",
        f"/accounts/{account_id}/cards",
        token=token,
        session=session,
        json_body={"type": card_type},
    )
    assert resp.status_code == 201, resp.text
    return resp.json()


@dataclass
class Journey:
    """A device taken as far as an established person with a person session."""

    token: str
    device: Device
    persona: dict[str, Any]
    anonymous: str
    account_id: str
    account_session: str
    person_id: str | None = None
    person_session: str | None = None
    questions: list[dict[str, Any]] = field(default_factory=list)


def journey(
    http: httpx.Client,
    *,
    persona_index: int = 0,
    token: str | None = None,
    partner: tuple[str, str] = PARTNER_A,
    device: Device | None = None,
    strategy: str = "fixed",
    until: str = "person",
) -> Journey:
    """token → anonymous session → account → account session → person → KYC → person session.

    ``until``: ``"account"`` (stop with an account session), ``"pending"`` (person created,
    KYC pending), ``"person"`` (established, promoted to a person session).
    """
    token = token or partner_token(http, *partner)
    persona = personas(http)[persona_index]
    device = device or Device.for_persona(persona)
    anonymous = new_session(http, token, device, "anonymous", strategy)
    account = create_account(http, token, anonymous)
    account_id = account["account_id"]
    account_session = new_session(
        http, token, device, "account", strategy, current=anonymous, account_id=account_id
    )
    j = Journey(token, device, persona, anonymous, account_id, account_session)
    if until == "account":
        return j
    resp = create_person(http, token, account_session, account_id, pii_of(persona))
    assert resp.status_code == 201, resp.text
    j.person_id = resp.json()["person_id"]
    j.questions = kyc_questions(http, token, account_session, j.person_id, device)
    if until == "pending":
        return j
    resp = send_answers(http, token, account_session, j.person_id, kyc_answers(http, j.person_id))
    assert resp.status_code == 200 and resp.json()["status"] == "established", resp.text
    j.person_session = new_session(
        http, token, device, "person", strategy, current=account_session, person_id=j.person_id
    )
    return j


# --- webhooks ------------------------------------------------------------------------------


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Receiver:
    """A loopback webhook receiver that records requests and can fail on purpose."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.fail_next = 0  # answer 500 to this many requests, then 200
        self.fail_always = False
        self.redirect_to: str | None = None  # answer 302 to this location instead
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                with receiver._lock:
                    receiver.requests.append(
                        Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                    fail = receiver.fail_always or receiver.fail_next > 0
                    if receiver.fail_next > 0:
                        receiver.fail_next -= 1
                if receiver.redirect_to:
                    self.send_response(302)
                    self.send_header("location", receiver.redirect_to)
                else:
                    self.send_response(500 if fail else 200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/hook"

    def received(self) -> list[Received]:
        with self._lock:
            return list(self.requests)

    def wait_for(self, count: int, timeout: float = 5.0) -> list[Received]:
        got = wait_until(lambda: len(self.received()) >= count and self.received(), timeout)
        return list(got or self.received())

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def subscribe(http: httpx.Client, token: str, url: str, events: list[str]) -> dict[str, Any]:
    resp = call(
        http, "POST", "/webhooks/subscriptions", token=token, json_body={"url": url, "events": events}
    )
    assert resp.status_code == 201, resp.text
    return resp.json()


def verify_signature(signature: str, body: bytes, jwks: dict[str, Any]) -> dict[str, Any]:
    """Verify a detached ES256 JWS (RFC 7515 App. F) over ``body``; return its protected header."""
    parts = signature.split(".")
    assert len(parts) == 3 and parts[1] == "", f"not a detached compact JWS: {signature[:40]}"
    header = json.loads(b64u_decode(parts[0]))
    key_dict = next((k for k in jwks["keys"] if k.get("kid") == header.get("kid")), None)
    assert key_dict is not None, (header, jwks)
    key = ECKey.import_key(key_dict)
    full = ".".join([parts[0], b64u(body), parts[2]])
    obj = jws.deserialize_compact(full, key, registry=WEBHOOK_JWS)
    assert obj.payload == body
    return header


def signature_is_valid(signature: str, body: bytes, jwks: dict[str, Any]) -> bool:
    try:
        verify_signature(signature, body, jwks)
    except (JoseError, ValueError, AssertionError):
        return False
    return True


# --- an httpx client that checks every partner answer ----------------------------------------


class CheckedClient(httpx.Client):
    """Records a violation for every partner answer without the §3 headers or with a 5xx
    that was not injected (``injected-fault``)."""

    violations: list[str]


def checked_client(base_url: str) -> CheckedClient:
    client = CheckedClient(base_url=base_url, timeout=30.0)
    client.violations = []

    def check(resp: httpx.Response) -> None:
        path = resp.request.url.path
        if path.startswith("/_sim/"):
            return
        where = f"{resp.request.method} {path} -> {resp.status_code}"
        if not resp.headers.get("svc-request-id") or resp.headers.get("svc-api-version") != API_VERSION:
            client.violations.append(f"svc-request-id / svc-api-version missing: {where}")
        if resp.status_code >= 500:
            resp.read()
            try:
                code = resp.json().get("code")
            except ValueError:
                code = None
            if code != "injected-fault":
                client.violations.append(f"5xx not injected: {where}: {resp.text[:200]}")

    client.event_hooks["response"] = [check]
    return client


def embedded(**settings: Any) -> Iterator[Any]:
    """A session fixture's body: an embedded simulator with ``settings``, stopped afterwards."""
    from kit.sim import Settings
    from kit.sim.server import start_embedded

    server = start_embedded(Settings(**settings))
    yield server
    server.stop()


def checked(client: CheckedClient, *, reset_to: int | None = 7) -> Iterator[CheckedClient]:
    """Yield ``client`` (reset to ``reset_to`` unless None) and fail on any recorded violation."""
    if reset_to is not None:
        reset(client, reset_to)
    client.violations.clear()
    yield client
    violations = list(client.violations)
    client.violations.clear()
    assert not violations, "contract violations on responses:\n" + "\n".join(violations)
