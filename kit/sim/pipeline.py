"""How every partner request is handled: the order of checks, top to bottom.

A refused request is refused by the first check it fails, in this order, and a request changes
state only once all of them have passed (the wire contract; A22):

1. route: path and method (FastAPI's router or ``kit.sim.fastpath``; 404 not-found, 405)
2. partner token: :func:`authenticate`
3. body parsing and size: :func:`read_json`
4. idempotency: :func:`idempotency_record`; then the faults injected through ``/_sim/faults``
5. session validity: :func:`load_session`
6. session type: :meth:`Call.require_session`
7. the resource exists: :meth:`Call.find_account`, :meth:`Call.find_person`, :meth:`Call.find_card`
8. the session is bound to it: :meth:`Call.require_bound_to_account`, ``…_to_person``
9. no clear-text PII: :meth:`Call.reject_clear_pii`
10. schema: :meth:`Call.parse`
11. decryption: :meth:`Call.decrypt` (work done ahead by :func:`decrypt_ahead`)
12. the plaintext's schema: :meth:`Call.parse_plaintext`
13. state and 14. business rules: the route's own handler

:func:`run` takes a request through 2-5 and hands a :class:`Call` to the route's handler, which
takes it through 6-14 with the :class:`Call` helpers. This module stands in that order.

``svc-assumptions`` names the register entries of the path actually taken: each step adds its
entry as it runs, and a refusal (a :class:`~kit.sim.problems.Problem`) adds the entries it
states. A choice the request had to follow is named whenever its step runs — the bearer header
(A02, step 2), an ``Idempotency-Key`` sent or required (A20), a valid session's lifetime (A06),
the session an endpoint needs (A43), the binding of a session to a resource (A31), the JWE
rules (A04), the body shape of the route (``parse(uses=…)``); a check whose rule is only a
limit or a refusal is named when it refuses — body limits (A22), clear-text PII (A11), session
validity (A06, A07, A30, A34), not found (A30 and the resource's entry), business rules. The
handler names what shapes its answer with :meth:`Call.uses`; every problem+json answer adds
A21 (``kit.sim.middleware``). An idempotent replay repeats the stored answer's list.

    >>> async def get_card(request: Request, card_id: str) -> Response:  # doctest: +SKIP
    ...     def handle(call: Call) -> RouteReply:
    ...         card = call.find_card(card_id)  # 7
    ...         call.require_bound_to_account(call.find_account(card.account_id))  # 8
    ...         call.uses("A35")
    ...         return RouteReply(200, CardOut.wire(card))
    ...     return await run(request, handle)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import parse_qsl

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from kit import register
from kit.sim import versions
from kit.sim.atrest import token_digest
from kit.sim.clock import format_time
from kit.sim.crypto import CONTENT_ENCRYPTION, CryptoError, ServerKeys
from kit.sim.cryptoworker import WorkerUnavailable
from kit.sim.headers import (
    ASSUMPTIONS,
    AUTHORIZATION,
    IDEMPOTENCY_KEY,
    REQUEST_ID,
    SESSION_EXPIRES_AT,
    SESSION_ID,
    TOKEN_SCHEME,
    first,
)
from kit.sim.personality import DEFAULT, SessionLifetimes
from kit.sim.pii import pii_parameter, pii_path
from kit.sim.problems import Problem, not_found, pointer, uses, validation_problem
from kit.sim.runtime import Sim
from kit.sim.schema import Enums, M, parse_model, parse_plaintext
from kit.sim.state import Fault, IdempotencyRecord, Session, State, body_digest

if TYPE_CHECKING:
    from kit.sim.records import Account, Card, Person

_A = register.value
MAX_BODY = int(_A("A22")["max_body_bytes"])
MAX_JWE = int(_A("A33")["max_jwe_bytes"])
IDEMPOTENCY_RETENTION = int(_A("A20")["retention_seconds"])
MAX_IDEMPOTENCY_KEY = int(_A("A47")["idempotency_key_max_chars"])
ENCRYPTED_DATA_DETAIL = (
    "The encrypted data could not be used. Encrypt with a key from "
    "GET /sessions/user_session_initialization_data: its kid and alg, enc "
    f"{CONTENT_ENCRYPTION}, no other header parameters."
)
R = TypeVar("R")
#: ``run(idempotency=…)``: a POST may carry the key, must carry it, or the route has none.
Idempotency = Literal["optional", "required", "none"]


@dataclass
class RouteReply:
    """What a handler answers: status, JSON body (or its compact encoding, ``bytes``, as
    :func:`json_body` makes it) and extra headers."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    #: The body carries a clear token: an idempotency record keeps it sealed (``kit.sim.atrest``).
    sealed: bool = False


