"""How every partner request is handled, in the order of checks of DESIGN §3.

``run`` takes a route's handler through: partner token (2) → body parsing and size (3) →
idempotency (4) → injected faults → session validity (5); the handler then does session type
(6), resource (7), binding (8), clear-text PII (9), schema (10), decryption (11), plaintext
schema (12), state (13) and business rules (14) through the :class:`Call` helpers, in that
order, and changes state only once all of them have passed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from fastapi import Request, Response
from pydantic import BaseModel, ValidationError
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kit import register
from kit.sim.clock import format_time
from kit.sim.crypto import CryptoError, ServerKeys
from kit.sim.cryptoworker import WorkerUnavailable
from kit.sim.problems import Problem, pointer, validation_problem
from kit.sim.runtime import Sim
from kit.sim.state import Account, Fault, IdempotencyRecord, Person, Session

M = TypeVar("M", bound=BaseModel)
Enums = dict[str, tuple[str, list[str]]]

_A = register.value
MAX_BODY = int(_A("A22")["max_body_bytes"])
MAX_JWE = int(_A("A33")["max_jwe_bytes"])
PII_FIELDS = frozenset(f.lower() for f in _A("A11")["pii_fields"])
IDEMPOTENCY_HEADER = _A("A20")["header"]
IDEMPOTENCY_RETENTION = int(_A("A20")["retention_seconds"])
_LIFETIMES = _A("A06")
FIXED_LIFETIME = timedelta(seconds=int(_LIFETIMES["fixed_seconds"]))
SLIDING_IDLE = timedelta(seconds=int(_LIFETIMES["sliding_idle_seconds"]))
SLIDING_MAX = timedelta(seconds=int(_LIFETIMES["sliding_max_seconds"]))
SESSION_HEADER = _A("A28")["session_id"]
ENCRYPTED_DATA_DETAIL = (
    "The encrypted data could not be used. Encrypt with a key from "
    "GET /sessions/user_session_initialization_data: its kid and alg, enc A256GCM, no other "
    "header parameters."
)


@dataclass
class Reply:
    """What a handler answers: status, JSON body and extra headers."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


class Call:
    """One partner request on its way through the checks."""

    def __init__(self, sim: Sim, request: Request, partner: str, body: Any) -> None:
        self.sim = sim
        self.state = sim.state
        self.request = request
        self.partner = partner
        self.body = body
        self.session: Session | None = None
        self.session_in_force: Session | None = None
        self.assumptions: set[str] = request.state.assumptions
        #: JWEs decrypted ahead, off the event loop (see ``decrypt_ahead``), by the keys used.
        self.decrypted: tuple[ServerKeys | None, dict[str, bytes | CryptoError]] = (None, {})

    @property
    def now(self):
        return self.state.now

    # 6. session type
    def require_session(self, *types: str) -> Session:
        if self.session is None:
            raise Problem(
                401,
                "session-required",
                f"This endpoint needs a session of type {' or '.join(types)} in the "
                f"{SESSION_HEADER} header; create one with POST /sessions.",
            )
        if self.session.session_type not in types:
            raise Problem(
                403,
                "session-type-not-allowed",
                f"This endpoint needs a session of type {' or '.join(types)}; "
                f"promote the session or create one of that type.",
                allowed=list(types),
            )
        return self.session

    # 8. binding
    def require_bound_to_account(self, account: Account) -> None:
        """The session (when one was sent) must be bound to ``account`` (A31)."""
        if self.session is not None and session_account(self) != account.account_id:
            raise Problem(
                403,
                "session-not-bound",
                "The session is not bound to this account; use a session of this account or "
                "of one of its persons.",
            )

    def require_bound_to_person(self, person: Person) -> None:
        """An account session of the person's account, or the person's own session."""
        s = self.session
        ok = s is not None and (
            (s.session_type == "account" and s.account_id == person.account_id)
            or (s.session_type == "person" and s.person_id == person.person_id)
        )
        if not ok:
            raise Problem(
                403,
                "session-not-bound",
                "The session is not bound to this person; use an account session of the "
                "person's account or the person's own session.",
            )

    # 9. clear-text PII
    def reject_clear_pii(self) -> None:
        found = _find_pii(self.body, ())
        if found is not None:
            self.assumptions.add("A11")
            raise Problem(
                422,
                "pii-must-be-encrypted",
                "Personal data is accepted only encrypted; send it inside an encrypted_* field.",
                errors=[{"field": pointer(found), "message": "personal data must be encrypted"}],
            )

    # 10. schema
    def parse(self, model: type[M], enums: Enums | None = None) -> M:
        """Validate the body against ``model``; ``enums`` maps field → (code, allowed)."""
        return parse_model(self.body, model, enums)

    # 11 + 12. decryption and the plaintext's schema
    def decrypt(self, name: str, value: str) -> dict[str, Any]:
        try:
            if len(value) > MAX_JWE:  # refused before any decryption work (A33)
                self.assumptions.add("A33")
                raise CryptoError("too large")
            keys, ready = self.decrypted
            found = ready.get(value) if keys is self.state.keys else None
            if isinstance(found, CryptoError):
                raise found
            plaintext = found if found is not None else self.state.keys.decrypt(value)
        except CryptoError:
            raise Problem(400, "invalid-encrypted-data", ENCRYPTED_DATA_DETAIL) from None
        try:
            data = json.loads(plaintext)
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            raise validation_problem(
                [{"field": pointer([name]), "message": "the decrypted content must be a JSON object"}]
            )
        return data

    def parse_plaintext(
        self, name: str, model: type[M], data: dict[str, Any], enums: Enums | None = None
    ) -> M:
        try:
            parsed = model.model_validate(data, strict=True)
        except ValidationError as exc:
            raise validation_problem(
                [
                    {"field": pointer([name]), "message": f"{e['field'] or '/'}: {e['message']}"}
                    for e in _errors(exc)
                ]
            ) from None
        check_enums(parsed, enums or {}, inside=pointer([name]))
        return parsed

    def emit(self, event_type: str, data: dict[str, Any]) -> str:
        return self.sim.emit(self.partner, event_type, data)


