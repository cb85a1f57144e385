"""The client: ``kit.connect(profile=…)`` → :class:`Client`, one per device.

A client is one install of the partner app: its own device key pair, its own current session,
its own call history — all held by its :class:`~kit._requestor.Requestor`, which the client,
``api.sessions`` and every ``api.<resource>`` share. Several clients in one process share the
embedded simulator (two customers for P2P are two ``connect()`` calls) and each fetches its
own partner token.

Example::

    >>> import kit
    >>> api = kit.connect("sim")                                  # doctest: +SKIP
    >>> api.sessions.create("anonymous", expiration="sliding")    # doctest: +SKIP
    >>> account = api.accounts.create()                           # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import os
import random
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kit._lazy import imported_past

with imported_past("httpx._main"):  # its CLI (benchmarks/bench.py FIXES: httpx._main)
    import httpx

from kit._auth import TOKEN_PATH, legacy_token_path, token_path
from kit._client_wire import RecordedWire
from kit._config import Config, DriftMode, JweAlg, resolve
from kit._history import History
from kit._hooks import Hooks
from kit._profiles import Personas, Profile
from kit._requestor import Requestor
from kit._resources._base import Lazy
from kit._sensitive import Sensitive
from kit._sessions import Sessions
from kit.crypto import Device
from kit.errors import ConfigError, DeprecatedEndpoint, NotAvailable, TransportError
from kit.models import SessionInfo, TokenInfo

if TYPE_CHECKING:
    import pandas as pd

    from kit._resources.accounts import Accounts
    from kit._resources.cards import Cards
    from kit._resources.documents import DocumentRequests
    from kit._resources.events import Events
    from kit._resources.kyc import Kyc
    from kit._resources.p2p import P2P
    from kit._resources.persons import Persons
    from kit._resources.sim import SimControl
    from kit._resources.webhooks import Webhooks

__all__ = ["Client", "connect"]


class Client(RecordedWire):
    """A client for one device. Build it with :func:`kit.connect`.

    Attributes: ``sessions``, ``accounts``, ``persons``, ``kyc``, ``cards``, ``events``,
    ``p2p``, ``document_requests``, ``webhooks``, ``sim`` (sim profile), ``history``,
    ``calls``, ``drift``, ``session``, ``device``, ``personas``, ``wire_log`` (``record=True``).
    """

    accounts: Lazy[Accounts] = Lazy("accounts", "Accounts")  # each built on first use
    persons: Lazy[Persons] = Lazy("persons", "Persons")
    kyc: Lazy[Kyc] = Lazy("kyc", "Kyc")
    cards: Lazy[Cards] = Lazy("cards", "Cards")
    events: Lazy[Events] = Lazy("events", "Events")
    p2p: Lazy[P2P] = Lazy("p2p", "P2P")
    document_requests: Lazy[DocumentRequests] = Lazy("documents", "DocumentRequests")
    _webhooks: Lazy[Webhooks] = Lazy("webhooks", "Webhooks")
    _sim: Lazy[SimControl] = Lazy("sim", "SimControl")

    def __init__(self, config: Config) -> None:
        self.config = config
        self._requestor = requestor = Requestor(config)
        self.sessions = Sessions(requestor)
        self._personas: Personas | None = None

    def __repr__(self) -> str:
        current = self._requestor.current
        session = current.info.session_type if current else None
        return (
            f"<kit.Client profile={self.config.profile.name!r} client_id={self.config.client_id!r} "
            f"device={self.device.device_id!r} session={session!r}>"
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop this client's webhook receiver and close its connections (the shared
        embedded simulator keeps running for other clients)."""
        if "_webhooks" in vars(self):  # built: its receiver may be running
            self._webhooks.close()
        self._requestor.close()

    # -- views ------------------------------------------------------------------------------

    @property
    def device(self) -> Device:
        """This install's device: id, metadata and key pair (the private key never shown)."""
        return self._requestor.device

    @property
    def session(self) -> SessionInfo | None:
        """The current session (type, expiry, device), or ``None``; never its token."""
        current = self._requestor.current
        return current.info if current else None

    @property
    def history(self) -> pd.DataFrame:
        """Every call so far: time, method, path, status, ms, session_type, code,
        request_id, replayed, retries, assumptions. Never headers, bodies or secrets."""
        return self._requestor.history.frame()

    @property
    def drift(self) -> pd.DataFrame:
        """Every way this client's answers differed from the contract (``data/openapi.json``):
        operation, field (or header), expected, got, request_id, kind — never a value from an
        answer (a type drift names the JSON types). Empty when the API keeps its contract.

        Example::

            >>> api.drift.empty                                      # doctest: +SKIP
            True
        """
        return self._requestor.drift.frame()

    @property
    def calls(self) -> History:
        """The same calls as :attr:`history`, as :class:`~kit._history.Entry` rows, without pandas.

        Example::

            >>> len(api.calls), api.calls.entries()[-1].status     # doctest: +SKIP
            (3, 201)
        """
        return self._requestor.history

    @property
    def webhooks(self) -> Webhooks:
        """Webhook subscriptions; in the sim profile, first use starts and subscribes the
        loopback receiver (see :mod:`kit._resources.webhooks`)."""
        if self.config.profile.listens_by_default:
            self._webhooks.listen()
        return self._webhooks

    @property
    def personas(self) -> Personas:
        """Where this client's test personas and their KYC answers come from, as its profile
        says (:meth:`kit._profiles.Profile.personas`): the simulator's, or the sandbox fixtures'.

        Example::

            >>> who = api.personas.get("persona-01")                        # doctest: +SKIP
            >>> api.persons.create(account_id, **who.pii)                   # doctest: +SKIP

        Raises:
            FixturesError: (sandbox) on first use of a persona, when no fixtures file is set.
        """
        if self._personas is None:
            self._personas = self.config.profile.personas(self)
        return self._personas

    @property
    def sim(self) -> SimControl:
        """The simulator's control plane (sim profile only).

        Raises:
            NotAvailable: in any other profile (it is also an ``AttributeError``).
        """
        if not self.config.profile.control_plane:
            raise NotAvailable(
                f"api.sim exists only in the sim profile (this client is {self.config.profile.name!r})"
            )
        return self._sim

    # -- partner token ----------------------------------------------------------------------

    def token(self, *, refresh: bool = False) -> TokenInfo:
        """The partner token's shape (type, lifetime, scope), fetching one if needed.

        The value stays masked (``TokenInfo.token`` is Sensitive).

        Raises:
            OAuthError / InvalidClient: wrong client credentials.
        """
        auth = self._requestor.auth
        token = auth.fetch() if refresh or auth.token is None else auth.token
        grant = auth.grant  # None for a token handed over by kit regress: its shape is not known
        return TokenInfo(
            token_type=grant.token_type if grant else "None",
            expires_in=grant.expires_in if grant else None,
            scope=grant.scope if grant else None,
            token=token,
        )

    def legacy_token(self) -> TokenInfo:
        """``POST /authorization/server_api/access_tokens`` — deprecated, "must not be used".

        Refused unless ``connect(..., allow_deprecated=True)``; then a DeprecationWarning.

        Raises:
            DeprecatedEndpoint: not allowed on this client.
            EndpointDeprecated: the server refuses it (strict mode, 410).
        """
        self._deprecated("POST")
        reply = self._requestor.exchange_token(legacy_token_path())
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
        auth = self._requestor.auth
        own = token is None
        if isinstance(token, TokenInfo):
            secret = token.token
        elif isinstance(token, Sensitive):
            secret = token
        else:
            self.token()
            assert auth.token is not None
            secret = auth.token
        try:
            self._requestor.revoke_token(legacy_token_path(), secret)
        finally:
            if own:
                auth.invalidate()

    # -- a request of one's own ----------------------------------------------------------------

    def build_request(
        self, operation: str, path_params: Mapping[str, str] | None = None, *, json: Any = None
    ) -> httpx.Request:
        """A request of one's own for a partner ``operation`` (its key, as the contract's A67
        names it: ``create_person``, ``get_card``…), built as the client builds its calls — this
        server's path and names, the partner token, the current session — and not sent: send it
        with ``api.config.http_client()``. The body goes as given (nothing is encrypted); the
        request carries no idempotency key and is not recorded. Notebook 04 sends a person's
        data in clear this way, to see the server refuse it.

        Example::

            >>> request = api.build_request("create_person", {"account_id": account_id},
            ...                             json={"national_id": "000-00-0000"})  # doctest: +SKIP
            >>> with api.config.http_client() as http:                           # doctest: +SKIP
            ...     http.send(request).status_code
            422

        Raises:
            KitError: ``operation`` is no operation of the partner API (the known ones named).
            ApiError: fetching the partner token was refused.
        """
        return self._requestor.unsent(operation, path_params, json=json, session="current")

    @property
    def api_version(self) -> str | None:
        """The API version the server said it served on the last answer (``svc-api-version``);
        None before any answer. A client pinned with ``connect(..., api_version=V)`` sends V on
        every call and raises :class:`~kit.errors.ApiVersionMismatch` if another served it."""
        return self._requestor.transport.served_version

    def _deprecated(self, method: str) -> None:
        if token_path(self.config.api_version) == legacy_token_path():
            return  # the pinned version's own token endpoint (1.1.0: not deprecated there, A27)
        # The spec names a replacement for the POST only (endpoint.2); none for the DELETE (endpoint.3).
        named = method == "POST"
        if not self.config.allow_deprecated:
            refused = DeprecatedEndpoint(
                f"{method} {legacy_token_path()} is deprecated and must not be used (spec, 1.2.0)"
            )
            if not named:
                refused.hint = "the spec names no replacement; connect(..., allow_deprecated=True) to call it"
            raise refused
        instead = f"; use POST {TOKEN_PATH}" if named else " (the spec names no replacement)"
        warnings.warn(
            f"{method} {legacy_token_path()} is deprecated{instead}",
            DeprecationWarning,
            stacklevel=3,
        )


