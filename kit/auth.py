"""Partner-level authentication: OAuth 2.0 client credentials as an ``httpx.Auth`` (DESIGN §3.1).

The token is fetched when first needed (``POST /oauth/accesstoken``, form
``grant_type=client_credentials``, HTTP Basic per RFC 6749 §2.3.1), cached until shortly before
it expires, and fetched once more when an answer is the 401 problem ``invalid-partner-token``
(a revoked or expired token) — never on session 401s. authlib is not used: its httpx client
prints deprecation warnings on stderr with httpx 0.28 (DESIGN §7).

The token lives in a :class:`~kit.Sensitive`; ``repr`` of this object masks it.

Example::

    >>> auth = PartnerAuth("http://127.0.0.1:8000", "sim-partner", Sensitive("sim-secret"))
    >>> auth
    PartnerAuth(client_id='sim-partner', token=none)
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Generator
from typing import Any
from urllib.parse import quote_plus

import httpx

from kit.sensitive import Sensitive

__all__ = ["TOKEN_PATH", "PartnerAuth", "problem_code"]

TOKEN_PATH = "/oauth/accesstoken"

#: Called with (response, elapsed ms) for the exchanges the auth flow makes on its own.
Observer = Callable[[httpx.Response, float], None]


def problem_code(response: httpx.Response) -> str | None:
    """The ``code`` of a problem+json answer (``None`` for anything else)."""
    try:
        body = json.loads(response.content or b"null")
    except ValueError:
        return None
    return str(body["code"]) if isinstance(body, dict) and "code" in body else None


class PartnerAuth(httpx.Auth):
    """Client-credentials bearer auth with a cached token and one re-fetch on 401.

    Raises nothing itself: a failed token request ends the flow and its answer (an RFC 6749
    error) is what the caller receives, turned into :class:`~kit.errors.OAuthError` there.
    """

    requires_response_body = True

    def __init__(
        self,
        base_url: str,
        client_id: str,
        client_secret: Sensitive[str],
        *,
        margin: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        observer: Observer | None = None,
    ) -> None:
        self.token_url = base_url.rstrip("/") + TOKEN_PATH
        self.client_id = client_id
        self._secret = client_secret
        self._margin = margin
        self._clock = clock
        self._observer = observer
        self._lock = threading.RLock()
        self._token: Sensitive[str] | None = None
        self._valid_until = 0.0
        self.last_token_response: dict[str, Any] = {}
        #: How many token requests were made (tests check the single re-fetch on 401).
        self.fetch_count = 0

    def __repr__(self) -> str:
        state = "cached" if self._token is not None else "none"
        return f"PartnerAuth(client_id={self.client_id!r}, token={state})"

    # -- token cache --------------------------------------------------------------------------

    @property
    def token(self) -> Sensitive[str] | None:
        """The cached token (masked), or ``None``."""
        return self._token

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

    def _fresh(self) -> bool:
        return self._token is not None and self._clock() < self._valid_until

    def basic_header(self) -> str:
        """``Basic base64(urlencode(id):urlencode(secret))`` (RFC 6749 §2.3.1)."""
        pair = f"{quote_plus(self.client_id)}:{quote_plus(self._secret.reveal())}"
        return "Basic " + base64.b64encode(pair.encode()).decode()

    def token_request(self, url: str | None = None) -> httpx.Request:
        """The client-credentials request (also used for the deprecated legacy endpoint)."""
        return httpx.Request(
            "POST",
            url or self.token_url,
            data={"grant_type": "client_credentials"},
            headers={"Authorization": self.basic_header(), "Accept": "application/json"},
        )

    def _accept(self, response: httpx.Response) -> bool:
        """Store the token from a 200 answer; ``False`` for anything else."""
        if response.status_code != 200:
            return False
        try:
            return self.store(response.json())
        except ValueError:
            return False

    def store(self, body: Any) -> bool:
        """Cache the token of a token endpoint's JSON answer; ``False`` if it holds none."""
        if not isinstance(body, dict) or not isinstance(body.get("access_token"), str):
            return False
        token = body["access_token"]
        expires_in = body.get("expires_in")
        lifetime = float(expires_in) if isinstance(expires_in, int | float) else 3600.0
        with self._lock:
            self._token = Sensitive(token, label="access_token")
            self._valid_until = self._clock() + max(lifetime - self._margin, lifetime / 2)
            self.last_token_response = {k: body.get(k) for k in ("token_type", "expires_in", "scope")}
        return True

    def _observe(self, response: httpx.Response, started: float) -> None:
        if self._observer is not None:
            self._observer(response, (time.perf_counter() - started) * 1000)

    def _fetch(self) -> Generator[httpx.Request, httpx.Response, bool]:
        started = time.perf_counter()
        self.fetch_count += 1
        response = yield self.token_request()
        self._observe(response, started)
        return self._accept(response)

    # -- the httpx flow -----------------------------------------------------------------------

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if not self._fresh() and not (yield from self._fetch()):
            return  # the token endpoint's error answer goes back to the caller
        assert self._token is not None
        request.headers["Authorization"] = f"Bearer {self._token.reveal()}"
        started = time.perf_counter()
        response = yield request
        if response.status_code == 401 and problem_code(response) == "invalid-partner-token":
            self._observe(response, started)
            self.invalidate()
            if not (yield from self._fetch()):
                return
            assert self._token is not None
            request.headers["Authorization"] = f"Bearer {self._token.reveal()}"
            yield request