def parse_model(body: Any, model: type[M], enums: Enums | None = None) -> M:
    """Schema checks in their order: unknown fields, types, then enumerated values."""
    body = {} if body is None else body
    if not isinstance(body, dict):
        raise validation_problem([{"field": "", "message": "the body must be a JSON object"}])
    unknown = sorted(set(body) - set(model.model_fields))
    if unknown:
        raise validation_problem(
            [{"field": pointer([name]), "message": "unknown field"} for name in unknown],
            code="unknown-field",
        )
    try:
        parsed = model.model_validate(body, strict=True)
    except ValidationError as exc:
        raise validation_problem(_errors(exc)) from None
    check_enums(parsed, enums or {})
    return parsed


def check_enums(parsed: BaseModel, enums: Enums, *, inside: str | None = None) -> None:
    """Enumerated values have their own codes and an ``allowed`` list (DESIGN §3)."""
    for name, (code, allowed) in enums.items():
        value: Any = parsed
        for part in name.split("."):
            value = getattr(value, part)
        if value is not None and value not in allowed:
            where = pointer(name.split("."))
            message = f"must be one of: {', '.join(allowed)}"
            field, message = (inside, f"{where}: {message}") if inside else (where, message)
            raise Problem(
                422,
                code,
                f"{name.split('.')[-1]} is not an allowed value; allowed: {', '.join(allowed)}.",
                errors=[{"field": field, "message": message}],
                allowed=list(allowed),
            )


def session_account(call: Call) -> str | None:
    """The account a session is bound to (a person session covers its person's account)."""
    s = call.session
    if s is None:
        return None
    if s.session_type == "account":
        return s.account_id
    if s.session_type == "person" and s.person_id is not None:
        person = call.state.persons.get(s.person_id)
        return person.account_id if person else None
    return None


def _errors(exc: ValidationError) -> list[dict[str, str]]:
    return [{"field": pointer(e["loc"]), "message": e["msg"]} for e in exc.errors(include_input=False)]


def _find_pii(value: Any, path: tuple[Any, ...]) -> tuple[Any, ...] | None:
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and key.lower() in PII_FIELDS:
                return (*path, key)
            found = _find_pii(item, (*path, key))
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _find_pii(item, (*path, index))
            if found is not None:
                return found
    return None


# --- 2. partner token ------------------------------------------------------------------


def authenticate(sim: Sim, request: Request) -> str:
    """The partner client id behind the bearer token, or 401 ``invalid-partner-token``."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Problem(
            401,
            "invalid-partner-token",
            "A partner access token is required: send Authorization: Bearer <token> from "
            "POST /oauth/accesstoken.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    record = sim.state.partner_tokens.get(token)
    if record is None or record.revoked or sim.state.now >= record.expires_at:
        raise Problem(
            401,
            "invalid-partner-token",
            "The partner access token is unknown, revoked or expired; request a new one at "
            "POST /oauth/accesstoken.",
            headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
        )
    return record.partner


# --- 3. body -------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _too_large() -> Problem:
    # Built only when raised: building it for every request showed in the profile.
    return Problem(413, "payload-too-large", f"Request bodies may be at most {MAX_BODY} bytes.")


async def read_body(request: Request) -> bytes:
    """The raw body, refused with 413 past the limit (A22) without reading it all."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_BODY:
        raise _too_large()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise _too_large()
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json(request: Request) -> Any:
    """The request's JSON body (None when empty), or 413 / 415 / 400."""
    raw = await read_body(request)
    if not raw.strip():
        return None
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        raise Problem(
            415, "unsupported-media-type", "Send the body as JSON (Content-Type: application/json)."
        )
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise Problem(400, "malformed-json", "The request body is not valid JSON.") from None