_SCHEME = TOKEN_SCHEME.lower()
_AUTHORIZATION, _IDEMPOTENCY_KEY, _SESSION_ID = (
    name.lower().encode("latin-1") for name in (AUTHORIZATION, IDEMPOTENCY_KEY, SESSION_ID)
)


# --- the entry --------------------------------------------------------------------------------


async def run(
    request: Request,
    handler: Callable[[Call], RouteReply | Awaitable[RouteReply]],
    *,
    idempotency: Idempotency = "optional",
    check_session: bool = True,
    decrypts: tuple[str, ...] = (),
) -> Response:
    """Take a partner request through the order of checks; ``handler`` does steps 6-14.

    ``check_session=False`` leaves a ``svc-session-id`` sent along unread (step 5).
    ``decrypts`` names the ``encrypted_*`` members the route's body declares: only those are
    decrypted ahead (:func:`decrypt_ahead`).
    """
    sim: Sim = request.app.state.sim
    partner = authenticate(sim.state, request)  # 2
    method = request.scope["method"]  # request.method, without its typing.cast call
    body = await read_json(request) if method in ("POST", "PUT", "PATCH") else None  # 3
    call = Call(sim, request, partner, body)
    await decrypt_ahead(call, decrypts)  # the work of step 11, whose results wait for it
    record = idempotency_record(call, idempotency)  # 4
    if isinstance(record, Response):
        return record  # a replay
    try:
        fault = await injected_fault(sim.state, request) if sim.state.faults else None
        token = first(request.scope, _SESSION_ID)
        if check_session and token is not None:
            lifetimes = sim.personality.sessions
            call.session = call.session_in_force = load_session(sim.state, partner, token, lifetimes)  # 5
            call.uses("A06")  # its lifetime: it is valid, and svc-session-expires-at says until when
        if request.scope.get("query_string"):  # 9, for the query (none: no QueryParams built)
            reject_clear_pii_parameters(request.query_params.multi_items(), "query")
        reply = handler(call)  # 6-14
        if not isinstance(reply, RouteReply):  # a handler that awaits (a name resolved, A39)
            reply = await reply
    except Problem as problem:
        release(call, record)
        call.uses(*problem.assumptions)
        refusal = problem.response()
        _session_header(call, refusal)
        return refusal
    except BaseException:
        release(call, record)  # never leave a key "in flight" forever
        raise
    if 200 <= reply.status < 300 and call.session is not None and call.session_in_force is call.session:
        call.session.last_used = call.state.now  # sliding sessions count 2xx calls only
    response = _json_response(reply)
    _session_header(call, response)
    if record is not None:
        store(call, record, response, sealed=reply.sealed)
    if fault is not None and fault.status and fault.when == "after_commit":
        return fault_problem(fault).response()
    return response


# --- 1. route ---------------------------------------------------------------------------------
# FastAPI's router, or the fast path for plain routes (kit/sim/fastpath.py), chose the endpoint
# that calls run; a path it does not know is a 404 not-found, a method it does not take a 405.


# --- 2. partner token -------------------------------------------------------------------------


