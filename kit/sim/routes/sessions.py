"""User/device sessions: init data, creation and promotion, ending (A04-A09, A32, A34)."""

from __future__ import annotations

import secrets
from datetime import timedelta

from fastapi import APIRouter, Request, Response

from kit import register
from kit.sim.clock import format_time
from kit.sim.crypto import CONTENT_ENCRYPTION, DeviceKeyError, device_key, encrypt_to_device
from kit.sim.fastpath import PlainRoute
from kit.sim.headers import SESSION_ID
from kit.sim.models import InitData, SessionCreate, SessionCreated, SessionPlaintext
from kit.sim.openapi import declare
from kit.sim.pipeline import Call, Reply, load_session, run, session_expires_at
from kit.sim.problems import Problem, validation_problem
from kit.sim.state import Nonce, Session

router = APIRouter(tags=["sessions"], route_class=PlainRoute)
_INIT = register.value("A04")
_SESSION = register.value("A05")
_LIFETIME = register.value("A06")
_RATE = register.value("A32")
RATE_WINDOW = timedelta(seconds=int(_RATE["window_seconds"]))
MAX_PER_WINDOW = int(_RATE["max_sessions_per_device_per_minute"])
SESSION_TYPES: list[str] = _SESSION["session_types"]
STRATEGIES: list[str] = _LIFETIME["strategies"]
PLATFORMS: list[str] = _SESSION["platforms"]
_NEXT_TYPE = {"anonymous": "account", "account": "person"}


@declare(
    router,
    "GET",
    "/sessions/user_session_initialization_data",
    InitData,
    summary="Key information for the client SDK (call before POST /sessions)",
)
async def init_data(request: Request) -> Response:
    def handle(call: Call) -> Reply:
        call.uses("A04")
        nonce = secrets.token_urlsafe(24)
        expires = call.state.clock.after(int(_INIT["nonce_lifetime_seconds"]))
        call.state.nonces[nonce] = Nonce(call.partner, expires)  # beyond A50's bound: the oldest goes
        return Reply(
            200,
            {
                "jwks": call.state.keys.encryption_jwks(),
                "enc": [CONTENT_ENCRYPTION],
                "nonce": nonce,
                "nonce_expires_at": format_time(expires),
            },
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
        "instead (POST /sessions with svc-session-id).",
        assumptions=("A08",),
    )


