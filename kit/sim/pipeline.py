"""How every partner request is handled: the order of checks, top to bottom.

A refused request is refused by the first check it fails, in this order, and a request changes
state only once all of them have passed (the wire contract; A22):

1. route: path and method (the route table, ``kit.sim.table``; else FastAPI's 404 not-found, 405)
2. partner token: :func:`authenticate`
3. body parsing and size: :func:`read_json`
4. idempotency: :func:`~kit.sim.idempotency.idempotency_record`; then the faults injected
   through ``/_sim/faults``
5. session validity: :func:`load_session`
6. session type: :meth:`Call.require_session` (the :class:`~kit.sim.call.Call` API, ``kit.sim.call``)
7. the resource exists: :meth:`Call.find_account`, :meth:`Call.find_person`, :meth:`Call.find_card`
8. the session is bound to it: :meth:`Call.require_bound_to_account`, ``…_to_person``
9. no clear-text PII: :meth:`Call.reject_clear_pii`
10. schema: :meth:`Call.parse`
11. decryption: :meth:`Call.decrypt` (work done ahead by :func:`decrypt_ahead`)
12. the plaintext's schema: :meth:`Call.parse_plaintext`
13. state and 14. business rules: the route's own handler

:func:`run` takes a request through 2-5 and hands a :class:`Call` to the route's handler, which
takes it through 6-14 with the :class:`Call` helpers. This module stands in that order. A
refusal at any step is a :class:`~kit.sim.problems.Problem`, answered at one place, the end of
:func:`run`.

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
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import Response

from kit import register
from kit._pii import ENCRYPTED_PREFIX, pii_parameter
from kit.sim import versions
from kit.sim.asgi import decode_json, encode_json, first
from kit.sim.call import MAX_JWE, Call, RouteReply
from kit.sim.clock import format_time
from kit.sim.crypto import CryptoError
from kit.sim.cryptoworker import WorkerUnavailable
from kit.sim.headers import AUTHORIZATION, SESSION_EXPIRES_AT, SESSION_ID, TOKEN_SCHEME
from kit.sim.idempotency import Idempotency, idempotency_record, release, store
from kit.sim.personality import DEFAULT, SessionLifetimes
from kit.sim.problems import Problem, uses
from kit.sim.runtime import Sim
from kit.sim.state import Fault, IdempotencyRecord, Session, State
from kit.sim.table import operation_of

__all__ = ["Call", "RouteReply", "authenticate", "load_session", "read_body", "read_json", "run"]

MAX_BODY = int(register.value("A22")["max_body_bytes"])
_SCHEME = TOKEN_SCHEME.lower()
_AUTHORIZATION, _SESSION_ID = (name.lower().encode("latin-1") for name in (AUTHORIZATION, SESSION_ID))


# --- the entry --------------------------------------------------------------------------------


async def run(
    request: Request,
    handler: Callable[[Call], RouteReply | Awaitable[RouteReply]],
    *,
    idempotency: Idempotency = "optional",
    check_session: bool = True,
) -> Response:
    """Take a partner request through the order of checks; ``handler`` does steps 6-14.

    ``check_session=False`` leaves a ``svc-session-id`` sent along unread (step 5). The
    ``encrypted_*`` members the operation's body holds (the operations table's, which its
    body model declares too) are decrypted ahead (:func:`decrypt_ahead`).
    """
    sim: Sim = request.app.state.sim
    call: Call | None = None
    record: IdempotencyRecord | None = None
    try:
        partner = authenticate(sim.state, request)  # 2
        body = await read_json(request) if request.method in ("POST", "PUT", "PATCH") else None  # 3
        call = Call(sim, request, partner, body)
        operation = operation_of(request.scope)
        if operation is not None and operation.encrypted:
            await decrypt_ahead(call, operation.encrypted)  # step 11's work; its results wait
        kept = idempotency_record(call, idempotency)  # 4
        if isinstance(kept, Response):
            return kept  # a replay
        record = kept
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
    except Problem as problem:  # the one exit of a refusal, whichever step refused
        if call is not None:
            release(call, record)
        uses(request, *problem.assumptions)
        refusal = problem.response()
        if call is not None:
            _session_header(call, refusal)
        return refusal
    except BaseException:
        if call is not None:
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
# The route table (kit/sim/table.py) chose the endpoint that calls run; a path it does not know
# is FastAPI's 404 not-found, a method it does not take a 405.


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
    record = state.partner_tokens.peek(state.sealer.digest(token))  # read only: revoking looks it up again
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
        return decode_json(text)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise Problem(
            400, "malformed-json", "The request body is not valid JSON.", assumptions=("A22",)
        ) from None


async def read_body(request: Request, limit: int = MAX_BODY, entry: str = "A22") -> bytes:
    """The raw body, refused with 413 past ``limit`` (the register ``entry`` that sets it: A22)
    without reading it all: at once when its Content-Length says so."""
    length = first(request.scope, b"content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise _too_large(limit, entry)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit, entry)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(limit: int, entry: str) -> Problem:
    # Built only when raised: building it for every request showed in the profile.
    return Problem(
        413, "payload-too-large", f"Request bodies may be at most {limit} bytes.", assumptions=(entry,)
    )


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
        if name.startswith(ENCRYPTED_PREFIX):
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


# --- 4. idempotency (kit/sim/idempotency.py), then injected faults -------------------------------


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
    s = state.sessions.get(state.sealer.digest(token))
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
    (A11, the rule of ``kit._pii``), named by its parameter's name, never its value."""
    name = pii_parameter(items)
    if name is not None:
        raise Problem(
            422,
            "pii-must-be-encrypted",
            "Personal data is accepted only encrypted; send it inside an encrypted_* field.",
            errors=[{"field": f"{where}:{name}", "message": "personal data must be encrypted"}],
            assumptions=("A11",),
        )


def _json_response(reply: RouteReply) -> Response:
    headers = reply.headers or None  # none: Starlette writes its own two without reading a mapping
    if reply.body is None:
        return Response(status_code=reply.status, headers=headers)
    content = reply.body if isinstance(reply.body, bytes) else encode_json(reply.body)
    return Response(content, reply.status, headers, media_type="application/json")


def _session_header(call: Call, response: Response) -> None:
    s = call.session_in_force
    if s is not None and not s.ended and not s.superseded:
        response.headers[SESSION_EXPIRES_AT] = format_time(
            session_expires_at(s, call.sim.personality.sessions)
        )