def authenticate(state: State, request: Request) -> str:
    """The partner client id behind the bearer token, or 401 ``invalid-partner-token`` (A02)."""
    uses(request, "A02")  # the header and scheme that carry the token: named as the check runs
    scheme, _, token = (first(request.scope, _AUTHORIZATION) or "").partition(" ")
    token = token.strip()
    if scheme.lower() != _SCHEME or not token:
        raise Problem(
            401,
            "invalid-partner-token",
            f"A partner access token is required: send {AUTHORIZATION}: {TOKEN_SCHEME} <token> from "
            f"{versions.token_endpoint(versions.of(request.state))}.",
            headers={"WWW-Authenticate": TOKEN_SCHEME},
        )
    record = state.partner_tokens.peek(token_digest(token))  # read only: revoking looks it up again
    if record is None or record.revoked or state.now >= record.expires_at:
        raise Problem(
            401,
            "invalid-partner-token",
            "The partner access token is unknown, revoked or expired; request a new one at "
            f"{versions.token_endpoint(versions.of(request.state))}.",
            headers={"WWW-Authenticate": f'{TOKEN_SCHEME} error="invalid_token"'},
        )
    return record.partner


# --- 3. body parsing and size -----------------------------------------------------------------


async def read_json(request: Request) -> Any:
    """The request's JSON body (None when empty), or 413 / 415 / 400 (A22)."""
    raw = await read_body(request)
    if not raw.strip():
        return None
    media = (first(request.scope, b"content-type") or "").split(";")[0].strip().lower()
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        if media == FORM_MEDIA_TYPE:  # a form is checked for clear PII as a JSON body is (A11)
            reject_clear_pii_parameters(form_items(raw), "form")
        raise Problem(
            415,
            "unsupported-media-type",
            "Send the body as JSON (Content-Type: application/json).",
            assumptions=("A22",),
        )
    try:
        text = raw.decode("utf-8")
        if text.startswith("\ufeff"):  # what json.loads refuses before decoding
            raise ValueError("a UTF-8 BOM")
        return _BODY_DECODER.decode(text)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise Problem(
            400, "malformed-json", "The request body is not valid JSON.", assumptions=("A22",)
        ) from None


async def read_body(request: Request, limit: int = MAX_BODY, entry: str = "A22") -> bytes:
    """The raw body, refused with 413 past ``limit`` (the register ``entry`` that sets it: A22)
    without reading it all: at once when its Content-Length says so.

    Read off the ASGI messages as ``request.stream()`` reads them (a disconnect is Starlette's
    ``ClientDisconnect``), without its async generator (about 2 µs a body); it consumes the
    request's stream, which nothing reads again.
    """
    length = first(request.scope, b"content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise _too_large(limit, entry)
    receive = request.receive
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        kind = message["type"]
        if kind == "http.request":
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _too_large(limit, entry)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)
        elif kind == "http.disconnect":
            raise ClientDisconnect()


def _too_large(limit: int, entry: str) -> Problem:
    # Built only when raised: building it for every request showed in the profile.
    return Problem(
        413, "payload-too-large", f"Request bodies may be at most {limit} bytes.", assumptions=(entry,)
    )


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


#: ``json.loads(text, parse_constant=_reject_constant)`` without a new decoder a request.
_BODY_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


# --- before 4: the work of step 11, done ahead ------------------------------------------------


async def decrypt_ahead(call: Call, declared: tuple[str, ...]) -> None:
    """Decrypt the body's ``encrypted_*`` JWEs in the simulator's crypto workers, if it has any.

    Only the members the route ``declared``: a body holding any other ``encrypted_*`` member
    is decrypted not at all here (its schema check, step 10, refuses it before step 11).

    Only the work moves: the results wait in ``call.decrypted`` until the handler reaches
    step 11 (:meth:`Call.decrypt`), so the order of checks and every answer stay the same. It
    runs before any state is read or changed (idempotency, session), and a result is used only
    with the keys it was made with (a reset in between changes them). Anything oversized is
    left to step 11, which refuses it without decrypting (A33); so is everything when no
    worker can take it.
    """
    workers, body = call.sim.crypto, call.body
    if workers is None or not declared or not isinstance(body, dict):
        return
    tokens = []
    for name, value in body.items():
        if name.startswith("encrypted_"):
            if name not in declared:
                return
            if isinstance(value, str) and len(value) <= MAX_JWE:
                tokens.append(value)
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


