"""Partner-level authentication: the OAuth 2.0 client-credentials exchange and an ``httpx.Auth``.

The exchange is written once: :func:`token_headers` and :data:`CLIENT_CREDENTIALS` (``POST
/oauth/accesstoken``, form ``grant_type=client_credentials``, HTTP Basic per RFC 6749 §2.3.1)
and :meth:`TokenGrant.from_body` (reading the answer). A client makes it in one place,
:meth:`kit._requestor.Requestor.exchange_token` (retried and recorded like any call), for
:class:`PartnerAuth`, ``api.token()`` and ``api.legacy_token()``. :class:`PartnerAuth` is the
httpx auth flow of a client's calls: the token is fetched (through the requestor) when first
needed, cached until shortly before it expires, and fetched once more when an answer is the
401 problem ``invalid-partner-token`` (a revoked or expired token) — never on session 401s.
:func:`fetch_token` is the exchange before any client exists (``kit regress`` fetches one
token for a whole sandbox run), once, without retries. authlib is not used: its httpx client
prints deprecation warnings on stderr with httpx 0.28.

What a server's dialect chooses here (the client authentication, A01; the token's header and
scheme, A02; the codes that refuse a token, A64; the request id's header, A28) is asked of the
client's adapter, :class:`kit._spoken.Spelling`, never of the dialect itself.

Tokens live in a :class:`~kit.Sensitive`; ``repr`` of these objects masks them.

Example::

    >>> auth = PartnerAuth(lambda: None, client_id="sim-partner")
    >>> auth
    PartnerAuth(client_id='sim-partner', token=none)
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import threading
import time
from collections.abc import Callable, Generator, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple
from urllib.parse import quote_plus

import httpx

from kit import _log, register
from kit._dialect import DEFAULT, Dialect
from kit._http import http_client
from kit._outgoing import OPERATIONS
from kit._sensitive import Sensitive
from kit._spoken import PLAIN, Spelling
from kit._tls import TlsFiles, transport_error
from kit.errors import OAuthError, error_from_response

__all__ = [
    "CLIENT_CREDENTIALS",
    "TOKEN_PATH",
    "PartnerAuth",
    "TokenGrant",
    "credentials",
    "fetch_token",
    "legacy_token_path",
    "problem_code",
    "token_headers",
    "token_path",
    "token_refused",
    "token_request",
]

TOKEN_PATH = OPERATIONS["access_token"].template
#: The form of every token request (the deprecated legacy endpoint takes the same).
CLIENT_CREDENTIALS = {"grant_type": "client_credentials"}


def token_path(api_version: str | None) -> str:
    """Where the partner token is issued under ``api_version``: ``POST /oauth/accesstoken`` from
    1.2.0 on; under the version before (A27: 1.1.0) the endpoint the spec says it replaced
    (change.1), which is that version's own token endpoint, not a deprecated one.

        >>> token_path("1.1.0"), token_path(None)
        ('/authorization/server_api/access_tokens', '/oauth/accesstoken')
    """
    served = register.value("A27")["versions"]
    if api_version is None or api_version == register.fact("version") or api_version not in served:
        return TOKEN_PATH
    return legacy_token_path()


@functools.cache
def legacy_token_path() -> str:
    """The token endpoint the spec says ``POST /oauth/accesstoken`` replaced (change.1): 1.1.0's
    own, deprecated in 1.2.0.

        >>> legacy_token_path()
        '/authorization/server_api/access_tokens'
    """
    (change,) = [c for c in register.fact("change") if c["id"] == "change.1"]
    return str(change["previously"][f"POST {TOKEN_PATH}"]).split(" ", 1)[1]


#: Called with (response, elapsed ms) for the answer the auth flow saw itself: a 401 that makes
#: it fetch a new token.
Observer = Callable[[httpx.Response, float], None]


class TokenGrant(NamedTuple):
    """A token endpoint's answer: the token (masked), its type, lifetime and scope.

    ``raw`` is the JSON body without the token (read-only: a grant is a value).
    """

    access_token: Sensitive[str]
    token_type: str
    expires_in: int | None
    scope: str | None
    raw: Mapping[str, Any] = MappingProxyType({})

    def __repr__(self) -> str:  # not ``raw``: a sandbox's body may hold a refresh token
        return (
            f"TokenGrant(access_token={self.access_token!r}, token_type={self.token_type!r}, "
            f"expires_in={self.expires_in!r}, scope={self.scope!r})"
        )

    @classmethod
    def from_body(cls, body: Any) -> TokenGrant | None:
        """The grant in a token endpoint's JSON answer, or ``None`` when it holds no token.

        Example::

            >>> TokenGrant.from_body({"access_token": "t", "token_type": "Bearer"}).token_type
            'Bearer'
        """
        if not isinstance(body, Mapping) or not isinstance(body.get("access_token"), str):
            return None
        expires_in = body.get("expires_in")
        scope = body.get("scope")
        return cls(
            access_token=Sensitive(body["access_token"], label="access_token"),
            token_type=str(body.get("token_type")),
            expires_in=int(expires_in) if isinstance(expires_in, int | float) else None,
            scope=scope if isinstance(scope, str) else None,
            raw={k: v for k, v in body.items() if k != "access_token"},
        )


def problem_code(response: httpx.Response) -> str | None:
    """The ``code`` of a problem+json answer (``None`` for anything else)."""
    body = _json(response)
    return str(body["code"]) if isinstance(body, dict) and "code" in body else None


def _json(response: httpx.Response) -> Any:
    try:
        return json.loads(response.content or b"null")
    except ValueError:
        return None


def token_headers(client_id: str, client_secret: Sensitive[str]) -> dict[str, str]:
    """``Authorization: Basic base64(urlencode(id):urlencode(secret))`` (RFC 6749 §2.3.1)."""
    pair = f"{quote_plus(client_id)}:{quote_plus(client_secret.reveal())}"
    basic = base64.b64encode(pair.encode()).decode()
    return {"Authorization": f"Basic {basic}", "Accept": "application/json"}


def credentials(
    client_id: str, client_secret: Sensitive[str], spelling: Spelling = PLAIN
) -> tuple[dict[str, str], dict[str, str]]:
    """The token request's headers and form: HTTP Basic, or ``client_id`` and ``client_secret``
    in the form (RFC 6749 §2.3.1) when the spelling's A01 ``client_auth`` is ``"post"``."""
    if spelling.client_auth == "post":
        form = {**CLIENT_CREDENTIALS, "client_id": client_id, "client_secret": client_secret.reveal()}
        return {"Accept": "application/json"}, form
    return token_headers(client_id, client_secret), dict(CLIENT_CREDENTIALS)


