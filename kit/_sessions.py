"""Device sessions: create, promote, open directly, end (the wire contract's session creation
sequence).

Every session request fetches fresh init data (the nonce is single use), encrypts the nonce,
the device's metadata and public key (and the account or person id) to a server key, and
posts it. The requestor keeps the current session and sends it as ``svc-session-id`` on later
calls (spec rule 5); its token is :class:`~kit.Sensitive` and never shown.

Example::

    api.sessions.create("anonymous", expiration="sliding")
    account = api.accounts.create()
    api.sessions.promote("account", account_id=account.account_id)
    api.session          # SessionInfo(session_type='account', …)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from kit._outgoing import OPERATIONS, RETRY_STATUSES
from kit._requestor import INIT_DATA_PATH, CurrentSession, Requestor
from kit._sensitive import Sensitive
from kit.errors import CryptoError, SessionRequired
from kit.models import InitData, SessionInfo, parse_time

if TYPE_CHECKING:
    import httpx

__all__ = ["INIT_DATA_PATH", "SESSIONS_PATH", "CurrentSession", "Sessions"]

SESSIONS_PATH = OPERATIONS["create_session"].template
SESSION_TYPES = ("anonymous", "account", "person")


#: What ``POST /sessions`` sends again after a wait: not a 429. A rate-limited request has used
#: up its nonce (A04, A43), so the same encrypted data sent again could only be refused as
#: nonce-invalid, hiding the limit; the caller gets the 429 (``kit.errors.RateLimited``, with
#: ``retry_after``) and a new call fetches a fresh nonce.
NONCE_SPENT_RETRIES = RETRY_STATUSES - {429}


class Sessions:
    """``api.sessions``: the device-level session operations."""

    def __init__(self, requestor: Requestor) -> None:
        self._requestor = requestor

    def __repr__(self) -> str:
        current = self._requestor.current
        return f"<Sessions current={current.info if current else None!r}>"

    # -- init data --------------------------------------------------------------------------

    def init_data(self) -> InitData:
        """Fetch session initialization data (keys, ``enc``, a fresh single-use nonce).

        The server keys are imported once and kept by kid. Example::

            >>> api.sessions.init_data().algorithms          # doctest: +SKIP
            ('RSA-OAEP-256', 'ECDH-ES+A256KW')

        Raises:
            ApiError: e.g. InvalidPartnerToken when credentials are wrong.
        """
        body = self._requestor.fetch_init_data()
        jwks = body.get("jwks") or {}
        keys = [k for k in jwks.get("keys") or [] if isinstance(k, dict)]
        return InitData(
            kids=tuple(str(k.get("kid")) for k in keys),
            algorithms=tuple(str(k.get("alg")) for k in keys),
            enc=tuple(body.get("enc") or ()),
            nonce_expires_at=parse_time(body.get("nonce_expires_at")),
            nonce=Sensitive(str(body.get("nonce", "")), label="nonce"),
            keys=tuple(_describe(k) for k in keys),
        )

    # -- session requests -------------------------------------------------------------------

    def _encrypted(self, account_id: str | None, person_id: str | None) -> dict[str, str]:
        """A session request's encrypted member (``encrypted_data``): fresh init data's nonce,
        the device's metadata and public key (and the account or person id), encrypted to a
        server key."""
        init = self.init_data()
        device = self._requestor.device
        plaintext: dict[str, Any] = {
            "nonce": init.nonce.reveal(),
            "device": device.metadata(),
            "device_jwks": device.jwks(),
        }
        if account_id is not None:
            plaintext["account_id"] = account_id
        if person_id is not None:
            plaintext["person_id"] = person_id
        return self._requestor.sealed("create_session", plaintext, kids=list(init.kids))

    def _request(
        self,
        session_type: str,
        expiration: str,
        account_id: str | None,
        person_id: str | None,
        idempotency_key: str | None,
        promote_from: CurrentSession | None = None,
    ) -> SessionInfo:
        """``POST /sessions`` for ``session_type`` (presenting ``promote_from`` when promoting)."""
        device = self._requestor.device
        encrypted = self._encrypted(account_id, person_id)
        reply = self._requestor.send(
            "create_session",
            json={"session_type": session_type, "expiration_strategy": expiration, **encrypted},
            session=promote_from,
            idempotency_key=idempotency_key,
            submitted={
                "unknown-session-type": session_type,
                "unknown-expiration-strategy": expiration,
            },
            retry_statuses=NONCE_SPENT_RETRIES,
        )
        body = reply.body or {}
        # A direct session proves possession of the device key (the wire contract).
        value = self._requestor.opened("create_session", body, label="session", required=False)
        if value is not None:
            if not isinstance(value, dict) or "session_token" not in value:
                raise CryptoError("the encrypted session token holds no session_token")
            token = Sensitive(str(value["session_token"]), label="session_token")
        else:
            token = Sensitive(str(body.get("session_token", "")), label="session_token")
        info = SessionInfo(
            session_type=str(body.get("session_type", session_type)),
            expiration_strategy=str(body.get("expiration_strategy", expiration)),
            expires_at=parse_time(reply.headers.get(self._requestor.transport.names.session_expires_at))
            or parse_time(body.get("expires_at")),
            device_id=str(body.get("device_id", device.device_id)),
            account_id=account_id or (promote_from.info.account_id if promote_from else None),
            person_id=person_id,
        )
        self._requestor.use_session(CurrentSession(token, info))
        return info

    def create(
        self,
        session_type: str = "anonymous",
        *,
        expiration: str = "sliding",
        account_id: str | None = None,
        person_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> SessionInfo:
        """Create a new session without presenting the current one (usually ``anonymous``).

        Example::

            >>> api.sessions.create("anonymous", expiration="sliding").session_type  # doctest: +SKIP
            'anonymous'

        Raises:
            UnknownSessionType, UnknownExpirationStrategy: values outside the lists.
            NonceInvalid, InvalidEncryptedData, DeviceNotRecognized: see their hints.
        """
        return self._request(session_type, expiration, account_id, person_id, idempotency_key)

    def build_request(self, session_type: str = "anonymous", *, expiration: str = "sliding") -> httpx.Request:
        """A ``POST /sessions`` request built as :meth:`create` builds it — fresh init data, the
        device's details encrypted to a server key, the partner token, this server's names — and
        not sent: for a request sent by hand (``api.config.http_client().send(request)``), as
        notebook 02 sends one twice to see its nonce refused the second time. It carries no
        idempotency key (with one, the server would replay its first answer) and is not recorded.

        Example::

            >>> request = api.sessions.build_request("anonymous")        # doctest: +SKIP
            >>> with api.config.http_client() as http:                   # doctest: +SKIP
            ...     http.send(request).status_code, http.send(request).status_code
            (201, 400)

        Raises:
            ApiError: the init data or the partner token was refused.
        """
        encrypted = self._encrypted(None, None)
        body = {"session_type": session_type, "expiration_strategy": expiration, **encrypted}
        return self._requestor.unsent("create_session", json=body)

    def promote(
        self,
        session_type: str,
        *,
        account_id: str | None = None,
        person_id: str | None = None,
        expiration: str | None = None,
        idempotency_key: str | None = None,
    ) -> SessionInfo:
        """Promote the current session one step (anonymous → account → person).

        The new session replaces the current one; the old one is superseded by the server.

        Example::

            >>> api.sessions.promote("account", account_id="acc_…")  # doctest: +SKIP

        Raises:
            SessionRequired: there is no current session to promote (raised locally).
            InvalidSessionTransition: a skipped step, another device's account, KYC not done.
        """
        current = self._requestor.current
        if current is None:
            raise SessionRequired(401, "session-required", "there is no current session to promote")
        expiration = expiration or current.info.expiration_strategy
        return self._request(session_type, expiration, account_id, person_id, idempotency_key, current)

    def open(
        self,
        session_type: str,
        *,
        account_id: str | None = None,
        person_id: str | None = None,
        expiration: str = "sliding",
        idempotency_key: str | None = None,
    ) -> SessionInfo:
        """Open an account or person session directly, for a device already bound to it.

        The 201 carries ``encrypted_session_token``, decrypted with the device key.

        Example::

            >>> api.sessions.open("account", account_id="acc_…")  # doctest: +SKIP

        Raises:
            DeviceNotRecognized: this device is not bound to that account or person.
            CryptoError: the encrypted token is not for this device's key.
        """
        return self._request(session_type, expiration, account_id, person_id, idempotency_key)

    # -- a kept session ---------------------------------------------------------------------

    @property
    def current(self) -> CurrentSession | None:
        """The session the client sends now, as a handle (its token masked, never shown;
        ``None``: none). Keep one to present it again later with :meth:`presenting`."""
        return self._requestor.current

    @contextmanager
    def presenting(self, session: CurrentSession | None) -> Iterator[None]:
        """Send ``session`` (a handle kept from :attr:`current`) as ``svc-session-id`` inside
        the block, then the current session again — to see a superseded token refused.

        Example::

            >>> kept = api.sessions.current                      # doctest: +SKIP
            >>> api.sessions.promote("person", person_id=...)    # doctest: +SKIP
            >>> with api.sessions.presenting(kept):              # doctest: +SKIP
            ...     api.kyc.questions(person_id)                 # 401 session-superseded (A07)
        """
        before = self._requestor.current
        self._requestor.use_session(session)
        try:
            yield
        finally:
            self._requestor.use_session(before)

    def end(self) -> None:
        """End the current session (``DELETE /sessions``); the client forgets it.

        Raises:
            ApiError: e.g. InvalidSession for a session the server does not know.
        """
        current = self._requestor.current
        if current is None:
            return
        try:
            self._requestor.send("end_session", session=current)
        finally:
            self._requestor.use_session(None)


def _describe(jwk: dict[str, Any]) -> dict[str, Any]:
    """A public JWK's description without its numbers (RSA size from the modulus length)."""
    size: int | None = None
    if jwk.get("kty") == "RSA" and isinstance(jwk.get("n"), str):
        size = len(jwk["n"].rstrip("=")) * 6 // 8 * 8  # base64url characters → bits
    return {
        "kid": jwk.get("kid"),
        "kty": jwk.get("kty"),
        "crv": jwk.get("crv"),
        "size": size,
        "use": jwk.get("use"),
        "alg": jwk.get("alg"),
    }