# --- 4. idempotency, then injected faults -----------------------------------------------------


def idempotency_record(call: Call, policy: Idempotency) -> IdempotencyRecord | Response | None:
    """The record that will keep this POST's answer, a stored answer to replay, or None (A20).

    A key used for another request is 422 ``idempotency-key-reused``, one still in flight 409
    ``idempotency-key-in-use``; without a key where the route requires one, 400.
    """
    request = call.request
    if request.scope["method"] != "POST" or policy == "none":
        return None
    key = first(request.scope, _IDEMPOTENCY_KEY)
    if key is not None or policy == "required":
        call.assumptions.add("A20")
    if key is None:
        if policy == "required":
            raise Problem(
                400,
                "idempotency-key-required",
                f"This endpoint requires an {IDEMPOTENCY_KEY} header (a new unique value per "
                "operation, the same on its retries).",
            )
        return None
    if not key or len(key) > MAX_IDEMPOTENCY_KEY:
        raise Problem(
            400, "idempotency-key-invalid", f"An Idempotency-Key has 1 to {MAX_IDEMPOTENCY_KEY} characters."
        )
    state = call.state
    record = state.idempotency.get((call.partner, key))
    if record is not None and (state.now - record.created_at).total_seconds() >= IDEMPOTENCY_RETENTION:
        del state.idempotency[(call.partner, key)]
        record = None
    path = request.url.path
    if record is None:
        record = IdempotencyRecord(request.method, path, body_digest(call.body), state.now)
        state.idempotency[(call.partner, key)] = record
        return record
    if record.in_flight:
        raise Problem(
            409,
            "idempotency-key-in-use",
            "A request with this Idempotency-Key is still being processed; retry shortly.",
            headers={"Retry-After": "1"},
        )
    if record.method != request.method or record.path != path or record.body != body_digest(call.body):
        raise Problem(
            422,
            "idempotency-key-reused",
            "This Idempotency-Key was used for another request; use a new key for a new request.",
        )
    body = state.sealer.open(record.response_body) if record.sealed_by else record.response_body
    return Response(
        content=body,
        status_code=record.status,
        headers={**record.headers, "Idempotent-Replayed": "true"},
    )


def release(call: Call, record: IdempotencyRecord | None) -> None:
    """Forget the key of a refused request: it may be used again."""
    if record is not None:
        call.state.idempotency.pop((call.partner, call.request.headers[IDEMPOTENCY_KEY]), None)


def store(call: Call, record: IdempotencyRecord, response: Response, *, sealed: bool = False) -> None:
    """Keep the answer for replays: status, body (``sealed``: under the server's key, for an
    answer carrying a clear token) and the ``svc-*`` headers (A20)."""
    record.in_flight = False
    record.status = response.status_code
    body = bytes(response.body)
    if sealed:
        sealer = call.state.sealer
        body, record.sealed_by = sealer.seal(body), sealer.key_id
    record.response_body = body
    record.headers = {
        k: v for k, v in response.headers.items() if k.startswith("svc-") or k == "content-type"
    }
    # These two are added on the way out by ServiceHeaders; a replay repeats the original's.
    record.headers[REQUEST_ID] = call.request.state.request_id
    record.headers[ASSUMPTIONS] = ",".join(sorted(call.assumptions))


async def injected_fault(state: State, request: Request) -> Fault | None:
    """The fault drawn for this request, after its latency; raises one due before commit."""
    fault = draw_fault(state, request)
    if fault is not None and fault.latency_ms:
        await asyncio.sleep(fault.latency_ms / 1000)
    if fault is not None and fault.status and fault.when == "before_commit":
        raise fault_problem(fault)
    return fault


