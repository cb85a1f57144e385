"""User/device sessions: init data, creation and promotion, ending (A04-A09, A32, A34)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any, NamedTuple

from starlette.requests import Request
from starlette.responses import Response

from kit import register
from kit._operations import request_line
from kit.sim.asgi import encode_json
from kit.sim.call import Call, RouteReply
from kit.sim.clock import format_time
from kit.sim.crypto import CONTENT_ENCRYPTION, DeviceId, DeviceKeyError, ECKey, device_key
from kit.sim.headers import SESSION_ID
from kit.sim.models import InitData, SessionCreate, SessionCreated, SessionPlaintext
from kit.sim.openapi import declare
from kit.sim.pipeline import load_session, run, session_expires_at
from kit.sim.problems import Problem
from kit.sim.state import Nonce, Session
from kit.sim.table import Routes

router = Routes(tags=["sessions"])
_SESSION = register.value("A05")
_LIFETIME = register.value("A06")
SESSION_TYPES: list[str] = _SESSION["session_types"]
STRATEGIES: list[str] = _LIFETIME["strategies"]
PLATFORMS: list[str] = _SESSION["platforms"]
_NEXT_TYPE = {"anonymous": "account", "account": "person"}
#: Init data's body around the key set, the nonce and its expiry (``encode_json``'s encoding).
#: FIXES: "init data's body joined from its parts".
_JWKS_OPEN = b'{"jwks":'
_ENC_NONCE = b"," + encode_json({"enc": [CONTENT_ENCRYPTION]})[1:-1] + b',"nonce":"'
_NONCE_EXPIRES_AT = b'","nonce_expires_at":"'


@declare(
    router,
    "init_data",
    InitData,
    summary=f"Key information for the client SDK (call before {request_line('create_session')})",
)
async def init_data(request: Request) -> Response:
    def handle(call: Call) -> RouteReply:
        call.uses("A04")
        nonce = secrets.token_urlsafe(24)
        expires = call.state.clock.after(call.sim.personality.nonce_lifetime)
        call.state.nonces[nonce] = Nonce(call.partner, expires)  # beyond A50's bound: the oldest goes
        # {"jwks": …, "enc": …, "nonce": …, "nonce_expires_at": …}: the key set encoded once, the
        # nonce (URL-safe base64) and the time (ISO 8601) are JSON strings as they are
        return RouteReply(
            200,
            b"".join(
                (
                    _JWKS_OPEN,
                    call.state.keys.encryption_jwks_compact,
                    _ENC_NONCE,
                    nonce.encode(),
                    _NONCE_EXPIRES_AT,
                    format_time(expires).encode(),
                    b'"}',
                )
            ),
        )

    # The nonce is what matters here; a session sent along is not used, so not checked.
    return await run(request, handle, check_session=False)


def _transition_refused(detail: str) -> Problem:
    return Problem(409, "invalid-session-transition", detail, assumptions=("A07",))


def _not_recognized() -> Problem:
    return Problem(
        403,
        "device-not-recognized",
        "This device is not bound to that account or person. Promote a session of this device "
        f"instead ({request_line('create_session')} with svc-session-id).",
        assumptions=("A08",),
    )


class _Owner(NamedTuple):
    """Whose the new session is: its account and person (None: not yet), and whether it is
    opened directly for a device bound to them (then its token is encrypted to the device key)."""

    account_id: str | None = None
    person_id: str | None = None
    direct: bool = False


def _create(call: Call) -> RouteReply:
    """``POST /sessions``, step by step in the order of its checks (``kit.sim.pipeline``): the
    body (10), its decrypted plaintext (11) with the nonce, spent as soon as it decrypts, and
    the device key, the plaintext's schema (12), then the state (13): the device's rate, and the
    promotion of the current session or the device's binding. All passed: the session is issued."""
    request = call.body_as(
        SessionCreate,
        {
            "session_type": ("unknown-session-type", SESSION_TYPES),
            "expiration_strategy": ("unknown-expiration-strategy", STRATEGIES),
        },
        uses=("A05", "A06"),
    )
    kind = request.session_type
    data = call.decrypt(request.encrypted_data)
    _spend_nonce(call, data)
    key, thumbprint = _device_key(call, data)
    device_id, wanted_id = _plaintext(call, data, kind)
    device = (device_id, thumbprint)
    count_start = _within_rate(call, device_id)
    current = call.session
    if current is not None:
        owner = _promotion(call, current, kind, wanted_id or "", device)
    elif kind != "anonymous":
        owner = _bound_device(call, kind, wanted_id or "", device)
    else:
        owner = _Owner()
    count_start()
    return _issue(call, request, device, key, owner)


def _spend_nonce(call: Call, data: dict[str, Any]) -> None:
    """The plaintext's nonce: this partner's, unused and unexpired (A04). Used up once the JWE
    decrypts, whatever happens next; forgotten at once (A50)."""
    state = call.state
    nonce = state.nonces.get(data["nonce"]) if isinstance(data.get("nonce"), str) else None
    if nonce is None or nonce.partner != call.partner or nonce.used or state.now >= nonce.expires_at:
        raise Problem(
            400,
            "nonce-invalid",
            "The nonce is unknown, used or expired; fetch new init data and encrypt again.",
            assumptions=("A04",),
        )
    nonce.used = True
    del state.nonces[data["nonce"]]


def _device_key(call: Call, data: dict[str, Any]) -> tuple[ECKey, str]:
    """The device's public key and its thumbprint, which names the device with its id (A09)."""
    call.uses("A09")
    try:
        return device_key(data.get("device_jwks"))
    except DeviceKeyError:
        raise Problem(
            400,
            "invalid-device-key",
            "device_jwks must hold exactly one public EC P-256 key (no 'd').",
            assumptions=("A09",),
        ) from None