def token_request(
    url: str, client_id: str, client_secret: Sensitive[str], spelling: Spelling = PLAIN
) -> httpx.Request:
    """The client-credentials request to ``url`` (the token endpoint's full URL)."""
    headers, form = credentials(client_id, client_secret, spelling)
    return httpx.Request("POST", url, data=form, headers=headers)


def token_refused(response: httpx.Response, spelling: Spelling = PLAIN) -> bool:
    """Whether a 401 says the partner token is no good: RFC 6750's ``error="invalid_token"`` in
    ``WWW-Authenticate``, or a problem code that stands for ``invalid-partner-token`` (A64)."""
    if response.status_code != 401:
        return False
    if 'error="invalid_token"' in response.headers.get("www-authenticate", ""):
        return True
    code = problem_code(response)
    return code is not None and "invalid-partner-token" in spelling.kit_codes(code)


def fetch_token(
    base_url: str,
    client_id: str,
    client_secret: Sensitive[str],
    *,
    timeout: float = 10.0,
    http: httpx.Client | None = None,
    transport: httpx.BaseTransport | None = None,
    tls: TlsFiles | None = None,
    dialect: Dialect = DEFAULT,
) -> TokenGrant:
    """Fetch one partner token (``POST {base_url}/oauth/accesstoken``), once, no retries.

    ``http``: an ``httpx.Client`` to send it with (otherwise a fresh one, of
    :func:`kit._http.http_client`, sending through ``transport`` when given, else with the TLS
    files ``tls``: a client certificate, a CA bundle; with ``http``, ``tls`` only explains a
    TLS failure); ``dialect``: the server's spelling (a dialect file's, read before any client
    exists), through its :class:`~kit._spoken.Spelling`: how the client authenticates (A01) and
    which header names the request id (A28).

    Example::

        >>> grant = fetch_token(base_url, "sim-partner", Sensitive("sim-secret"))  # doctest: +SKIP
        >>> grant.token_type, grant.access_token                                  # doctest: +SKIP
        ('Bearer', Sensitive(access_token=••••••))

    Raises:
        OAuthError: an RFC 6749 error answer (:class:`~kit.errors.InvalidClient` for wrong
            credentials), or a 200 without a token; another ApiError for other error answers.
        TransportError: the token endpoint could not be reached (a TLS failure explained).
        ConfigError: ``tls`` names a file that cannot be used.
    """
    spelling = Spelling.of(dialect)
    request = token_request(base_url.rstrip("/") + TOKEN_PATH, client_id, client_secret, spelling)
    request.extensions["timeout"] = httpx.Timeout(timeout).as_dict()
    try:
        if http is None:
            with http_client(transport=transport, tls=tls) as own:
                response = own.send(request)
        else:
            response = http.send(request)
    except httpx.HTTPError as exc:
        said = f"POST {TOKEN_PATH} failed: {type(exc).__name__}"
        raise transport_error(said, exc, request.url, tls) from exc
    body = _json(response)
    if response.status_code >= 400:
        request_id = response.headers.get(spelling.names.request_id)
        raise error_from_response(response.status_code, body, request_id=request_id)
    grant = TokenGrant.from_body(body)
    if grant is None:
        raise OAuthError(response.status_code, "invalid_response", "the token answer holds no access_token")
    return grant