def draw_fault(state: State, request: Request) -> Fault | None:
    """The injected fault for this request, drawn from the seeded random source."""
    faults = state.faults
    if not faults:  # the common case: no URL to build (Starlette's request.url is costly)
        return None
    route = request.scope.get("route")
    template = getattr(route, "path", None) or request.url.path
    for fault in faults.values():
        if fault.method != request.method or fault.path != template:
            continue
        if fault.times is not None and fault.fired >= fault.times:
            continue
        faults.touch(fault.fault_id)  # a draw moves the random state: a durable simulator writes it
        if state.random.random() < fault.rate:
            fault.fired += 1
            return fault
    return None


def fault_problem(fault: Fault) -> Problem:
    """The answer of an injected fault (503 unless the fault names a status)."""
    headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
    return Problem(
        fault.status or 503,
        "injected-fault",
        "The simulator injected this failure (POST /_sim/faults). Retry the request.",
        headers=headers,
        assumptions=("A45",),
    )


# --- 5. session validity ----------------------------------------------------------------------


def load_session(
    state: State, partner: str, token: str, lifetimes: SessionLifetimes = DEFAULT.sessions
) -> Session:
    """The valid session named by ``svc-session-id``, or the 401 that says why not.

    Unknown, another partner's (A30) or ended (A34): ``invalid-session``; promoted (A07):
    ``session-superseded``; past its lifetime (A06): ``session-expired``.
    """
    s = state.sessions.get(token_digest(token))
    if s is None or s.partner != partner or s.ended:
        raise Problem(
            401,
            "invalid-session",
            "The session is unknown or has ended; create a new one.",
            assumptions=("A30", "A34"),
        )
    if s.superseded:
        raise Problem(
            401,
            "session-superseded",
            "The session was promoted; use the session token the promotion returned.",
            assumptions=("A07",),
        )
    if state.now >= session_expires_at(s, lifetimes):
        raise Problem(
            401, "session-expired", "The session has expired; create a new one.", assumptions=("A06",)
        )
    return s


def session_expires_at(s: Session, lifetimes: SessionLifetimes = DEFAULT.sessions) -> datetime:
    """When a session stops being valid (A06, the simulator's lifetimes): fixed from creation,
    sliding from last use."""
    if s.strategy == "fixed":
        return s.created_at + lifetimes.fixed
    return min(s.last_used + lifetimes.sliding_idle, s.chain_start + lifetimes.sliding_max)


# --- 6-14: what the route's handler checks, through its Call ----------------------------------


