"""Webhook subscriptions and received events.

In the ``sim`` profile the first use of ``api.webhooks`` starts a loopback
:class:`~kit.webhooks.Receiver` and subscribes it to ``card.closed``,
``document_request.created`` and ``document_request.completed`` (not the deprecated
``card.expired``; subscribe it yourself to see it). Subscribing on first use, not at
connect, keeps a plain ``connect()`` to one token request and no background thread.

In any other profile the receiver starts only when asked (:meth:`Webhooks.listen`) and judges
signing times against the machine's clock. It listens on this machine's loopback, so only an
API on this machine can deliver to it (``kit serve --no-control`` standing in for a sandbox);
a partner's remote sandbox delivers to the partner's own server, which verifies with
:func:`kit.webhooks.verify`.

A client made with ``record=True`` records each delivery its receiver gets (headers and body,
redacted, and the status it answered) in its wire log (:mod:`kit._wire`), beside its calls.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, MutableSet
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kit import register
from kit._requestor import Requestor
from kit._resources._base import Resource
from kit.crypto import WebhookKeys
from kit.errors import UnknownSigningKey, WebhookTimeout
from kit.models import Subscription, WebhookEvent, parse_time
from kit.webhooks import KEY_REFRESH_INTERVAL_S, EventFilter, Receiver, verify

if TYPE_CHECKING:
    import pandas as pd

    from kit._wire import Recorder

__all__ = ["AUTO_EVENTS", "Webhooks"]

AUTO_EVENTS = ("card.closed", "document_request.created", "document_request.completed")


def auto_events(api_version: str | None) -> list[str]:
    """:data:`AUTO_EVENTS` in the names of ``api_version``: under the version before 1.2.0 (A27)
    without the events change 6 added and with the names it corrected, as its record says."""
    previous = [v for v in register.value("A27")["versions"] if v != register.fact("version")]
    if api_version not in previous:
        return list(AUTO_EVENTS)
    change = register.statement("change.6")
    return [change["previously"].get(e, e) for e in AUTO_EVENTS if e not in change["added"]]


class _RecordingReceiver(Receiver):
    """The loopback receiver of a recording client: each delivery also goes to the wire log."""

    def __init__(self, wire: Recorder, **options: Any) -> None:
        self._wire = wire
        super().__init__(**options)

    def _answered(self, body: bytes, headers: Any, status: int, started: float) -> None:
        ms = (time.perf_counter() - started) * 1000
        self._wire.delivery(self.url, list(headers.items()), body, status, ms)


class Webhooks(Resource):
    """``api.webhooks``: subscribe, fetch signing keys, and see what the loopback receiver got."""

    def __init__(self, requestor: Requestor) -> None:
        super().__init__(requestor)
        self._dialect = requestor.config.dialect
        self._keys = WebhookKeys(algorithm=self._dialect.chosen("A24", "algorithm"))
        self._receiver: Receiver | None = None
        self._subscription: Subscription | None = None
        self._lock = threading.Lock()
        self._verified_keys_at: float | None = None  # monotonic time verify last fetched keys
        requestor.on_reset(self._forget)  # the simulator's reset drops every subscription

    def __repr__(self) -> str:
        state = "subscribed" if self._subscription else "not subscribed"
        return f"<Webhooks resource ({state})>"

    def subscribe(
        self, url: str, events: Iterable[str], *, idempotency_key: str | None = None
    ) -> Subscription:
        """Subscribe a URL to webhook events.

        Example::

            >>> api.webhooks.subscribe("http://127.0.0.1:9/hook", ["card.closed"])  # doctest: +SKIP

        Raises:
            UnknownEventType, EventRenamed (``person.document_request.*``), ValidationError,
            WebhookUrlNotAllowed.
        """
        names = list(events)
        reply = self._requestor.send(
            "subscribe_webhooks",
            json={"url": url, "events": names},
            session=None,
            idempotency_key=idempotency_key,
            submitted={"unknown-event-type": ", ".join(names)},
        )
        return Subscription.from_wire(reply.body or {})

    def jwks(self) -> dict[str, Any]:
        """The server's public webhook signing keys (``GET /webhooks/jwks``)."""
        reply = self._requestor.send("webhook_keys", session=None)
        body = dict(reply.body or {})
        self._keys.update(body)
        return body

    def clock(self) -> datetime:
        """The time a delivery's signing time is judged against — ``now`` for
        :func:`kit.webhooks.verify` in a receiver of your own: the simulator's clock in the sim
        profile (it moves only through the control plane, A45), else the machine's (a partner's
        server uses its own clock). Not a call of the history or the wire log."""
        return self._requestor.server_clock()

    def verify(self, body: bytes, headers: Any, *, seen: MutableSet[str] | None) -> WebhookEvent:
        """Verify a delivery your own server received, with this client's settings: the keys of
        ``GET /webhooks/jwks`` (fetched on first use, and again for a key id they lack, at most
        once per :data:`~kit.webhooks.KEY_REFRESH_INTERVAL_S`), the signature as the client's
        configuration describes it (its dialect file, ``PARTNER_API_CHOICES``: header, algorithm,
        skew) and the signing time judged against :meth:`clock`. ``seen``: the replay store, as
        :func:`kit.webhooks.verify`, which this calls: the event id is added as this returns,
        before the caller processes the event (if processing fails, discard the id, so that the
        service's retry is processed; answer a :class:`~kit.errors.DuplicateDelivery` with a 2xx,
        since the service retries anything else).

        Example::

            >>> event = api.webhooks.verify(body, request.headers, seen=seen)  # doctest: +SKIP

        Raises:
            WebhookVerificationError: as :func:`kit.webhooks.verify` (DuplicateDelivery a replay).
        """
        if not self._keys.kids:
            self._fetch_keys()
        try:
            return verify(body, headers, self._keys, seen=seen, now=self.clock(), choices=self._dialect)
        except UnknownSigningKey:
            if not self._fetch_keys():
                raise
            return verify(body, headers, self._keys, seen=seen, now=self.clock(), choices=self._dialect)

    def _fetch_keys(self) -> bool:
        """Fetch the signing keys for :meth:`verify` unless it did in the last
        :data:`~kit.webhooks.KEY_REFRESH_INTERVAL_S` (what a stranger's deliveries can cost);
        whether it fetched."""
        at = time.monotonic()
        if self._verified_keys_at is not None and at - self._verified_keys_at < KEY_REFRESH_INTERVAL_S:
            return False
        self._verified_keys_at = at
        self.jwks()
        return True

    # -- the loopback receiver ----------------------------------------------------------------

    @property
    def reachable(self) -> bool:
        """Whether the API can deliver to the loopback receiver: the sim profile, or an API on
        this machine's loopback (``kit serve --no-control`` standing in for a sandbox)."""
        config = self._requestor.config
        return config.profile.reaches_receiver(config.base_url)

    @property
    def listening(self) -> bool:
        """Whether the loopback receiver has been started (:meth:`listen`)."""
        return self._receiver is not None

    def _ensure_receiver(self) -> Receiver:
        with self._lock:
            if self._receiver is None:
                wire = self._requestor.wire
                options: dict[str, Any] = {
                    "keys": lambda: self._keys,
                    "clock": self._requestor.server_clock,
                    "refresh_keys": self.jwks,
                    "choices": self._dialect,
                }
                self._receiver = Receiver(**options) if wire is None else _RecordingReceiver(wire, **options)
            if self._subscription is None:
                self.jwks()
                events = auto_events(self._requestor.config.api_version)
                self._subscription = self.subscribe(self._receiver.url, events)
            return self._receiver

    def _forget(self) -> None:
        """The simulator was reset: subscriptions are gone. A receiver that was listening
        subscribes again at once, so events right after a reset are not missed."""
        with self._lock:
            self._subscription = None
            listening = self._receiver is not None
            if self._receiver is not None:
                self._receiver.reset()
        if listening:
            self._ensure_receiver()

    def listen(self) -> Subscription:
        """Start the loopback receiver and subscribe it now; return the subscription.

        In the sim profile the first use of ``api.webhooks`` does it for you. Elsewhere only an
        API on this machine can reach the receiver (see the module docstring)."""
        self._ensure_receiver()
        assert self._subscription is not None
        return self._subscription

    @property
    def events(self) -> pd.DataFrame:
        """Deliveries received: id, type, created_at, received (server time), verified…"""
        frame = self._ensure_receiver().frame()
        if not frame.empty:
            frame["created_at"] = frame["created_at"].map(parse_time)
        return frame

    def wait_for(
        self, event_type: str, *, timeout: float = 5.0, where: EventFilter | None = None
    ) -> WebhookEvent:
        """Wait for a verified delivery of this type not returned before.

        Example::

            >>> api.webhooks.wait_for("card.closed", timeout=5).data["close_reason"]  # doctest: +SKIP
            'lost'

        Raises:
            WebhookTimeout: nothing arrived in time.
        """
        return self._ensure_receiver().wait_for(event_type, timeout=timeout, where=where)

    def wait_received(
        self, event_type: str, *, resource_id: str | None = None, timeout: float = 5.0
    ) -> pd.DataFrame:
        """Wait until the receiver has recorded a delivery of this type (about ``resource_id``,
        if given: a card, a document request…), verified or not, unlike :meth:`wait_for`, which
        hands over verified events only; return the rows of :attr:`events` that match. The
        resource is read from the body as sent, so an unsigned delivery matches too.

        Example::

            >>> api.webhooks.wait_received("card.closed", resource_id=card.card_id)  # doctest: +SKIP

        Raises:
            WebhookTimeout: none was recorded within ``timeout`` seconds (wall time).
        """

        def match(row: Mapping[str, Any]) -> bool:
            return row["type"] == event_type and resource_id in (None, row["resource_id"])

        if not self._ensure_receiver().wait_recorded(match, timeout):
            about = f" about {resource_id}" if resource_id else ""
            raise WebhookTimeout(f"no {event_type!r} delivery{about} recorded within {timeout:g} s")
        frame = self.events
        return frame[[match(row) for row in frame.to_dict("records")]]

    def close(self) -> None:
        if self._receiver is not None:
            self._receiver.close()
            self._receiver = None
