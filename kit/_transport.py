"""HTTP exchanges: retries, idempotency keys, error mapping and the history.

One :class:`Transport` per client wraps one ``httpx.Client`` (building one costs ~24 ms of CA
loading). For every call it

- adds an ``Idempotency-Key`` to every partner ``POST`` (generated when not given) and keeps
  it, with the exact same body bytes, across retries;
- retries 429, 503 and connection errors with exponential backoff and jitter (seeded RNG,
  injectable sleep), honouring ``Retry-After``, at most ``max_retries`` times;
- turns error answers into :mod:`kit.errors` classes and httpx failures into
  :class:`~kit.errors.TransportError`;
- records one :class:`~kit._history.Entry` (never headers or bodies), and, for a client made
  with ``record=True``, tells its :class:`~kit._wire.Recorder` where each call begins and ends
  (the recorder sees every attempt through httpx's event hooks);
- checks every final answer (and the token exchanges) against the contract
  (:mod:`kit._contract`): drift goes to the client's :class:`~kit._drift.DriftLog`.

Example::

    >>> t = Transport(config, history=History())           # doctest: +SKIP
    >>> t.request("GET", "/sessions/user_session_initialization_data").body["enc"]  # doctest: +SKIP
    ['A256GCM']
"""

from __future__ import annotations

import contextlib
import email.utils
import logging
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from kit import _log
from kit._auth import PartnerAuth
from kit._config import Config
from kit._contract import HEADERS as CONTRACT_HEADERS
from kit._contract import Contract
from kit._drift import DriftLog
from kit._history import Entry, History
from kit._tls import shared_ssl_context, tls_context_for
from kit.errors import ApiVersionMismatch, ContractDrift, TransportError, error_from_response
from kit.register import value as _register_value

if TYPE_CHECKING:
    from kit._wire import Recorder  # a recording client's; imported by the requestor that makes one

__all__ = ["RETRY_STATUSES", "Reply", "Transport", "shared_ssl_context"]

RETRY_STATUSES = frozenset({429, 503})
USER_AGENT = "partner-api-kit/0.1.0"
#: The simulator's answer to a fault the caller injected through its control plane: asked
#: for, so not drift (sim profile only; a sandbox has no control plane).
INJECTED_FAULT = "injected-fault"


@dataclass(frozen=True)
class Reply:
    """A successful answer: status, parsed JSON body (or ``None``) and response headers."""

    status: int
    body: Any
    headers: httpx.Headers
    replayed: bool
    retries: int
    idempotency_key: str | None
    content: bytes = field(default=b"", repr=False)  # as it came: a snapshot's only form


def _retry_after(headers: httpx.Headers) -> float | None:
    """``Retry-After`` in seconds (delta-seconds or an HTTP date), or ``None``."""
    raw = headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    if raw.isdigit():
        return float(raw)
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _parse_body(response: httpx.Response) -> Any:
    if not response.content:
        return None
    ctype = response.headers.get("content-type", "")
    if "json" not in ctype:
        return None
    try:
        return response.json()
    except ValueError:
        return None


#: The header naming the API version (A27): sent when the client pins one, read on every answer.
VERSION_HEADER = str(_register_value("A27")["header"])