class Call:
    """One partner request on its way through the checks, as a route's handler gets it."""

    def __init__(self, sim: Sim, request: Request, partner: str, body: Any) -> None:
        self.sim = sim
        self.state = sim.state
        self.request = request
        self.partner = partner
        self.body = body
        #: The session sent in ``svc-session-id`` (step 5), and the one the answer leaves in force.
        self.session: Session | None = None
        self.session_in_force: Session | None = None
        self.assumptions: set[str] = request.scope["state"]["assumptions"]  # ServiceHeaders' set
        #: JWEs decrypted ahead, off the event loop (see ``decrypt_ahead``), by the keys used.
        self.decrypted: tuple[ServerKeys | None, dict[str, bytes | CryptoError]] = (None, {})

    @property
    def now(self) -> datetime:
        return self.state.now

    @property
    def version(self) -> str:
        """The API version serving this request (step 0, ``kit.sim.versions``; A27)."""
        return versions.of(self.request.state)

    def uses(self, *assumptions: str) -> None:
        """Name register entries in this answer's ``svc-assumptions`` (what shaped it)."""
        self.assumptions.update(assumptions)

    # 6. session type
    def require_session(self, *types: str) -> Session:
        """The session, which must be one of ``types`` (A43): else 401 or 403."""
        self.uses("A43")
        if self.session is None:
            raise Problem(
                401,
                "session-required",
                f"This endpoint needs a session of type {' or '.join(types)} in the "
                f"{SESSION_ID} header; create one with POST /sessions.",
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

    def require_rule5_session(self) -> None:
        """Step 6 on card and event routes: a session, where a choice overlay requires one where
        rule 5 says "should" (A63); by default none is needed (the partner token suffices)."""
        if self.sim.personality.require_session:
            self.uses("A63")
            self.require_session("account", "person")

    # 7. the resource exists (for this partner: another partner's is not there, A30)
    def find_account(self, account_id: str) -> Account:
        return self._found("account", "A10", self.state.account(self.partner, account_id))

    def find_person(self, person_id: str) -> Person:
        return self._found("person", "A11", self.state.person(self.partner, person_id))

    def find_card(self, card_id: str) -> Card:
        return self._found("card", "A35", self.state.card(self.partner, card_id))

    @staticmethod
    def _found(resource: str, entry: str, record: R | None) -> R:
        """``record``, or 404 ``<resource>-not-found`` (A30 and the resource's ``entry``)."""
        if record is None:
            raise not_found(resource, "A30", entry)
        return record

    # 8. the session is bound to it
    def require_bound_to_account(self, account: Account) -> None:
        """The session (when one was sent) must be bound to ``account`` (A31)."""
        self.uses("A31")
        if self.session is not None and self._bound_account() != account.account_id:
            raise Problem(
                403,
                "session-not-bound",
                "The session is not bound to this account; use a session of this account or "
                "of one of its persons.",
            )

    def require_bound_to_person(self, person: Person) -> None:
        """An account session of the person's account, or the person's own session (A31)."""
        self.uses("A31")
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

    def bound_account(self, account_id: str) -> Account:
        """Steps 7 and 8 for a request about an account: it exists and the session is bound to it."""
        account = self.find_account(account_id)
        self.require_bound_to_account(account)
        return account

    def _bound_account(self) -> str | None:
        """The account the session is bound to (a person session covers its person's account)."""
        s = self.session
        if s is None:
            return None
        if s.session_type == "account":
            return s.account_id
        if s.session_type == "person" and s.person_id is not None:
            person = self.state.persons.get(s.person_id)
            return person.account_id if person else None
        return None

    # 9. no clear-text PII
    def reject_clear_pii(self) -> None:
        """422 ``pii-must-be-encrypted`` for a field named as personal data, in any spelling,
        at any depth of the body (A11; the rule is ``kit.sim.pii``'s)."""
        found = pii_path(self.body)
        if found is not None:
            raise Problem(
                422,
                "pii-must-be-encrypted",
                "Personal data is accepted only encrypted; send it inside an encrypted_* field.",
                errors=[{"field": pointer(found), "message": "personal data must be encrypted"}],
                assumptions=("A11",),
            )

    def body_as(self, model: type[M], enums: Enums | None = None, *, uses: Iterable[str] = ()) -> M:
        """Steps 9 and 10: no clear-text PII in the body, then the body as ``model`` (:meth:`parse`)."""
        self.reject_clear_pii()
        return self.parse(model, enums, uses=uses)

    # 10. schema
    def parse(self, model: type[M], enums: Enums | None = None, *, uses: Iterable[str] = ()) -> M:
        """The body as ``model``; ``enums`` maps field → (code, allowed) (``kit.sim.schema``);
        ``uses`` are the register entries that chose the route's body shape."""
        self.uses(*uses)
        return parse_model(self.body, model, enums)

    # 11. decryption
    def decrypt(self, name: str, value: str) -> dict[str, Any]:
        """The JSON object encrypted in field ``name`` (the JWE rules of A04), or 400
        ``invalid-encrypted-data``."""
        self.uses("A04")
        try:
            if len(value) > MAX_JWE:  # refused before any decryption work (A33)
                self.uses("A33")
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
        return self.sim.personality.dialect.from_wire(data)  # its names are the dialect's (A68)

    # 12. the plaintext's schema
    def parse_plaintext(
        self,
        name: str,
        model: type[M],
        data: dict[str, Any],
        enums: Enums | None = None,
        *,
        uses: Iterable[str] = (),
    ) -> M:
        """The decrypted ``data`` of field ``name`` as ``model``; ``uses`` as for :meth:`parse`."""
        self.uses(*uses)
        return parse_plaintext(name, model, data, enums)

    def decrypt_as(self, name: str, value: str, model: type[M], *, uses: Iterable[str] = ()) -> M:
        """Steps 11 and 12: the JWE ``value`` of field ``name`` decrypted, as ``model``."""
        return self.parse_plaintext(name, model, self.decrypt(name, value), uses=uses)

    # 13. state and 14. business rules: the handler's own; then it changes state, e.g.:
    def emit(self, event_type: str, data: dict[str, Any]) -> str:
        """Send a webhook event to the partner's subscriptions; returns its ``evt_`` id."""
        return self.sim.emit(self.partner, event_type, data)


# --- the answer: a JSON body, and when the session in force expires ---------------------------


FORM_MEDIA_TYPE = "application/x-www-form-urlencoded"


def form_items(raw: bytes) -> list[tuple[str, str]]:
    """The fields of a form body, as sent (an undecodable form has none)."""
    try:
        return parse_qsl(raw.decode("utf-8"), keep_blank_values=True)
    except (UnicodeDecodeError, ValueError):
        return []


def reject_clear_pii_parameters(items: Iterable[tuple[str, str]], where: str) -> None:
    """422 ``pii-must-be-encrypted`` for a query parameter or form field that is personal data
    (A11, the rule of ``kit.sim.pii``), named by its parameter's name, never its value."""
    name = pii_parameter(items)
    if name is not None:
        raise Problem(
            422,
            "pii-must-be-encrypted",
            "Personal data is accepted only encrypted; send it inside an encrypted_* field.",
            errors=[{"field": f"{where}:{name}", "message": "personal data must be encrypted"}],
            assumptions=("A11",),
        )


#: What ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)`` builds on every call.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def json_body(value: Any) -> bytes:
    """The wire encoding of every JSON answer: compact, UTF-8."""
    return _ENCODER.encode(value).encode()


_JSON_CONTENT_TYPE = (b"content-type", b"application/json")


class _JSONAnswer(Response):
    """``Response(body, status, media_type="application/json")`` for a status that has a body,
    without extra headers: its raw headers written out, the same two in the same order as
    Starlette's ``init_headers`` makes them (content-length, content-type), past its general case."""

    media_type = "application/json"

    def __init__(self, body: bytes, status: int) -> None:
        self.status_code = status
        self.background = None
        self.body = body
        self.raw_headers = [(b"content-length", str(len(body)).encode()), _JSON_CONTENT_TYPE]


def _json_response(reply: RouteReply) -> Response:
    if reply.body is None:
        return Response(status_code=reply.status, headers=reply.headers)
    content = reply.body if isinstance(reply.body, bytes) else json_body(reply.body)
    if not reply.headers and reply.status >= 200 and reply.status not in (204, 304):
        return _JSONAnswer(content, reply.status)
    return Response(content, reply.status, reply.headers, media_type="application/json")


_SESSION_EXPIRES_AT = SESSION_EXPIRES_AT.lower().encode("latin-1")


def _session_header(call: Call, response: Response) -> None:
    s = call.session_in_force
    if s is not None and not s.ended and not s.superseded:
        expires = format_time(session_expires_at(s, call.sim.personality.sessions))
        if any(name == _SESSION_EXPIRES_AT for name, _ in response.raw_headers):
            response.headers[SESSION_EXPIRES_AT] = expires
        else:  # what response.headers[…] = … does then, without a MutableHeaders
            response.raw_headers.append((_SESSION_EXPIRES_AT, expires.encode("latin-1")))