def _create(call: Call) -> Reply:
    state = call.state
    request = call.body_as(
        SessionCreate,
        {
            "session_type": ("unknown-session-type", SESSION_TYPES),
            "expiration_strategy": ("unknown-expiration-strategy", STRATEGIES),
        },
        uses=("A05", "A06"),
    )
    data = call.decrypt("encrypted_data", request.encrypted_data)
    nonce = state.nonces.get(data["nonce"]) if isinstance(data.get("nonce"), str) else None
    if nonce is None or nonce.partner != call.partner or nonce.used or state.now >= nonce.expires_at:
        raise Problem(
            400,
            "nonce-invalid",
            "The nonce is unknown, used or expired; fetch new init data and encrypt again.",
            assumptions=("A04",),
        )
    # Used up once the JWE decrypts, whatever happens next (A04); forgotten at once (A50).
    nonce.used = True
    del state.nonces[data["nonce"]]
    call.uses("A09")  # the device: its id and its key's thumbprint
    try:
        key, thumbprint = device_key(data.get("device_jwks"))
    except DeviceKeyError:
        raise Problem(
            400,
            "invalid-device-key",
            "device_jwks must hold exactly one public EC P-256 key (no 'd').",
            assumptions=("A09",),
        ) from None
    plain = call.parse_plaintext(
        "encrypted_data",
        SessionPlaintext,
        data,
        {"device.platform": ("unknown-platform", PLATFORMS)},
        uses=("A05",),
    )
    kind = request.session_type
    wanted_id = {"account": plain.account_id, "person": plain.person_id}.get(kind)
    if kind != "anonymous" and not wanted_id:
        field = "account_id" if kind == "account" else "person_id"
        raise validation_problem(
            [{"field": "/encrypted_data", "message": f"/{field}: required for a {kind} session"}]
        )
    device = (plain.device.device_id, thumbprint)

    # 13. state: rate, then the transition or the device binding.
    window = state.session_starts.setdefault((call.partner, device[0]), [])
    recent = [t for t in window if state.now - t < RATE_WINDOW]
    if len(recent) >= MAX_PER_WINDOW:
        raise Problem(
            429,
            "rate-limited",
            "Too many sessions created for this device; wait and retry.",
            headers={"Retry-After": str(int(RATE_WINDOW.total_seconds()))},
            assumptions=("A32",),
        )
    current = call.session
    account_id = person_id = None
    direct = False
    if current is not None:
        call.uses("A07")
        if _NEXT_TYPE.get(current.session_type) != kind:
            raise _transition_refused(
                f"The current session is {current.session_type}; it can only be promoted to "
                f"{_NEXT_TYPE.get(current.session_type, 'nothing further')}, one step at a time."
            )
        if current.device != device:
            raise _transition_refused("A promotion must come from the same device and device key.")
        if kind == "account":
            account = state.account(call.partner, wanted_id or "")
            if account is None or account.created_by != device:
                raise _transition_refused("The account must have been created by this device's session.")
            account_id = account.account_id
        else:
            person = state.person(call.partner, wanted_id or "")
            if person is None or person.account_id != current.account_id:
                raise _transition_refused("The person must belong to the session's account.")
            if person.status != "established":
                raise _transition_refused("The person's KYC must be established before promotion.")
            person_id, account_id = person.person_id, person.account_id
    elif kind != "anonymous":
        call.uses("A08")
        direct = True
        holder = (
            state.account(call.partner, wanted_id or "")
            if kind == "account"
            else state.person(call.partner, wanted_id or "")
        )
        if holder is None or device not in holder.bound_devices:
            raise _not_recognized()
        if kind == "account":
            account_id = wanted_id
        else:
            person_id, account_id = wanted_id, holder.account_id  # type: ignore[union-attr]

    # All checks passed: change state.
    token = "ses_" + secrets.token_urlsafe(32)
    session = Session(
        token=token,
        partner=call.partner,
        session_type=kind,
        strategy=request.expiration_strategy,
        device=device,
        device_key=key,
        created_at=state.now,
        chain_start=current.chain_start if current else state.now,
        last_used=state.now,
        account_id=account_id,
        person_id=person_id,
    )
    state.sessions[token] = session
    window[:] = [*recent, state.now]
    if current is not None:
        current.superseded = True
        if kind == "person" and person_id:
            person = state.persons[person_id]
            person.bound_devices.add(device)
            person.device_keys[device] = key
    call.session_in_force = session
    answer = {
        "session_type": kind,
        "expiration_strategy": session.strategy,
        "expires_at": format_time(session_expires_at(session)),
        "device_id": device[0],
    }
    if direct:
        # Proof of possession: only the holder of the registered device key can read it.
        answer["encrypted_session_token"] = encrypt_to_device(key, {"session_token": token})
    else:
        answer["session_token"] = token
    return Reply(201, answer)


@declare(
    router,
    "POST",
    "/sessions",
    SessionCreated,
    status=201,
    takes=SessionCreate,
    errors=(403, 429),
    response_model_exclude_none=True,
    summary="Create a session (anonymous), promote one, or open one for a bound device",
)
async def create_session(request: Request) -> Response:
    return await run(request, _create)


@declare(router, "DELETE", "/sessions", status=204, summary="End the session named in svc-session-id")
async def end_session(request: Request) -> Response:
    def handle(call: Call) -> Reply:
        call.uses("A34")
        token = call.request.headers.get(SESSION_ID)
        if token is None:
            raise Problem(401, "session-required", f"Name the session to end in {SESSION_ID}.")
        session = call.state.sessions.get(token)
        if session is None or session.partner != call.partner or session.ended:
            # Reuse the one definition of "unknown or ended" (an expired one may still end).
            load_session(call.state, call.partner, token)
        assert session is not None
        session.ended = True
        return Reply(204)

    return await run(request, handle, check_session=False)