class Transport:
    """Sends requests for one client (see the module docstring)."""

    def __init__(
        self,
        config: Config,
        *,
        history: History,
        drift: DriftLog | None = None,
        recorder: Recorder | None = None,
    ) -> None:
        if not config.base_url:
            raise TransportError("no base URL configured")
        self.config = config
        self.history = history
        self.drift = drift if drift is not None else DriftLog()
        self.recorder = recorder
        self._prefix = urlsplit(config.base_url).path.rstrip("/")
        pinned = {VERSION_HEADER: config.api_version} if config.api_version else {}
        self._client = httpx.Client(
            base_url=config.base_url,
            timeout=config.timeout,
            headers={"Accept": "application/json", "User-Agent": USER_AGENT, **pinned},
            follow_redirects=False,
            verify=tls_context_for(config.base_url),
            event_hooks=recorder.event_hooks() if recorder is not None else None,
        )
        #: The partner auth flow sent with partner calls (set by the requestor, which owns it).
        self.auth: PartnerAuth | None = None
        #: The API version the server last said it served (``svc-api-version``), if it said one.
        self.served_version: str | None = None

    def __repr__(self) -> str:
        return f"Transport(base_url=<{self.config.profile.name}>, auth={self.auth!r})"

    def close(self) -> None:
        self._client.close()

    # -- history ----------------------------------------------------------------------------

    def _record(
        self,
        started_at: datetime,
        request: tuple[str, str],
        response: httpx.Response | None,
        ms: float,
        session_type: str | None,
        retries: int,
        code: str | None = None,
    ) -> None:
        """One history row for ``request`` (method, path) and its answer (``None``: none came)."""
        method, path = request
        headers = response.headers if response is not None else httpx.Headers()
        if response is not None and code is None and response.status_code >= 400:
            body = _parse_body(response)
            if isinstance(body, Mapping):
                code = str(body.get("code") or body.get("error") or "") or None
        entry = Entry(
            time=started_at,
            method=method,
            path=path,
            status=response.status_code if response is not None else None,
            ms=round(ms, 2),
            session_type=session_type,
            code=code,
            request_id=headers.get("svc-request-id"),
            replayed=headers.get("idempotent-replayed", "").lower() == "true",
            retries=retries,
            assumptions=headers.get("svc-assumptions"),
        )
        self.history.record(entry)
        for hook in self.config.hooks.call:
            hook(entry)

    def observe_auth(self, response: httpx.Response, ms: float) -> None:
        """The answer the auth flow saw itself: the 401 that makes it fetch a new token."""
        path = response.request.url.path
        request = (
            response.request.method,
            path[len(self._prefix) :] if path.startswith(self._prefix) else path,
        )
        started_at = datetime.now(UTC) - timedelta(milliseconds=ms)  # "time" is when a call started
        self._record(started_at, request, response, ms, None, 0)
        self._check_contract(request, response, _parse_body(response))

    def _check_contract(self, request: tuple[str, str], response: httpx.Response, body: Any) -> None:
        """Check one answer against the contract; keep its drift (or raise, ``drift="raise"``).

        Raises:
            ContractDrift: the answer drifted and the client was built with ``drift="raise"``.
        """
        mode = self.config.drift
        if mode == "off":
            return
        if (
            self.config.profile.control_plane
            and isinstance(body, Mapping)
            and body.get("code") == INJECTED_FAULT
        ):
            return
        headers = {}  # the few the check reads, in one pass (each httpx lookup scans them all)
        for raw_name, raw_value in response.headers.raw:
            name = raw_name.decode("latin-1").lower()
            if name in CONTRACT_HEADERS:
                headers[name] = raw_value.decode("latin-1")
        rows = Contract.for_version(headers.get(VERSION_HEADER)).check(
            request[0], request[1], response.status_code, headers, body, has_content=bool(response.content)
        )
        if rows:
            if _log.LOG.isEnabledFor(logging.INFO):
                _log.drift(*request, response.status_code, response.headers.get("svc-request-id"), rows)
            self.drift.record(rows)
            for hook in self.config.hooks.drift:
                hook(rows)
            seed_drift = [row for row in rows if not row.differs]  # a difference is not drift
            if mode == "raise" and seed_drift:
                raise ContractDrift(seed_drift)

    def _check_version(self, method: str, path: str, response: httpx.Response) -> None:
        """Keep the version the server served; a pinned client refuses another (A27).

        Raises:
            ApiVersionMismatch: the client pinned a version and the server answered under another.
        """
        served = response.headers.get(VERSION_HEADER)
        if served is None:
            return
        self.served_version = served
        pinned = self.config.api_version
        if pinned and served != pinned and response.status_code != 400:  # a 400: the refusal itself
            if _log.LOG.isEnabledFor(logging.WARNING):
                _log.version_mismatch(method, path, pinned, served, response.headers.get("svc-request-id"))
            raise ApiVersionMismatch(
                f"{method} {path}: the client pinned {VERSION_HEADER} {pinned}, "
                f"the server answered under {served}"
            )

    # -- sending ----------------------------------------------------------------------------

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.config.max_retry_after)
        ceiling = min(self.config.backoff_cap, self.config.backoff_base * (2**attempt))
        return ceiling / 2 + self.config.rng.uniform(0, ceiling / 2)

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        data: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        partner: bool = True,
        session_token: str | None = None,
        session_type: str | None = None,
        idempotency_key: str | None = None,
        submitted: Mapping[str, str] | None = None,
        retry_statuses: frozenset[int] = RETRY_STATUSES,
        content: bytes | None = None,
        timeout: float | None = None,
    ) -> Reply:
        """Send one call (with retries) and return its :class:`Reply` (:meth:`_request`).
        ``retry_statuses``: the answers sent again after a wait (a call whose body cannot be sent
        twice names fewer); ``content``: a raw body (its type in ``headers``); ``timeout``: its own.

        Raises:
            ApiError: (a subclass) for any 4xx/5xx answer after retries.
            TransportError: the server could not be reached after retries.
        """
        call = self.recorder.call(method, path) if self.recorder is not None else contextlib.nullcontext()
        with call:
            return self._request(
                method,
                path,
                json,
                data,
                headers,
                partner,
                session_token,
                session_type,
                idempotency_key,
                submitted,
                retry_statuses,
                content,
                timeout,
            )

    def _request(
        self,
        method: str,
        path: str,
        json: Any,
        data: Mapping[str, str] | None,
        headers: Mapping[str, str] | None,
        partner: bool,
        session_token: str | None,
        session_type: str | None,
        idempotency_key: str | None,
        submitted: Mapping[str, str] | None,
        retry_statuses: frozenset[int],
        content: bytes | None = None,
        timeout: float | None = None,
    ) -> Reply:
        """One call, with retries.

        ``partner``: attach the partner bearer token (``False`` for ``/_sim`` and token calls).
        ``session_token``: sent as ``svc-session-id``. ``submitted``: a non-sensitive value
        quoted in error messages (problem code → the enum value the caller sent).

        Raises:
            ApiError: (a subclass) for any 4xx/5xx answer after retries.
            TransportError: the server could not be reached after retries.
        """
        send_headers: dict[str, str] = dict(headers or {})
        if session_token is not None:
            send_headers["svc-session-id"] = session_token
        key = idempotency_key
        if method == "POST" and partner and key is None:
            key = str(uuid.uuid4())
        if key is not None:
            send_headers["Idempotency-Key"] = key
        wait = httpx.USE_CLIENT_DEFAULT if timeout is None else timeout
        request = self._client.build_request(
            method, path, json=json, data=data, content=content, headers=send_headers, timeout=wait
        )
        auth: httpx.Auth | None = self.auth if partner else None
        started_at = datetime.now(UTC)
        t0 = time.perf_counter()
        attempt = 0
        while True:
            try:
                response = self._client.send(request, auth=auth) if auth else self._client.send(request)
            except httpx.HTTPError as exc:
                if attempt < self.config.max_retries:
                    attempt, delay = attempt + 1, self._delay(attempt, None)
                    if _log.LOG.isEnabledFor(logging.INFO):
                        _log.retry(method, path, attempt, delay, None, type(exc).__name__)
                    self.config.sleep(delay)
                    continue
                ms = (time.perf_counter() - t0) * 1000
                self._record(started_at, (method, path), None, ms, session_type, attempt, "connection-error")
                raise TransportError(
                    f"{method} {path} failed after {attempt + 1} attempt(s): {type(exc).__name__}"
                ) from exc
            if response.status_code in retry_statuses and attempt < self.config.max_retries:
                attempt, delay = attempt + 1, self._delay(attempt, _retry_after(response.headers))
                if _log.LOG.isEnabledFor(logging.INFO):
                    _log.retry(method, path, attempt, delay, response.status_code, None)
                self.config.sleep(delay)
                continue
            break

        body = _parse_body(response)
        ms = (time.perf_counter() - t0) * 1000
        self._record(started_at, (method, path), response, ms, session_type, attempt)
        self._check_contract((method, path), response, body)
        self._check_version(method, path, response)
        if response.status_code >= 400:
            raise error_from_response(
                response.status_code,
                body,
                request_id=response.headers.get("svc-request-id"),
                retry_after=_retry_after(response.headers),
                submitted=submitted,
            )
        return Reply(
            status=response.status_code,
            body=body,
            headers=response.headers,
            replayed=response.headers.get("idempotent-replayed", "").lower() == "true",
            retries=attempt,
            idempotency_key=key,
            content=response.content,
        )