def _plaintext(call: Call, data: dict[str, Any], kind: str) -> tuple[str, str | None]:
    """The plaintext's schema: the device's id, and the account or person a session of ``kind``
    is for (required unless anonymous; None for an anonymous session)."""
    plain = call.parse_plaintext(
        SessionPlaintext,
        data,
        {"device.platform": ("unknown-platform", PLATFORMS)},
        uses=("A05",),
    )
    wanted_id = {"account": plain.account_id, "person": plain.person_id}.get(kind)
    if kind != "anonymous" and not wanted_id:
        field = "account_id" if kind == "account" else "person_id"
        raise call.plaintext_problem(f"/{field}: required for a {kind} session")
    return plain.device.device_id, wanted_id


def _within_rate(call: Call, device_id: str) -> Callable[[], None]:
    """The device's sessions in the last window stay under the limit (A32); gives what counts
    the new one in, once issued."""
    state = call.state
    window = state.session_starts.setdefault((call.partner, device_id), [])
    chosen = call.sim.personality  # A32's window and limit
    recent = [t for t in window if state.now - t < chosen.rate_window]
    if len(recent) >= chosen.max_sessions_per_window:
        raise Problem(
            429,
            "rate-limited",
            "Too many sessions created for this device; wait and retry.",
            headers={"Retry-After": str(int(chosen.rate_window.total_seconds()))},
            assumptions=("A32",),
        )

    def count_start() -> None:
        window[:] = [*recent, state.now]

    return count_start


def _promotion(call: Call, current: Session, kind: str, wanted_id: str, device: DeviceId) -> _Owner:
    """The current session promoted one step, from the same device, to an account its device
    created or to that account's established person (A07)."""
    call.uses("A07")
    if _NEXT_TYPE.get(current.session_type) != kind:
        raise _transition_refused(
            f"The current session is {current.session_type}; it can only be promoted to "
            f"{_NEXT_TYPE.get(current.session_type, 'nothing further')}, one step at a time."
        )
    if current.device != device:
        raise _transition_refused("A promotion must come from the same device and device key.")
    if kind == "account":
        account = call.state.account(call.partner, wanted_id)
        if account is None or account.created_by != device:
            raise _transition_refused("The account must have been created by this device's session.")
        return _Owner(account_id=account.account_id)
    person = call.state.person(call.partner, wanted_id)
    if person is None or person.account_id != current.account_id:
        raise _transition_refused("The person must belong to the session's account.")
    if person.status != "established":
        raise _transition_refused("The person's KYC must be established before promotion.")
    return _Owner(account_id=person.account_id, person_id=person.person_id)


def _bound_device(call: Call, kind: str, wanted_id: str, device: DeviceId) -> _Owner:
    """Without a current session, an account or person session only for a device bound to it (A08)."""
    call.uses("A08")
    holder = (
        call.state.account(call.partner, wanted_id)
        if kind == "account"
        else call.state.person(call.partner, wanted_id)
    )
    if holder is None or device not in holder.bound_devices:
        raise _not_recognized()
    if kind == "account":
        return _Owner(account_id=wanted_id, direct=True)
    return _Owner(account_id=holder.account_id, person_id=wanted_id, direct=True)


def _issue(call: Call, request: SessionCreate, device: DeviceId, key: ECKey, owner: _Owner) -> RouteReply:
    """All checks passed: the new session, in force for this answer; the current one superseded,
    and a person it was promoted to bound to the device. A session opened directly for a bound
    device has its token encrypted to the device key (proof of possession)."""
    state, current, kind = call.state, call.session, request.session_type
    token = "ses_" + secrets.token_urlsafe(32)
    session = Session(
        token=state.sealer.digest(token),
        partner=call.partner,
        session_type=kind,
        strategy=request.expiration_strategy,
        device=device,
        device_key=key,
        created_at=state.now,
        chain_start=current.chain_start if current else state.now,
        last_used=state.now,
        account_id=owner.account_id,
        person_id=owner.person_id,
    )
    state.sessions[session.token] = session
    if current is not None:
        current.superseded = True
        if kind == "person" and owner.person_id:
            person = state.persons[owner.person_id]
            person.bound_devices.add(device)
            person.device_keys[device] = key
    call.session_in_force = session
    answer = {
        "session_type": kind,
        "expiration_strategy": session.strategy,
        "expires_at": format_time(session_expires_at(session, call.sim.personality.sessions)),
        "device_id": device[0],
    }
    if owner.direct:
        answer.update(call.sealed_answer(key, {"session_token": token}))
    else:
        answer["session_token"] = token
    return RouteReply(201, answer, sealed=not owner.direct)


@declare(
    router,
    "create_session",
    SessionCreated,
    status=201,
    takes=SessionCreate,
    errors=(403, 429),
    response_model_exclude_none=True,
    summary="Create a session (anonymous), promote one, or open one for a bound device",
)
async def create_session(request: Request) -> Response:
    return await run(request, _create)


@declare(router, "end_session", status=204, summary="End the session named in svc-session-id")
async def end_session(request: Request) -> Response:
    def handle(call: Call) -> RouteReply:
        call.uses("A34")
        token = call.request.headers.get(SESSION_ID)
        if token is None:
            raise Problem(401, "session-required", f"Name the session to end in {SESSION_ID}.")
        session = call.state.sessions.get(call.state.sealer.digest(token))
        if session is None or session.partner != call.partner or session.ended:
            # Reuse the one definition of "unknown or ended" (an expired one may still end).
            load_session(call.state, call.partner, token)
        assert session is not None
        session.ended = True
        return RouteReply(204)

    return await run(request, handle, check_session=False)