# --- 11, prepared: decryption ahead of the checks ------------------------------------------


async def decrypt_ahead(call: Call) -> None:
    """Decrypt the body's ``encrypted_*`` JWEs in the simulator's crypto workers, if it has any.

    Only the work moves: the results wait in ``call.decrypted`` until the handler reaches
    step 11 (``Call.decrypt``), so the order of checks and every answer stay the same. It runs
    before any state is read or changed (idempotency, session), and a result is used only with
    the keys it was made with (a reset in between changes them). Anything oversized is left
    to step 11, which refuses it without decrypting (A33); so is everything when no worker
    can take it.
    """
    workers, body = call.sim.crypto, call.body
    if workers is None or not isinstance(body, dict):
        return
    tokens = [
        value
        for name, value in body.items()
        if name.startswith("encrypted_") and isinstance(value, str) and len(value) <= MAX_JWE
    ]
    keys, seed = call.state.keys, call.state.seed
    ready: dict[str, bytes | CryptoError] = {}
    for token in tokens:
        try:
            ready[token] = await workers.decrypt(seed, token)
        except CryptoError as exc:
            ready[token] = exc
        except WorkerUnavailable:
            return
    call.decrypted = (keys, ready)


# --- 5. session ------------------------------------------------------------------------------


def session_expires_at(sim: Sim, s: Session) -> datetime:
    """When a session stops being valid (A06): fixed from creation, sliding from last use."""
    if s.strategy == "fixed":
        return s.created_at + FIXED_LIFETIME
    return min(s.last_used + SLIDING_IDLE, s.chain_start + SLIDING_MAX)


def load_session(sim: Sim, partner: str, token: str) -> Session:
    """The valid session named by ``svc-session-id``, or the 401 that says why not."""
    s = sim.state.sessions.get(token)
    if s is None or s.partner != partner or s.ended:
        raise Problem(401, "invalid-session", "The session is unknown or has ended; create a new one.")
    if s.superseded:
        raise Problem(
            401,
            "session-superseded",
            "The session was promoted; use the session token the promotion returned.",
        )
    if sim.state.now >= session_expires_at(sim, s):
        raise Problem(401, "session-expired", "The session has expired; create a new one.")
    return s


# --- 4. idempotency ------------------------------------------------------------------------


def _idempotency(call: Call, key: str) -> IdempotencyRecord | Response:
    state = call.state
    if not key or len(key) > 255:
        raise Problem(400, "idempotency-key-invalid", "An Idempotency-Key has 1 to 255 characters.")
    record = state.idempotency.get((call.partner, key))
    if record is not None and (state.now - record.created_at).total_seconds() >= IDEMPOTENCY_RETENTION:
        del state.idempotency[(call.partner, key)]
        record = None
    path = call.request.url.path
    if record is None:
        record = IdempotencyRecord(call.request.method, path, call.body, state.now)
        state.idempotency[(call.partner, key)] = record
        return record
    if record.in_flight:
        raise Problem(
            409,
            "idempotency-key-in-use",
            "A request with this Idempotency-Key is still being processed; retry shortly.",
            headers={"Retry-After": "1"},
        )
    if record.method != call.request.method or record.path != path or record.body != call.body:
        raise Problem(
            422,
            "idempotency-key-reused",
            "This Idempotency-Key was used for another request; use a new key for a new request.",
        )
    return Response(
        content=record.response_body,
        status_code=record.status,
        headers={**record.headers, "Idempotent-Replayed": "true"},
    )


def _store(call: Call, record: IdempotencyRecord, response: Response) -> None:
    """Keep the answer for replays: status, body and the ``svc-*`` headers (DESIGN §3.9)."""
    record.in_flight = False
    record.status = response.status_code
    record.response_body = bytes(response.body)
    record.headers = {
        k: v for k, v in response.headers.items() if k.startswith("svc-") or k == "content-type"
    }
    # These two are added on the way out by ServiceHeaders; a replay repeats the original's.
    record.headers["svc-request-id"] = call.request.state.request_id
    record.headers["svc-assumptions"] = ",".join(sorted(call.assumptions))


# --- faults ------------------------------------------------------------------------------------