def connect(
    profile: str | Profile | type[Profile] = "sim",
    *,
    base_url: str | None = None,
    client_id: str | None = None,
    client_secret: str | Sensitive[str] | None = None,
    allow_deprecated: bool = False,
    jwe_alg: JweAlg | None = None,
    device: Mapping[str, str] | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    backoff_base: float | None = None,
    backoff_cap: float | None = None,
    max_retry_after: float | None = None,
    seed: int | None = None,
    rng: random.Random | None = None,
    sleep: Callable[[float], None] | None = None,
    control_token: str | Sensitive[str] | None = None,
    token_refresh_margin: float | None = None,
    drift: DriftMode | None = None,
    hooks: Hooks | Mapping[str, Iterable[Callable[..., None]]] | None = None,
    choices: str | os.PathLike[str] | None = None,
    api_version: str | None = None,
    record: bool = False,
    transport: httpx.BaseTransport | None = None,
    client_cert: str | os.PathLike[str] | None = None,
    client_key: str | os.PathLike[str] | None = None,
    client_key_passphrase: str | Sensitive[str] | None = None,
    ca_bundle: str | os.PathLike[str] | None = None,
) -> Client:
    """A client for one device: ``"sim"`` (embedded simulator) or ``"sandbox"`` — or any
    :class:`kit._profiles.Profile` (class or object: a partner's staging is one class).

    ``sim`` starts the embedded simulator or reuses the one this process runs (pass
    ``base_url=`` to use a ``kit serve`` instead); credentials ``sim-partner`` /
    ``sim-secret`` unless overridden. ``sandbox`` reads ``PARTNER_API_BASE_URL``,
    ``PARTNER_API_CLIENT_ID`` and ``PARTNER_API_CLIENT_SECRET`` (or ``base_url=``,
    ``client_id=``, ``client_secret=``).

    Every option is keyword-only; one left out (``None``) takes :class:`kit._config.Config`'s
    default. ``allow_deprecated``: the legacy token endpoint; ``jwe_alg``: ``"RSA-OAEP-256"``
    or ``"ECDH-ES+A256KW"``; ``device``: ``{"device_id", "platform", "model", "os_version"}``;
    ``timeout``, ``max_retries``, ``backoff_base``, ``backoff_cap``, ``max_retry_after``: the
    retries; ``seed`` / ``rng`` and ``sleep``: their jitter and waiting; ``control_token``: the
    simulator's control plane; ``token_refresh_margin``: seconds before a partner token expires
    that a new one is fetched; ``drift``: ``"report"`` contract drift in ``api.drift`` (the
    default), ``"raise"`` or ``"off"``; ``choices``: the choice overlay the ``sim`` profile's
    simulator starts with; ``api_version``: the version to pin; ``record``: keep the wire,
    redacted (``api.wire()``, ``api.export_har(path)``; bounded, :mod:`kit._wire`);
    ``transport``: any ``httpx.BaseTransport`` every connection of the client sends through
    (an ``httpx.MockTransport`` in a test, a transport with a proxy; it brings its own TLS).

    Mutual TLS, on every profile, for every ``https`` connection of the client: ``client_cert``
    (a PEM certificate, which may hold its key too), ``client_key`` (its PEM private key) and
    ``client_key_passphrase`` (an encrypted key's), ``ca_bundle`` (PEM CAs trusted instead of the
    default ones); each else ``PARTNER_API_CLIENT_CERT``, ``PARTNER_API_CLIENT_KEY``,
    ``PARTNER_API_CLIENT_KEY_PASSPHRASE``, ``PARTNER_API_CA_BUNDLE`` (a ``client_cert`` given
    brings its own ``client_key``, or none). Paths only: the kit hands them to the TLS library
    and never reads a key itself (:mod:`kit._tls`); they are checked when the client is made.

    ``hooks`` observes the client from outside, as httpx's ``event_hooks`` do: a
    :class:`kit._hooks.Hooks` or a mapping ``{"call": [fn, …], "drift": [fn, …]}``. Each
    ``call`` hook gets every :class:`~kit._history.Entry` the client records (the redacted row
    of ``api.history``), each ``drift`` hook the :class:`~kit._drift.Drift` rows of one answer
    that differed from the contract; they run on the calling thread, and their errors reach
    the caller. The notebook companion (``kit.notebook.connect``) passes its own.

    Example::

        >>> import kit
        >>> a = kit.connect("sim")                                  # doctest: +SKIP
        >>> b = kit.connect("sim")            # the same simulator    # doctest: +SKIP
        >>> seen = []
        >>> c = kit.connect("sim", hooks={"call": [seen.append]})   # doctest: +SKIP

    Raises:
        TypeError: an unknown option.
        ConfigError: an unknown profile or a value not allowed; sandbox settings missing (named);
            a TLS file missing or unusable, or a key that does not match its certificate.
        TransportError: the embedded simulator could not start.
    """
    given = {name: value for name, value in locals().items() if name != "profile"}
    overrides: dict[str, Any] = {name: value for name, value in given.items() if value is not None}
    config = resolve(profile, overrides, environ=os.environ)
    if not config.base_url:
        try:
            started = config.profile.start()
        except ImportError as exc:
            raise ConfigError(
                f"the {config.profile.name} profile needs the simulator: pip install 'partner-api-kit[sim]'"
            ) from exc
        except RuntimeError as exc:
            raise TransportError(f"the embedded simulator did not start: {exc}") from exc
        if started is not None:
            config = dataclasses.replace(config, base_url=started)
    return Client(config)
