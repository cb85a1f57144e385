"""HTTP exchanges in layers, as httpx's ``send → auth → redirects → single request``.

One :class:`Transport` per client sends each :class:`~kit._outgoing.Outgoing` the requestor
builds, ``send → spelled → observed → retries → attempt``:

- :meth:`Transport.send` is the entry;
- :meth:`Transport._spelled` is the dialect's one layer (:class:`kit._spoken.Spelling`): it
  turns the call into one request in the wire's spelling (a moved operation's path, the JSON
  body's names and values; the session header; an ``Idempotency-Key`` on every partner
  ``POST``, generated when not given and kept, with the exact same body bytes, across retries)
  and the answer back into the kit's (its body, an error answer as a :mod:`kit.errors` class
  by what its code stands for, A64, the hint of a moved operation's 404/405). Everything
  inside it sees the wire: the history keeps the wire's path and code;
- :meth:`Transport._observed` is the wire log's call and lets the observers see the outcome;
- :meth:`Transport._with_retries` sends 429, 503 and connection errors again with exponential
  backoff and jitter (seeded RNG, injectable sleep), honouring ``Retry-After``, at most
  ``max_retries`` times, and turns an httpx failure into :class:`~kit.errors.TransportError`;
- :meth:`Transport._attempt` is one request, through the partner auth flow (:mod:`kit._auth`)
  when the call is a partner's.

The contract check, an observer, reads the answer through the same spelling
(:meth:`~kit._spoken.Spelling.contract_view`): the kit's document is checked in the kit's names.

The observers see each call's outcome (its final attempt and how many came before): the
history (one :class:`~kit._history.Entry`, never headers or bodies), the contract check
(:mod:`kit._contract`: drift goes to the client's :class:`~kit._drift.DriftLog`) and the version
check (A27). The wire log (``record=True``, :class:`~kit._wire.Recorder`) sees every attempt
through httpx's event hooks. The ``httpx.Client`` comes from :func:`kit._http.http_client`, so a
``transport=`` given to :func:`kit.connect` carries every call.

Example::

    >>> t = Transport(config, history=History())                          # doctest: +SKIP
    >>> t.send(Outgoing(OPERATIONS["init_data"], partner=False)).body["enc"]  # doctest: +SKIP
    ['A256GCM']
"""

from __future__ import annotations

import contextlib
import email.utils
import logging
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

import httpx

from kit import _log
from kit._auth import PartnerAuth
from kit._config import Config
from kit._drift import DriftLog
from kit._history import Entry, History
from kit._http import http_client
from kit._outgoing import RETRY_STATUSES, Operation, Outgoing
from kit._spoken import Spelling
from kit._tls import transport_error
from kit._version import __version__
from kit.errors import ApiVersionMismatch, ContractDrift, TransportError, error_from_response

if TYPE_CHECKING:
    from kit._wire import Recorder  # a recording client's; imported by the requestor that makes one

__all__ = ["RETRY_STATUSES", "USER_AGENT", "Outcome", "Reply", "Transport"]

USER_AGENT = f"partner-api-kit/{__version__}"
#: The simulator's answer to a fault the caller injected through its control plane: asked
#: for, so not drift (sim profile only; a sandbox has no control plane).
INJECTED_FAULT = "injected-fault"


class Reply(NamedTuple):
    """A successful answer: status, parsed JSON body (or ``None``) and response headers."""

    status: int
    body: Any
    headers: httpx.Headers
    replayed: bool
    retries: int
    idempotency_key: str | None
    content: bytes = b""  # as it came: a snapshot's only form


class Outcome(NamedTuple):
    """What the observers see of one call: its final attempt's answer (``None``: none came,
    ``code`` says why), when it started, how long it took and how many attempts came before."""

    method: str
    path: str
    started_at: datetime
    ms: float
    retries: int
    response: httpx.Response | None
    body: Any = None
    session_type: str | None = None
    code: str | None = None
    #: The call's path in the kit's spelling (``path`` is the wire's: a dialect may move it).
    kit_path: str | None = None


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


