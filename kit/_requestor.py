"""The one owner of a client's connection and session state; every resource calls through it.

A :class:`Requestor` holds what one device's calls share: the configuration (its profile and
hooks, :mod:`kit._hooks`), the transport, the partner auth (:attr:`Requestor.auth`, whose one
token exchange is :meth:`Requestor.exchange_token`), the call history, the contract drift
found, the device key pair, the server's encryption keys, the current session and — for a
client made with ``record=True`` — the wire log (:class:`~kit._wire.Recorder`, :attr:`Requestor.wire`).
:class:`~kit.Client`, ``api.sessions`` and every ``api.<resource>`` receive the same requestor
(never the client); only the requestor changes its state, through the methods below.

Example::

    >>> requestor = Requestor(config)                                      # doctest: +SKIP
    >>> requestor.send("webhook_keys", session=None).status                # doctest: +SKIP
    200

Each call is one :class:`~kit._outgoing.Outgoing` (its operation, path template and parameters,
body before encoding), built here and sent by the transport.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import httpx

from kit._auth import PartnerAuth, TokenGrant, credentials, token_path
from kit._config import Config
from kit._drift import DriftLog
from kit._headers import CONTROL_TOKEN
from kit._history import History
from kit._http import http_client
from kit._operations import BY_KEY
from kit._outgoing import NONE, OPERATIONS, RETRY_STATUSES, Operation, Outgoing
from kit._sensitive import Sensitive
from kit._spoken import Spelling
from kit._transport import Reply, Transport
from kit.crypto import Device, ServerKeys
from kit.errors import CryptoError, KitError
from kit.models import SessionInfo, parse_time

if TYPE_CHECKING:
    from kit._wire import Recorder

__all__ = ["INIT_DATA_PATH", "CurrentSession", "Requestor", "SessionArg"]

INIT_DATA_PATH = OPERATIONS["init_data"].template
CONTROL_TOKEN_HEADER = CONTROL_TOKEN


class CurrentSession(NamedTuple):
    """The session the client sends: its token (masked) and what ``api.session`` shows."""

    token: Sensitive[str]
    info: SessionInfo

    def __repr__(self) -> str:
        return f"CurrentSession(session_type={self.info.session_type!r}, token={self.token!r})"


#: Which session a call presents: the current one, a given one, or none.
SessionArg = Literal["current"] | CurrentSession | None


def _known_secrets(config: Config) -> list[tuple[str, str]]:
    """What the wire recorder redacts from the first call: the client's secrets and the
    profile's fixture values (test personas' PII, KYC answers)."""
    known = [("client-secret", config.client_secret.reveal())]
    for kind, secret in (("control-token", config.control_token), ("partner-token", config.access_token)):
        if secret is not None:
            known.append((kind, secret.reveal()))
    try:
        published = config.profile.fixtures()
    except KitError:  # an unusable fixtures file is reported where personas are asked for
        published = None
    known += [("fixture-value", v) for v in (published.values() if published is not None else [])]
    return known


class Requestor:
    """Sends a device's calls and keeps its state (see the module docstring).

    Raises nothing on construction beyond the transport's ``TransportError`` (no base URL).
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self.history = History()
        self.drift = DriftLog()
        #: The wire log (``record=True``), else ``None``.
        self.wire: Recorder | None = None
        if config.record:  # the wire log and its redaction are imported only by a client that records
            from kit._wire import Recorder

            self.wire = Recorder(_known_secrets(config), hooks=config.hooks.wire, dialect=config.dialect)
        self.transport = Transport(config, history=self.history, drift=self.drift, recorder=self.wire)
        self.auth = PartnerAuth(
            self._fetch_grant,
            client_id=config.client_id,
            margin=config.token_refresh_margin,
            observer=self.transport.observe_auth,
            spelling=self.transport.spelling,
        )
        if config.access_token is not None:
            self.auth.preset(config.access_token)
        self.transport.auth = self.auth
        self.device = Device(**dict(config.device or {}))
        if self.wire is not None:  # its key is made anew each run: its id is named, not shown
            self.wire.redactor.name_key(self.device.kid, "device-key-id")
        self._server_keys = ServerKeys()
        self._current: CurrentSession | None = None
        self._reset_listeners: list[Callable[[], None]] = []
        self._clock_http: httpx.Client | None = None
        self._clock_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<Requestor profile={self.config.profile.name!r} current={self._current!r}>"

    @property
    def spelling(self) -> Spelling:
        """How this client spells the wire (:class:`kit._spoken.Spelling`, its transport's)."""
        return self.transport.spelling

    def close(self) -> None:
        """Close this device's connections."""
        if self._clock_http is not None:
            self._clock_http.close()
        self.transport.close()

    # -- the current session ------------------------------------------------------------------

    @property
    def current(self) -> CurrentSession | None:
        """The session sent with calls (``None`` before one is created or after it ended)."""
        return self._current

    def use_session(self, session: CurrentSession | None) -> None:
        """Make ``session`` the current one (``None``: forget it)."""
        self._current = session

    def _observe_expiry(self, sent: CurrentSession, expires_at: datetime | None) -> None:
        """Track the new expiry (A28 ``session_expires_at``) of the session that was sent (sliding)."""
        if expires_at is not None and self._current is sent:
            self._current = sent._replace(info=replace(sent.info, expires_at=expires_at))

    # -- calls --------------------------------------------------------------------------------

    def control_headers(self) -> dict[str, str]:
        """The control-plane token header, when one is configured."""
        token = self.config.control_token
        return {CONTROL_TOKEN_HEADER: token.reveal()} if token is not None else {}

    def send(
        self,
        operation: str | Operation,
        params: Mapping[str, str] | None = None,
        *,
        json: Any = None,
        session: SessionArg = "current",
        partner: bool = True,
        idempotency_key: str | None = None,
        submitted: Mapping[str, str] | None = None,
        retry_statuses: frozenset[int] = RETRY_STATUSES,
    ) -> Reply:
        """Send ``operation`` (a key of :data:`~kit._outgoing.OPERATIONS`, or an
        :class:`~kit._outgoing.Operation`) with its path ``params``, presenting ``session``;
        ``partner=False`` for the control plane; ``retry_statuses``: the answers sent again
        after a wait (:class:`~kit._transport.Transport`).

        Raises:
            ApiError: (a subclass) for an error answer. TransportError: unreachable.
        """
        sent = self._current if session == "current" else session
        outgoing = Outgoing(
            OPERATIONS[operation] if isinstance(operation, str) else operation,
            params=params or NONE,
            json=json,
            headers={} if partner else self.control_headers(),
            partner=partner,
            session_token=sent.token.reveal() if sent is not None else None,
            session_type=sent.info.session_type if sent is not None else None,
            idempotency_key=idempotency_key,
            submitted=submitted,
            retry_statuses=retry_statuses,
        )
        reply = self.transport.send(outgoing)
        if sent is not None:
            self._observe_expiry(sent, parse_time(reply.headers.get(self.transport.names.session_expires_at)))
        return reply

    def unsent(
        self,
        operation: str,
        params: Mapping[str, str] | None = None,
        *,
        json: Any = None,
        session: SessionArg = None,
    ) -> httpx.Request:
        """The request of a partner ``operation`` (with its path ``params``, presenting
        ``session``) as :meth:`send` would send it, built and not sent
        (:meth:`~kit._transport.Transport.unsent`).

        Raises:
            KitError: ``operation`` is no operation of the partner API.
            ApiError: fetching the partner token was refused.
        """
        if operation not in OPERATIONS:
            raise KitError(f"no operation {operation!r}; the operations: {', '.join(OPERATIONS)}")
        sent = self._current if session == "current" else session
        outgoing = Outgoing(
            OPERATIONS[operation],
            params=params or NONE,
            json=json,
            session_token=sent.token.reveal() if sent is not None else None,
        )
        return self.transport.unsent(outgoing)

    def call(self, method: str, path: str, **options: Any) -> Reply:
        """:meth:`send` of a call named by its method and path alone (the control plane, a
        request of one's own); ``options`` as for :meth:`send`."""
        return self.send(Operation.raw(method, path), **options)

    def control_call(
        self, method: str, path: str, *, content: bytes | None, content_type: str, timeout: float
    ) -> Reply:
        """One call of the control plane with a raw body (a snapshot of the simulator's state):
        sent, retried and recorded in the history and the wire log like any call.

        Raises:
            ApiError: (a subclass) for an error answer. TransportError: unreachable.
        """
        outgoing = Outgoing(
            Operation.raw(method, path, "control"),
            headers={**self.control_headers(), "content-type": content_type},
            partner=False,
            content=content,
            timeout=timeout,
        )
        return self.transport.send(outgoing)

    # -- the partner token ---------------------------------------------------------------------

    def exchange_token(self, path: str) -> Reply:
        """The client-credentials exchange (:mod:`kit._auth`) at ``path``: ``POST``, form
        ``grant_type=client_credentials``, HTTP Basic. The one exchange of the client: the auth
        flow's fetch, ``api.token()`` and ``api.legacy_token()`` all make it here, retried and
        recorded in the history like any call.

        Raises:
            OAuthError / InvalidClient: the token endpoint refused; another ApiError or
                TransportError as for any call.
        """
        headers, form = credentials(self.config.client_id, self.config.client_secret, self.spelling)
        token = OPERATIONS["access_token"]
        operation = Operation(token.key, token.method, path)  # 1.2.0's path, or 1.1.0's own
        outgoing = Outgoing(operation, data=form, headers=headers, partner=False)
        return self.transport.send(outgoing)

    def revoke_token(self, path: str, token: Sensitive[str]) -> Reply:
        """``DELETE`` ``token`` at ``path`` (the deprecated legacy endpoint), recorded.

        Raises:
            ApiError: the server refused (e.g. EndpointDeprecated in strict mode).
        """
        header, scheme = self.spelling.bearer
        headers = {header: f"{scheme} {token.reveal()}"}
        revoke = BY_KEY["legacy_revoke"]
        operation = Operation(revoke.key, revoke.methods[0], path)
        return self.transport.send(Outgoing(operation, headers=headers, partner=False))

    def _fetch_grant(self) -> TokenGrant | None:
        # The token endpoint of the pinned version (under 1.1.0 the legacy one, its own: A27).
        return TokenGrant.from_body(self.exchange_token(token_path(self.config.api_version)).body)

    # -- encryption to the server -------------------------------------------------------------

    def fetch_init_data(self) -> dict[str, Any]:
        """``GET`` session initialization data; its server keys are kept (each imported once).

        Raises:
            ApiError: e.g. InvalidPartnerToken when credentials are wrong.
        """
        body = self.send("init_data", session=None).body or {}
        self._server_keys.update(body.get("jwks") or {})
        return dict(body)

    def encrypt(self, plaintext: Any, *, kids: list[str] | None = None) -> str:
        """Encrypt to the server with the configured algorithm (init data fetched if no keys
        are known yet); ``kids`` limits the keys to those of one init data.

        Raises:
            CryptoError: no server key for the algorithm.
        """
        if not self._server_keys.kids:
            self.fetch_init_data()
        plaintext = self.spelling.seal(plaintext)  # its names are the dialect's too (A68)
        return self._server_keys.encrypt(plaintext, alg=self.config.jwe_alg, kids=kids)

    def sealed(self, key: str, plaintext: Any, *, kids: list[str] | None = None) -> dict[str, str]:
        """Operation ``key``'s encrypted body member (the operations table's) holding
        ``plaintext``, encrypted to the server (:meth:`encrypt`).

            >>> requestor.sealed("create_person", pii)   # doctest: +SKIP
            {'encrypted_pii': 'eyJhbGciOiJSU0EtT0FFUC0yNTYi...'}
        """
        member = BY_KEY[key].encrypted_member
        return {member: self.encrypt(plaintext, kids=kids)}

    def opened(self, key: str, body: Mapping[str, Any], *, label: str, required: bool = True) -> Any:
        """The plaintext of operation ``key``'s encrypted answer member in ``body`` (the
        operations table's), decrypted with the device key, its names the kit's (A68); ``None``
        when the answer holds none and it is not ``required``.

        Raises:
            CryptoError: the member is missing (when ``required``) or does not decrypt.
        """
        member = BY_KEY[key].encrypted_answer_member
        token = body.get(member)
        if token is None and not required:
            return None
        if not isinstance(token, str):
            raise CryptoError(f"the answer holds no {member}")
        return self.spelling.open(self.device.decrypt(token, label=label).reveal())

    # -- the simulator's reset ----------------------------------------------------------------

    def on_reset(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after :meth:`reset` (e.g. the webhook receiver subscribes again)."""
        self._reset_listeners.append(listener)

    def reset(self) -> None:
        """The simulator was reset: forget the session and the server keys, tell the listeners."""
        self._current = None
        self._server_keys = ServerKeys()
        for listener in list(self._reset_listeners):
            listener()

    def server_clock(self) -> datetime:
        """The time webhook signatures are judged against, as this client's profile says
        (:meth:`kit._profiles.Profile.server_clock`): the simulator's clock, or the machine's."""
        return self.config.profile.server_clock(self)

    def control_clock(self) -> datetime:
        """The simulator's clock (``GET /_sim/clock``, which the control plane moves), on a
        connection of its own (called from the receiver thread; not part of the history)."""
        with self._clock_lock:  # deliveries may arrive on several receiver threads at once
            if self._clock_http is None:
                assert self.config.base_url is not None
                base_url, transport, tls = self.config.base_url, self.config.transport, self.config.tls
                self._clock_http = http_client(base_url, transport=transport, tls=tls, timeout=5.0)
        answer = self._clock_http.get("/_sim/clock", headers=self.control_headers())
        now = parse_time(answer.json()["now"])
        assert now is not None
        return now