def draw_fault(sim: Sim, request: Request) -> Fault | None:
    """The injected fault for this request, drawn from the seeded random source."""
    faults = sim.state.faults
    if not faults:  # the common case: no URL to build (Starlette's request.url is costly)
        return None
    route = request.scope.get("route")
    template = getattr(route, "path", None) or request.url.path
    for fault in faults.values():
        if fault.method != request.method or fault.path != template:
            continue
        if fault.times is not None and fault.fired >= fault.times:
            continue
        if sim.state.random.random() < fault.rate:
            fault.fired += 1
            return fault
    return None


def fault_problem(fault: Fault) -> Problem:
    headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
    return Problem(
        fault.status or 503,
        "injected-fault",
        "The simulator injected this failure (POST /_sim/faults). Retry the request.",
        headers=headers,
    )


# --- the pipeline -----------------------------------------------------------------------------


async def run(
    request: Request,
    handler: Callable[[Call], Reply],
    *,
    assumptions: Iterable[str] = (),
    idempotency: str = "optional",
    check_session: bool = True,
) -> Response:
    """Take a partner request through the checks of DESIGN §3 and answer it."""
    sim: Sim = request.app.state.sim
    request.state.assumptions.update(assumptions)
    partner = authenticate(sim, request)
    body = await read_json(request) if request.method in ("POST", "PUT", "PATCH") else None
    call = Call(sim, request, partner, body)
    await decrypt_ahead(call)
    record: IdempotencyRecord | None = None
    if request.method == "POST" and idempotency != "none":
        key = request.headers.get(IDEMPOTENCY_HEADER)
        if key is not None or idempotency == "required":
            call.assumptions.add("A20")
        if key is None and idempotency == "required":
            raise Problem(
                400,
                "idempotency-key-required",
                f"This endpoint requires an {IDEMPOTENCY_HEADER} header (a new unique value per "
                "operation, the same on its retries).",
            )
        if key is not None:
            found = _idempotency(call, key)
            if isinstance(found, Response):
                return found
            record = found
    try:
        fault = draw_fault(sim, request)
        if fault is not None and fault.latency_ms:
            await asyncio.sleep(fault.latency_ms / 1000)
        if fault is not None and fault.status and fault.when == "before_commit":
            raise fault_problem(fault)
        token = request.headers.get(SESSION_HEADER)
        if check_session and token is not None:
            call.session = load_session(sim, partner, token)
            call.session_in_force = call.session
        reply = handler(call)
    except Problem as problem:
        _release(call, record)
        refusal = problem.response()
        _session_header(call, refusal)
        return refusal
    except BaseException:
        _release(call, record)  # never leave a key "in flight" forever
        raise
    if 200 <= reply.status < 300 and call.session is not None and call.session_in_force is call.session:
        call.session.last_used = call.state.now  # sliding sessions count 2xx calls only
    response = _json_response(reply)
    _session_header(call, response)
    if record is not None:
        _store(call, record, response)
    if fault is not None and fault.status and fault.when == "after_commit":
        return fault_problem(fault).response()
    return response


def _release(call: Call, record: IdempotencyRecord | None) -> None:
    if record is not None:
        call.state.idempotency.pop((call.partner, call.request.headers[IDEMPOTENCY_HEADER]), None)


def _json_response(reply: Reply) -> Response:
    if reply.body is None:
        return Response(status_code=reply.status, headers=reply.headers)
    content = json.dumps(reply.body, separators=(",", ":"), ensure_ascii=False).encode()
    return Response(content, reply.status, reply.headers, media_type="application/json")


def _session_header(call: Call, response: Response) -> None:
    s = call.session_in_force
    if s is not None and not s.ended and not s.superseded:
        response.headers["svc-session-expires-at"] = format_time(session_expires_at(call.sim, s))


# --- headers on every response ---------------------------------------------------------------


class ServiceHeaders:
    """Adds ``svc-request-id``, ``svc-api-version`` and ``svc-assumptions`` (A27, A28)."""

    def __init__(self, app: ASGIApp, sim: Sim) -> None:
        self.app = app
        self.sim = sim

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = self.sim.state.ids.next("req")
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        assumptions: set[str] = set()
        state["assumptions"] = assumptions

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if "svc-request-id" not in headers:
                    headers["svc-request-id"] = request_id
                headers["svc-api-version"] = self.sim.version
                if headers.get("content-type", "").startswith("application/problem+json"):
                    assumptions.add("A21")
                if assumptions and "svc-assumptions" not in headers:
                    headers["svc-assumptions"] = ",".join(sorted(assumptions))
            await send(message)

        await self.app(scope, receive, send_with_headers)
