"""Webhook verification for partners' own servers, and a loopback receiver for the kit's own.

:func:`verify` checks a delivery (the wire contract): the header ``svc-webhook-signature`` is a
detached JWS per RFC 7515 Appendix F (``header..signature``; the raw body, base64url-encoded,
is the signed payload), ES256 only, protected header ``{alg, kid, iat, svc_event_id}`` without
``b64`` or ``crit``; ``kid`` must be in the JWK set, ``svc_event_id`` must equal the body's
``id``, ``|now - iat|`` at most ``max_skew`` seconds, and an id already in ``seen`` is a
duplicate.

Replay protection is the caller's store: ``seen`` has no default, so every caller says what it
de-duplicates against. A back end passes its store of processed event ids (a set, or a
``MutableSet`` over its database); ``seen=None`` does **no** replay check at all — a delivery
sent twice verifies twice.

Example (a partner's endpoint)::

    import kit.webhooks
    seen: set[str] = set()
    jwks = fetch_jwks_once()                 # GET /webhooks/jwks with the partner token
    try:
        event = kit.webhooks.verify(request_body, request_headers, jwks, seen=seen)
    except kit.errors.DuplicateDelivery:
        return 200                           # acknowledged, not processed twice
    except kit.errors.WebhookVerificationError:
        return 400                           # rejected

``seen`` is a set here for brevity; a back end with more than one process passes a store they
share (a ``MutableSet`` over its database), or it de-duplicates nothing across them.

:class:`Receiver` is the client's loopback endpoint (``api.webhooks``): a ``ThreadingHTTPServer``
on 127.0.0.1 (port chosen by the OS, never printed; :mod:`kit._receiver_http`) that logs
nothing, verifies each delivery against the server's clock (the simulator's ``GET /_sim/clock``
in the sim profile, else the machine's) and records the outcome. What anyone on this machine
can send it is bounded: it fetches keys at most once per :data:`KEY_REFRESH_INTERVAL_S`, keeps
the last :data:`MAX_RECEIVED` deliveries, and closes a connection idle for
:data:`IDLE_TIMEOUT_S`.
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, MutableSet
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kit._choices import dialect as dialect_of
from kit._dialect import Dialect
from kit._headers import HEADERS, HeaderNames
from kit._receiver_http import IDLE_TIMEOUT_S, MAX_DELIVERY_BYTES, loopback_server
from kit.crypto import WebhookKeys
from kit.errors import (
    DuplicateDelivery,
    EventMismatch,
    SignatureExpired,
    SignatureMalformed,
    SignatureMissing,
    UnknownSigningKey,
    WebhookTimeout,
    WebhookVerificationError,
)
from kit.models import WebhookEvent

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "IDLE_TIMEOUT_S",
    "KEY_REFRESH_INTERVAL_S",
    "MAX_DELIVERY_BYTES",
    "MAX_RECEIVED",
    "SIGNATURE_HEADER",
    "EventFilter",
    "Receiver",
    "verify",
]

#: The header a delivery's signature comes in (A24).
SIGNATURE_HEADER = HEADERS.signature
#: How often a receiver's server looks whether it was asked to close, which ``close`` waits for
#: (socketserver's default is 0.5 s; benchmarks/bench.py FIXES: "the webhook receiver's server").
_POLL_S = 0.02
#: The receiver fetches the server's keys for a delivery naming an unknown kid at most once in
#: this many seconds; within them such a delivery is refused as unverified (UnknownSigningKey).
KEY_REFRESH_INTERVAL_S = 30.0
#: The receiver keeps this many deliveries (rows of ``events``, verified events), the oldest
#: dropped first.
MAX_RECEIVED = 1000
#: Which events ``wait_for`` may return (``None``: any of the type).
EventFilter = Callable[[WebhookEvent], bool]
EVENT_COLUMNS = [
    "id",
    "type",
    "created_at",
    "received",
    "verified",
    "duplicate",
    "error",
    "kid",
    "resource_id",
]


def _header(headers: Any, name: str) -> str | None:
    getter = getattr(headers, "get", None)
    if getter is not None:
        value = getter(name)
        if value is not None:
            return str(value)
    items = headers.items() if hasattr(headers, "items") else headers
    for key, value in items:
        if str(key).lower() == name:
            return str(value)
    return None


def _epoch(now: datetime | float | int | None) -> float:
    if now is None:
        return time.time()
    if isinstance(now, datetime):
        if now.tzinfo is None:
            raise ValueError("now must be timezone-aware")
        return now.timestamp()
    return float(now)


def verify(
    body: bytes,
    headers: Mapping[str, str] | Any,
    jwks: Mapping[str, Any] | WebhookKeys,
    *,
    seen: MutableSet[str] | None,
    now: datetime | float | None = None,
    max_skew: float | None = None,
    choices: str | os.PathLike[str] | Dialect | None = None,
) -> WebhookEvent:
    """Verify one webhook delivery and return its event.

    ``headers``: any mapping (case-insensitive lookup); ``jwks``: the JWK set from
    ``GET /webhooks/jwks`` (or a prepared :class:`~kit.crypto.WebhookKeys`, faster);
    ``seen`` (required): the replay store, ids already processed — a verified id already in
    it is :class:`~kit.errors.DuplicateDelivery`, a new one is added on success; ``None`` means
    **no replay check**: a replayed delivery verifies again, so pass ``None`` only when the
    caller de-duplicates by event id itself. ``now``: an aware datetime or epoch seconds
    (default: the wall clock; against the simulator pass its clock). ``choices``: the dialect
    file of a server that signs otherwise (A24's header, algorithm and skew; A68's names);
    ``max_skew``: seconds, the dialect's (300 by default) unless given.

    Example::

        >>> verify(b"{}", {}, {"keys": []}, seen=set())
        Traceback (most recent call last):
        ...
        kit.errors.SignatureMissing: no svc-webhook-signature header — reject the delivery; …

    Raises:
        SignatureMissing, SignatureMalformed, SignatureInvalid, EventMismatch,
        SignatureExpired, DuplicateDelivery (all :class:`~kit.errors.WebhookVerificationError`).
    """
    dialect = dialect_of(choices)
    name = HeaderNames.of(dialect).signature
    signature = _header(headers, name) or _header(headers, name.lower())
    if not signature:
        raise SignatureMissing(f"no {name} header")
    algorithm = str(dialect.chosen("A24", "algorithm"))
    keys = jwks if isinstance(jwks, WebhookKeys) else WebhookKeys(jwks, algorithm=algorithm)
    if keys.algorithm != algorithm:
        raise ValueError(f"the keys are for {keys.algorithm}; this dialect signs with {algorithm}")
    if max_skew is None:
        max_skew = float(dialect.chosen("A24", "max_skew_seconds"))
    if not isinstance(body, bytes | bytearray):
        raise TypeError("body must be the raw request bytes (the signature covers them exactly)")
    header = keys.verify_detached(signature.strip(), bytes(body))
    iat = header.get("iat")
    event_id = header.get("svc_event_id")
    if not isinstance(iat, int) or isinstance(iat, bool) or not isinstance(event_id, str):
        raise SignatureMalformed("the protected header needs an integer iat and svc_event_id")
    try:
        event = json.loads(body)
    except ValueError as exc:
        raise EventMismatch("the body is not JSON") from exc
    if not isinstance(event, dict) or event.get("id") != event_id:
        raise EventMismatch("the signed svc_event_id is not the body's id")
    skew = abs(_epoch(now) - iat)
    if skew > max_skew:
        raise SignatureExpired(f"the signature is {skew:.0f} s from now (at most {max_skew:.0f})")
    if seen is not None:
        if event_id in seen:
            raise DuplicateDelivery(f"event {event_id} was delivered before")
        seen.add(event_id)
    return WebhookEvent.from_wire(dialect.body_from_wire(event), kid=header.get("kid"), iat=iat)


def _resource_id(data: Mapping[str, Any]) -> str | None:
    for key in ("card_id", "document_request_id", "transfer_id", "account_id"):
        if key in data:
            return str(data[key])
    return None


class Receiver:
    """A loopback webhook endpoint that verifies and records deliveries.

    ``keys`` gives the current :class:`WebhookKeys`; ``refresh_keys`` is called when a
    delivery names an unknown kid, at most once per :data:`KEY_REFRESH_INTERVAL_S` (within it
    such a delivery is refused as unverified; ``api.webhooks.jwks()`` refreshes at any time);
    ``clock`` returns the server's time (the ``now`` of verification: the simulator's in the
    sim profile); ``choices``: a dialect's signature and names (as :func:`verify`). Deliveries
    failing verification are answered 400 and recorded with the error's class name; duplicates
    are answered 200 and recorded as such. It keeps the last :data:`MAX_RECEIVED` deliveries
    (``frame()``'s rows and the verified events ``wait_for`` looks through), dropping the oldest.
    A ``Content-Length`` that is not one non-negative integer is answered 400
    (``invalid-content-length``), one over :data:`MAX_DELIVERY_BYTES` 413
    (``payload-too-large``), both as RFC 9457 problems, before any of the body is read; a
    connection that sends nothing for :data:`IDLE_TIMEOUT_S` is closed.
    """

    PATH = "/webhooks"

    def __init__(
        self,
        *,
        keys: Callable[[], WebhookKeys],
        clock: Callable[[], datetime],
        refresh_keys: Callable[[], object] | None = None,
        max_skew: float | None = None,
        choices: str | os.PathLike[str] | Dialect | None = None,
    ) -> None:
        self._keys = keys
        self._dialect = dialect_of(choices)
        self._clock = clock
        self._refresh = refresh_keys
        self._max_skew = max_skew
        self._refreshed_at: float | None = None  # monotonic time of the last refresh it made
        self._seen: set[str] = set()
        self._rows: deque[dict[str, Any]] = deque(maxlen=MAX_RECEIVED)
        self._events: deque[WebhookEvent] = deque(maxlen=MAX_RECEIVED)
        self._taken: set[str] = set()
        self._cond = threading.Condition()
        self._server = loopback_server(self._handle, functools.partial(self._answered, b""))
        serve = functools.partial(self._server.serve_forever, poll_interval=_POLL_S)
        self._thread = threading.Thread(target=serve, name="kit-webhooks", daemon=True)
        self._thread.start()

    def __repr__(self) -> str:
        return f"<webhook Receiver on loopback: {len(self._rows)} deliveries>"

    @property
    def url(self) -> str:
        """The URL to subscribe (loopback; the port varies from run to run: do not print it)."""
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}{self.PATH}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _verify(self, body: bytes, headers: Any, now: datetime) -> WebhookEvent:
        try:
            return self._verify_once(body, headers, now)
        except UnknownSigningKey:
            if self._refresh is None or not self._may_refresh():
                raise
            self._refresh()
            return self._verify_once(body, headers, now)

    def _may_refresh(self) -> bool:
        """Whether a refresh is due now (none in the last :data:`KEY_REFRESH_INTERVAL_S`); if so,
        it is counted from now. Called under ``_cond``, one verification at a time."""
        at = time.monotonic()
        if self._refreshed_at is not None and at - self._refreshed_at < KEY_REFRESH_INTERVAL_S:
            return False
        self._refreshed_at = at
        return True

    def _verify_once(self, body: bytes, headers: Any, now: datetime) -> WebhookEvent:
        keys, skew, dialect = self._keys(), self._max_skew, self._dialect
        return verify(body, headers, keys, now=now, seen=self._seen, max_skew=skew, choices=dialect)

    def _answered(self, body: bytes, headers: Any, status: int, started: float) -> None:
        """Called with each delivery and the status it gets, before ``wait_for`` wakes (a
        recording client's receiver writes it to the wire log here)."""

    def _handle(self, body: bytes, headers: Any) -> int:
        started = time.perf_counter()
        try:
            now = self._clock()
        except Exception:
            self._answered(body, headers, 503, started)
            return 503  # cannot judge skew without the server's clock: let it retry
        row: dict[str, Any] = dict.fromkeys(EVENT_COLUMNS)
        row.update(received=now, verified=False, duplicate=False)
        try:
            peek = self._dialect.body_from_wire(json.loads(body))  # as claimed, in the kit's names
            if isinstance(peek, dict):  # verification may still refuse it
                data = peek.get("data")
                row.update(id=peek.get("id"), type=peek.get("type"), created_at=peek.get("created_at"))
                row["resource_id"] = _resource_id(data) if isinstance(data, dict) else None
        except ValueError:
            pass
        status = 200
        event: WebhookEvent | None = None
        with self._cond:  # one verification at a time keeps the seen-set check atomic
            try:
                event = self._verify(body, headers, now)
                row.update(verified=True, kid=event.kid, resource_id=_resource_id(event.data))
            except DuplicateDelivery:
                row.update(duplicate=True, error="DuplicateDelivery")
            except WebhookVerificationError as exc:
                row["error"] = type(exc).__name__
                status = 400
            self._rows.append(row)
            if event is not None:
                self._events.append(event)
            self._answered(body, headers, status, started)
            self._cond.notify_all()
        return status

    def frame(self) -> pd.DataFrame:
        """Received deliveries, oldest first (no ``data`` beyond the resource id)."""
        import pandas as pd

        with self._cond:
            return pd.DataFrame([dict(r) for r in self._rows], columns=EVENT_COLUMNS)

    def reset(self) -> None:
        """Forget everything received (after the simulator was reset)."""
        with self._cond:
            self._rows.clear()
            self._events.clear()
            self._seen.clear()
            self._taken.clear()

    def wait_recorded(self, match: Callable[[dict[str, Any]], bool], timeout: float) -> bool:
        """Wait until a recorded row, verified or not, ``match``-es; whether one did in time."""
        with self._cond:
            return self._cond.wait_for(lambda: any(match(row) for row in self._rows), timeout)

    def wait_for(
        self, event_type: str, *, timeout: float = 5.0, where: EventFilter | None = None
    ) -> WebhookEvent:
        """The first verified event of this type not returned by an earlier ``wait_for``.

        Raises:
            WebhookTimeout: none arrived within ``timeout`` seconds (wall time).
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for event in self._events:
                    if (
                        event.type == event_type
                        and event.id not in self._taken
                        and (where is None or where(event))
                    ):
                        self._taken.add(event.id)
                        return event
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise WebhookTimeout(f"no verified {event_type!r} delivery within {timeout:g} s")
                self._cond.wait(remaining)
