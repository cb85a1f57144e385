"""The client: ``kit.connect(profile=…)`` → :class:`Client`, one per device (DESIGN §4).

A client is one install of the partner app: its own device key pair, its own current session,
its own call history. Several clients in one process share the embedded simulator (two
customers for P2P are two ``connect()`` calls) and each fetches its own partner token.

Example::

    >>> import kit
    >>> api = kit.connect("sim")                                  # doctest: +SKIP
    >>> api.sessions.create("anonymous", expiration="sliding")    # doctest: +SKIP
    >>> account = api.accounts.create()                           # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import os
import threading
import warnings
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import httpx

from kit.auth import TOKEN_PATH
from kit.config import Config, resolve
from kit.crypto import Device, ServerKeys
from kit.errors import ConfigError, DeprecatedEndpoint, NotAvailable, TransportError
from kit.history import History
from kit.models import SessionInfo, TokenInfo, parse_time
from kit.resources import (
    P2P,
    Accounts,
    Cards,
    DocumentRequests,
    Events,
    Kyc,
    Persons,
    SimControl,
    Webhooks,
)
from kit.sensitive import Sensitive
from kit.sessions import CurrentSession, Sessions
from kit.transport import Reply, Transport, shared_ssl_context

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LEGACY_TOKEN_PATH", "Client", "connect"]

LEGACY_TOKEN_PATH = "/authorization/server_api/access_tokens"

SessionArg = Literal["current"] | CurrentSession | None


class Client:
    """A client for one device. Build it with :func:`kit.connect`.

    Attributes: ``sessions``, ``accounts``, ``persons``, ``kyc``, ``cards``, ``events``,
    ``p2p``, ``document_requests``, ``webhooks``, ``sim`` (sim profile), ``history``,
    ``session``, ``device``.
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self._history = History()
        self._transport = Transport(config, history=self._history)
        self.device = Device(**dict(config.device or {}))
        self._server_keys = ServerKeys()
        self._current: CurrentSession | None = None
        self._clock_http: httpx.Client | None = None
        self._clock_lock = threading.Lock()
        self.sessions = Sessions(self)
        self.accounts = Accounts(self)
        self.persons = Persons(self)
        self.kyc = Kyc(self)
        self.cards = Cards(self)
        self.events = Events(self)
        self.p2p = P2P(self)
        self.document_requests = DocumentRequests(self)
        self._webhooks = Webhooks(self)
        self._sim = SimControl(self) if config.profile == "sim" else None

    def __repr__(self) -> str:
        session = self._current.session_type if self._current else None
        return (
            f"<kit.Client profile={self.config.profile!r} client_id={self.config.client_id!r} "
            f"device={self.device.device_id!r} session={session!r}>"
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop this client's webhook receiver and close its connections (the shared
        embedded simulator keeps running for other clients)."""
        self._webhooks.close()
        if self._clock_http is not None:
            self._clock_http.close()
        self._transport.close()

    # -- views ------------------------------------------------------------------------------

    @property
    def session(self) -> SessionInfo | None:
        """The current session (type, expiry, device), or ``None``; never its token."""
        return self._current.info() if self._current else None

    @property
    def history(self) -> pd.DataFrame:
        """Every call so far: time, method, path, status, ms, session_type, code,
        request_id, replayed, retries, assumptions. Never headers, bodies or secrets."""
        return self._history.frame()

    @property
    def webhooks(self) -> Webhooks:
        """Webhook subscriptions; in the sim profile, first use starts and subscribes the
        loopback receiver (see :mod:`kit.resources.webhooks`)."""
        if self.config.profile == "sim":
            self._webhooks.listen()
        return self._webhooks

    @property
    def sim(self) -> SimControl:
        """The simulator's control plane (sim profile only).

        Raises:
            NotAvailable: in any other profile (it is also an ``AttributeError``).
        """
        if self._sim is None:
            raise NotAvailable(
                f"api.sim exists only in the sim profile (this client is {self.config.profile!r})"
            )
        return self._sim

    # -- partner token ----------------------------------------------------------------------

    def token(self, *, refresh: bool = False) -> TokenInfo:
        """The partner token's shape (type, lifetime, scope), fetching one if needed.

        The value stays masked (``TokenInfo.token`` is Sensitive).

        Raises:
            OAuthError / InvalidClient: wrong client credentials.
        """
        auth = self._transport.auth
        if refresh or auth.token is None:
            auth.fetch_count += 1
            reply = self._transport.request(
                "POST",
                TOKEN_PATH,
                data={"grant_type": "client_credentials"},
                headers={"Authorization": auth.basic_header()},
                partner=False,
            )
            auth.store(reply.body or {})
        assert auth.token is not None
        info = auth.last_token_response
        return TokenInfo(
            token_type=str(info.get("token_type")),
            expires_in=info.get("expires_in"),
            scope=info.get("scope"),
            token=auth.token,
        )

    def legacy_token(self) -> TokenInfo:
        """``POST /authorization/server_api/access_tokens`` — deprecated, "must not be used".

        Refused unless ``connect(..., allow_deprecated=True)``; then a DeprecationWarning.

        Raises:
            DeprecatedEndpoint: not allowed on this client.
            EndpointDeprecated: the server refuses it (strict mode, 410).
        """
        self._deprecated("POST")
        reply = self._transport.request(
            "POST",
            LEGACY_TOKEN_PATH,
            data={"grant_type": "client_credentials"},
            headers={"Authorization": self._transport.auth.basic_header()},
            partner=False,
        )
        body = reply.body or {}
        return TokenInfo(
            token_type=str(body.get("token_type")),
            expires_in=body.get("expires_in"),
            scope=body.get("scope"),
            token=Sensitive(str(body.get("access_token", "")), label="access_token"),
            deprecation=reply.headers.get("deprecation"),
            link=reply.headers.get("link"),
        )

    def legacy_revoke(self, token: TokenInfo | Sensitive[str] | None = None) -> None:
        """``DELETE /authorization/server_api/access_tokens`` — deprecated; revokes a token.

        Without ``token`` the client's own partner token is revoked and forgotten.

        Raises:
            DeprecatedEndpoint: not allowed on this client.
        """
        self._deprecated("DELETE")
        own = token is None
        if isinstance(token, TokenInfo):
            secret = token.token
        elif isinstance(token, Sensitive):
            secret = token
        else:
            self.token()
            assert self._transport.auth.token is not None
            secret = self._transport.auth.token
        try:
            self._transport.request(
                "DELETE",
                LEGACY_TOKEN_PATH,
                headers={"Authorization": f"Bearer {secret.reveal()}"},
                partner=False,
            )
        finally:
            if own:
                self._transport.auth.invalidate()

    def _deprecated(self, method: str) -> None:
        if not self.config.allow_deprecated:
            raise DeprecatedEndpoint(
                f"{method} {LEGACY_TOKEN_PATH} is deprecated and must not be used (spec, 1.2.0)"
            )
        warnings.warn(
            f"{method} {LEGACY_TOKEN_PATH} is deprecated; use POST {TOKEN_PATH}",
            DeprecationWarning,
            stacklevel=3,
        )

    # -- internals used by the resources ----------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        session: SessionArg = "current",
        partner: bool = True,
        idempotency_key: str | None = None,
        submitted: Mapping[str, str] | None = None,
    ) -> Reply:
        sent = self._current if session == "current" else session
        headers: dict[str, str] = {}
        if not partner and self.config.control_token is not None:
            headers["svc-control-token"] = self.config.control_token.reveal()
        reply = self._transport.request(
            method,
            path,
            json=json,
            headers=headers,
            partner=partner,
            session_token=sent.token.reveal() if isinstance(sent, CurrentSession) else None,
            session_type=sent.session_type if isinstance(sent, CurrentSession) else None,
            idempotency_key=idempotency_key,
            submitted=submitted,
        )
        if isinstance(sent, CurrentSession):
            self.sessions._observe(sent, parse_time(reply.headers.get("svc-session-expires-at")))
        return reply

    def _encrypt(self, plaintext: Any) -> str:
        """Encrypt to the server (keys from init data, fetched if none are known yet)."""
        if not self._server_keys.kids:
            self.sessions.init_data()
        return self._server_keys.encrypt(plaintext, alg=self.config.jwe_alg)

    def _sim_clock(self) -> datetime:
        """The simulator's time for webhook verification, on a connection of its own (called
        from the receiver thread; not part of the call history)."""
        with self._clock_lock:  # deliveries may arrive on several receiver threads at once
            if self._clock_http is None:
                assert self.config.base_url is not None
                self._clock_http = httpx.Client(
                    base_url=self.config.base_url, timeout=5.0, verify=shared_ssl_context()
                )
        headers = {}
        if self.config.control_token is not None:
            headers["svc-control-token"] = self.config.control_token.reveal()
        now = parse_time(self._clock_http.get("/_sim/clock", headers=headers).json()["now"])
        assert now is not None
        return now

    def _after_reset(self) -> None:
        self._current = None
        self._server_keys = ServerKeys()
        self._webhooks._forget()


def connect(profile: str = "sim", **overrides: Any) -> Client:
    """A client for one device: ``"sim"`` (embedded simulator) or ``"sandbox"``.

    ``sim`` starts the embedded simulator or reuses the one this process runs (pass
    ``base_url=`` to use a ``kit serve`` instead); credentials ``sim-partner`` /
    ``sim-secret`` unless overridden. ``sandbox`` reads ``PARTNER_API_BASE_URL``,
    ``PARTNER_API_CLIENT_ID`` and ``PARTNER_API_CLIENT_SECRET`` (or ``base_url=``,
    ``client_id=``, ``client_secret=``). Other options: ``allow_deprecated``, ``jwe_alg``
    (``"RSA-OAEP-256"`` or ``"ECDH-ES+A256KW"``), ``device`` (``{"device_id", "platform",
    "model", "os_version"}``), ``max_retries``, ``backoff_base``, ``backoff_cap``, ``seed`` /
    ``rng`` and ``sleep`` (retry jitter and waiting), ``timeout``, ``control_token``.

    Example::

        >>> import kit
        >>> a = kit.connect("sim")                                  # doctest: +SKIP
        >>> b = kit.connect("sim")            # the same simulator    # doctest: +SKIP

    Raises:
        ConfigError: an unknown profile or option; sandbox settings missing (named).
        TransportError: the embedded simulator could not start.
    """
    config = resolve(profile, overrides, environ=os.environ)
    if config.profile == "sim" and not config.base_url:
        from kit._embedded import embedded_base_url

        try:
            config = dataclasses.replace(config, base_url=embedded_base_url())
        except ImportError as exc:
            raise ConfigError(
                "the sim profile needs the simulator's dependencies (fastapi, uvicorn)"
            ) from exc
        except RuntimeError as exc:
            raise TransportError(f"the embedded simulator did not start: {exc}") from exc
    return Client(config)