def _replayed(headers: httpx.Headers, name: str) -> bool:
    return headers.get(name, "").lower() == "true"


class Transport:
    """Sends the calls of one client (see the module docstring)."""

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
        #: How calls are spelled on the wire (a dialect's paths, names and headers: kit._spoken),
        #: and the header names this client writes and reads (the register's, or its dialect's).
        self.spelling = Spelling.of(config.dialect)
        self.names = names = self.spelling.names
        pinned = {names.api_version: config.api_version} if config.api_version else {}
        self._client = http_client(
            config.base_url,
            transport=config.transport,
            tls=config.tls,
            timeout=config.timeout,
            headers={"Accept": "application/json", "User-Agent": USER_AGENT, **pinned},
            event_hooks=recorder.event_hooks() if recorder is not None else None,
        )
        #: The partner auth flow sent with partner calls (set by the requestor, which owns it).
        self.auth: PartnerAuth | None = None
        #: The API version the server last said it served (``svc-api-version``), if it said one.
        self.served_version: str | None = None
        #: What sees each call's outcome, in this order (the version check may raise).
        self.observers = (self._record, self._check_contract, self._check_version)

    def __repr__(self) -> str:
        return f"Transport(base_url=<{self.config.profile.name}>, auth={self.auth!r})"

    def close(self) -> None:
        self._client.close()

    # -- sending: the entry ----------------------------------------------------------------

    def send(self, outgoing: Outgoing) -> Reply:
        """Send one call (spelled, observed, retried) and return its :class:`Reply`.

        Raises:
            ApiError: (a subclass) for any 4xx/5xx answer after retries.
            TransportError: the server could not be reached after retries.
        """
        return self._spelled(outgoing)

    def unsent(self, outgoing: Outgoing) -> httpx.Request:
        """The request of ``outgoing`` as this client spells it (its path, names and headers,
        the partner token, the session it presents), built and not sent: no idempotency key,
        never retried nor recorded.

        Raises:
            ApiError: fetching the partner token was refused.
        """
        request, _, _ = self._spelled_request(outgoing, keyed=False)
        if outgoing.partner and self.auth is not None:
            self.auth.authorize(request)
        return request

    # -- the dialect: the spelling layer ----------------------------------------------------

    def _spelled(self, outgoing: Outgoing) -> Reply:
        """``outgoing`` sent in the wire's spelling, its answer back in the kit's (the module
        docstring; with the simulator's own dialect, as it is).

        Raises:
            ApiError: (a subclass) for any 4xx/5xx answer after retries.
            TransportError: the server could not be reached after retries.
        """
        spelling = self.spelling
        request, key, path = self._spelled_request(outgoing)
        outcome = self._observed(outgoing, request, path)
        response = outcome.response
        assert response is not None  # no answer raised in _with_retries
        body = spelling.body_in(outcome.body)
        if response.status_code >= 400:
            error = error_from_response(
                response.status_code,
                body,
                request_id=response.headers.get(self.names.request_id),
                retry_after=_retry_after(response.headers),
                submitted=outgoing.submitted,
                meaning=None if spelling.plain else spelling.kit_codes,
            )
            raise spelling.explain(error, outgoing, path, self.config.profile.control_plane)
        return Reply(
            status=response.status_code,
            body=body,
            headers=response.headers,
            replayed=_replayed(response.headers, self.names.replayed),
            retries=outcome.retries,
            idempotency_key=key,
            content=response.content,
        )

    def _spelled_request(
        self, outgoing: Outgoing, *, keyed: bool = True
    ) -> tuple[httpx.Request, str | None, str]:
        """The request of ``outgoing`` in the wire's spelling, the idempotency key it carries
        (none when not ``keyed``: a request built to be sent by hand, :meth:`unsent`) and its
        path on the wire."""
        path = self.spelling.path(outgoing)
        headers: dict[str, str] = dict(outgoing.headers)
        if outgoing.session_token is not None:
            headers[self.names.session_id] = outgoing.session_token
        key = outgoing.idempotency_key if keyed else None
        if keyed and outgoing.method == "POST" and outgoing.partner and key is None:
            key = str(uuid.uuid4())
        if key is not None:
            headers[self.names.idempotency_key] = key
        wait = httpx.USE_CLIENT_DEFAULT if outgoing.timeout is None else outgoing.timeout
        request = self._client.build_request(
            outgoing.method,
            path,
            json=self.spelling.body_out(outgoing.json),
            data=outgoing.data,
            content=outgoing.content,
            headers=headers,
            timeout=wait,
        )
        return request, key, path

    # -- observing: inside the spelling, the wire's answer ------------------------------------

    def _observed(self, outgoing: Outgoing, request: httpx.Request, path: str) -> Outcome:
        """The final attempt of ``request`` (at ``path``, the wire's), one call of the wire log
        (``record=True``), seen by the observers.

        Raises:
            TransportError: no answer came after retries.
        """
        record, method = self.recorder, outgoing.method
        call = record.call(method, path, outgoing.path) if record is not None else contextlib.nullcontext()
        with call:
            outcome = self._with_retries(outgoing, request, path)
            for observe in self.observers:
                observe(outcome)
        return outcome

    # -- retries: around single attempts ------------------------------------------------------

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.config.max_retry_after)
        ceiling = min(self.config.backoff_cap, self.config.backoff_base * (2**attempt))
        return ceiling / 2 + self.config.rng.uniform(0, ceiling / 2)

    def _with_retries(self, outgoing: Outgoing, request: httpx.Request, path: str) -> Outcome:
        """Attempts of ``request`` (of ``outgoing``, at ``path``) until one is final: an answer
        not in ``retry_statuses``, or the last one allowed.

        Raises:
            TransportError: no answer came after retries (the history records it first).
        """
        method = request.method
        auth = self.auth if outgoing.partner else None
        started_at = datetime.now(UTC)
        t0 = time.perf_counter()
        attempt = 0
        while True:
            try:
                response = self._attempt(request, auth)
            except httpx.HTTPError as exc:
                if attempt < self.config.max_retries:
                    attempt, delay = attempt + 1, self._delay(attempt, None)
                    if _log.LOG.isEnabledFor(logging.INFO):
                        _log.retry(method, path, attempt, delay, None, type(exc).__name__)
                    self.config.sleep(delay)
                    continue
                ms = (time.perf_counter() - t0) * 1000
                failed = Outcome(
                    method,
                    path,
                    started_at,
                    ms,
                    attempt,
                    None,
                    session_type=outgoing.session_type,
                    code="connection-error",
                )
                self._record(failed)
                said = f"{method} {path} failed after {attempt + 1} attempt(s): {type(exc).__name__}"
                raise transport_error(said, exc, request.url, self.config.tls) from exc
            if response.status_code in outgoing.retry_statuses and attempt < self.config.max_retries:
                attempt, delay = attempt + 1, self._delay(attempt, _retry_after(response.headers))
                if _log.LOG.isEnabledFor(logging.INFO):
                    _log.retry(method, path, attempt, delay, response.status_code, None)
                self.config.sleep(delay)
                continue
            body = _parse_body(response)
            ms = (time.perf_counter() - t0) * 1000
            kind, kit_path = outgoing.session_type, outgoing.path
            return Outcome(method, path, started_at, ms, attempt, response, body, kind, kit_path=kit_path)

    def _attempt(self, request: httpx.Request, auth: httpx.Auth | None) -> httpx.Response:
        """One request through httpx (and the auth flow, which may send it once more)."""
        return self._client.send(request, auth=auth) if auth else self._client.send(request)

    # -- observers ----------------------------------------------------------------------------

    def _record(self, outcome: Outcome) -> None:
        """One history row for the call, told to the ``call`` hooks."""
        response = outcome.response
        headers = response.headers if response is not None else httpx.Headers()
        code = outcome.code
        if response is not None and code is None and response.status_code >= 400:
            body = outcome.body
            if isinstance(body, Mapping):
                code = str(body.get("code") or body.get("error") or "") or None
        entry = Entry(
            time=outcome.started_at,
            method=outcome.method,
            path=outcome.path,
            status=response.status_code if response is not None else None,
            ms=round(outcome.ms, 2),
            session_type=outcome.session_type,
            code=code,
            request_id=headers.get(self.names.request_id),
            replayed=_replayed(headers, self.names.replayed),
            retries=outcome.retries,
            assumptions=headers.get(self.names.assumptions),
        )
        number = self.history.record(entry)
        if number is not None and self.recorder is not None:
            self.recorder.numbered(number)  # the wire view titles the call as the table numbers it
        for hook in self.config.hooks.call:
            hook(entry)

    def observe_auth(self, response: httpx.Response, ms: float) -> None:
        """The answer the auth flow saw itself: the 401 that makes it fetch a new token."""
        path = response.request.url.path
        path = path[len(self._prefix) :] if path.startswith(self._prefix) else path
        started_at = datetime.now(UTC) - timedelta(milliseconds=ms)  # "time" is when a call started
        outcome = Outcome(response.request.method, path, started_at, ms, 0, response, _parse_body(response))
        self._record(outcome)
        self._check_contract(outcome)

    def _check_contract(self, outcome: Outcome) -> None:
        """Check one answer against the contract; keep its drift (or raise, ``drift="raise"``).

        Raises:
            ContractDrift: the answer drifted and the client was built with ``drift="raise"``.
        """
        mode = self.config.drift
        response, body = outcome.response, outcome.body
        if mode == "off" or response is None:
            return
        injected = isinstance(body, Mapping) and body.get("code") == INJECTED_FAULT
        if self.config.profile.control_plane and injected:
            return
        rows, _ = self.spelling.checked(
            outcome.method,
            outcome.kit_path or outcome.path,
            response.status_code,
            response.headers.raw,
            body,
            has_content=bool(response.content),
        )
        if rows:
            if _log.LOG.isEnabledFor(logging.INFO):
                request_id = response.headers.get(self.names.request_id)
                _log.drift(outcome.method, outcome.path, response.status_code, request_id, rows)
            self.drift.record(rows)
            for hook in self.config.hooks.drift:
                hook(rows)
            seed_drift = [row for row in rows if not row.differs]  # a difference is not drift
            if mode == "raise" and seed_drift:
                raise ContractDrift(seed_drift)

    def _check_version(self, outcome: Outcome) -> None:
        """Keep the version the server served; a pinned client refuses another (A27).

        Raises:
            ApiVersionMismatch: the client pinned a version and the server answered under another.
        """
        response = outcome.response
        version_header = self.names.api_version
        served = response.headers.get(version_header) if response is not None else None
        if response is None or served is None:
            return
        self.served_version = served
        pinned = self.config.api_version
        if pinned and served != pinned and response.status_code != 400:  # a 400: the refusal itself
            method, path = outcome.method, outcome.path
            if _log.LOG.isEnabledFor(logging.WARNING):
                _log.version_mismatch(
                    method, path, pinned, served, response.headers.get(self.names.request_id)
                )
            raise ApiVersionMismatch(
                f"{method} {path}: the client pinned {version_header} {pinned}, "
                f"the server answered under {served}"
            )

    # -- a call by method and path ------------------------------------------------------------

    def request(self, method: str, path: str, **options: Any) -> Reply:
        """:meth:`send` of a call named by its method and path alone (``options``: the fields of
        :class:`~kit._outgoing.Outgoing`)."""
        return self.send(Outgoing(Operation.raw(method, path), **options))