#: Makes the token exchange and returns its grant (``None``: a 200 without a token); raises
#: the exchange's error (:class:`~kit.errors.OAuthError`…) otherwise.
Fetch = Callable[[], TokenGrant | None]


class PartnerAuth(httpx.Auth):
    """Client-credentials bearer auth with a cached token and one re-fetch on 401.

    ``fetch`` makes the exchange (a client's :meth:`~kit._requestor.Requestor.exchange_token`);
    its errors reach the caller of the call that needed the token.
    """

    requires_response_body = True

    def __init__(
        self,
        fetch: Fetch,
        *,
        client_id: str,
        margin: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        observer: Observer | None = None,
        spelling: Spelling = PLAIN,
    ) -> None:
        self.client_id = client_id
        self._spelling = spelling
        self._fetch_grant = fetch
        self._margin = margin
        self._clock = clock
        self._observer = observer
        self._lock = threading.RLock()
        self._token: Sensitive[str] | None = None
        self._valid_until = 0.0
        self._grant: TokenGrant | None = None

    def __repr__(self) -> str:
        state = "cached" if self._token is not None else "none"
        return f"PartnerAuth(client_id={self.client_id!r}, token={state})"

    # -- token cache --------------------------------------------------------------------------

    @property
    def token(self) -> Sensitive[str] | None:
        """The cached token (masked), or ``None``."""
        return self._token

    @property
    def grant(self) -> TokenGrant | None:
        """The last token endpoint answer taken (``None`` for a :meth:`preset` token)."""
        return self._grant

    def invalidate(self) -> None:
        """Forget the cached token; the next call fetches a new one."""
        with self._lock:
            self._token = None
            self._valid_until = 0.0

    def preset(self, token: Sensitive[str]) -> None:
        """Use a token fetched elsewhere (``kit regress``) until the server refuses it."""
        with self._lock:
            self._token = token
            self._valid_until = float("inf")
            self._grant = None

    def accept(self, grant: TokenGrant) -> None:
        """Cache a fetched token until ``margin`` seconds before it expires."""
        lifetime = float(grant.expires_in) if grant.expires_in is not None else 3600.0
        with self._lock:
            self._token = grant.access_token
            self._valid_until = self._clock() + max(lifetime - self._margin, lifetime / 2)
            self._grant = grant

    def _fresh(self) -> bool:
        return self._token is not None and self._clock() < self._valid_until

    def fetch(self, *, again: bool = False) -> Sensitive[str]:
        """Make the exchange now and cache its token (logged at INFO on ``kit.auth``, :mod:`kit._log`;
        ``again``: after a 401 ``invalid-partner-token``).

        Raises:
            OAuthError: the answer holds no token; the exchange's own errors otherwise.
        """
        grant = self._fetch_grant()
        if grant is None:
            raise OAuthError(200, "invalid_response", "the token answer holds no access_token")
        self.accept(grant)
        if _log.AUTH.isEnabledFor(logging.INFO):
            _log.token_fetched(self.client_id, grant.expires_in, again)
        token = self._token
        assert token is not None
        return token

    def current(self) -> Sensitive[str]:
        """The cached token, fetched first when there is none or it is about to expire."""
        token = self._token
        if token is None or not self._fresh():
            token = self.fetch()
        return token

    # -- the httpx flow -----------------------------------------------------------------------

    def authorize(self, request: httpx.Request, token: Sensitive[str] | None = None) -> None:
        """Put ``token`` (the :meth:`current` one by default) on ``request`` in the header and
        scheme the server's spelling gives (A02).

        Raises:
            ApiError: fetching the token was refused.
        """
        header, scheme = self._spelling.bearer
        request.headers[header] = f"{scheme} {(token if token is not None else self.current()).reveal()}"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        self.authorize(request)
        started = time.perf_counter()
        response = yield request
        if token_refused(response, self._spelling):
            if self._observer is not None:
                self._observer(response, (time.perf_counter() - started) * 1000)
            self.invalidate()
            self.authorize(request, self.fetch(again=True))
            yield request
