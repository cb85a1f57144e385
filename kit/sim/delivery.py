"""Webhook delivery: signed, in the background, retried on the simulator clock (A24, A25).

The first attempt goes out at once. A non-2xx answer, a connection error or an attempt past its
one deadline is a failure; retries fall due at the first attempt plus each retry offset of
simulator time, so they happen when the clock is advanced, or as the wall clock passes (A46).
Every attempt is recorded, in a log bounded per partner that forgets finished deliveries first
(A53, ``kit.sim.stores``). Before each, the target is checked again (A39): off loopback a name
that now resolves to a private address is not posted to (the attempt fails, target-not-allowed).

Only an answer's status counts. Its body is streamed, and read only until
:data:`ANSWER_READ_BYTES` of it are in; the connection is then closed on the rest, so a target
that answers without end holds neither memory nor the attempt. The deadline, :data:`TIMEOUT_S`,
covers the whole attempt (the target's check, connecting, sending, the answer's head and what is
read of its body), not each read: a target dripping its answer byte by byte cannot stretch it.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import httpx

from kit import register
from kit._http import async_http_client
from kit.sim import versions
from kit.sim.asgi import decode_json, encode_json
from kit.sim.clock import format_time
from kit.sim.crypto import Payloads
from kit.sim.guard import webhook_target_refusal
from kit.sim.settings import Settings
from kit.sim.state import State

if TYPE_CHECKING:
    from kit.sim.records import Delivery

_RETRY = register.value("A25")
RETRY_OFFSETS: list[int] = list(_RETRY["retry_offsets_seconds"])
#: One attempt's deadline, for all of it (A25).
TIMEOUT_S = float(_RETRY["timeout_seconds"])
#: How much of an answer's body an attempt reads before it stops (A25): once it holds this many
#: bytes it reads no more (the socket read that brought them takes at most 64 KiB, httpcore's).
ANSWER_READ_BYTES = int(_RETRY["answer_read_bytes"])
DEPRECATION = register.value("A03")["deprecation"]
DEPRECATED_EVENTS = frozenset(register.fact("deprecated_webhook_events"))
EVENTS = frozenset(register.fact("webhook_events"))


class DeliveryEngine:
    """Creates deliveries for events and runs their attempts, for the simulator's ``state``.

    ``version`` is the API version the event bodies name. Attempts run as tasks of the running
    event loop; :meth:`aclose` cancels them.

        >>> engine = DeliveryEngine(state, "1.2.0-20221215")  # doctest: +SKIP
        >>> engine.emit("sim-partner", "card.closed", card)  # doctest: +SKIP
        'evt_…'
    """

    def __init__(
        self, state: State, version: str, settings: Settings | None = None, payloads: Payloads | None = None
    ) -> None:
        self.state = state
        self.version = version
        self.settings = settings or Settings()  # whose targets are allowed (A39)
        #: How deliveries are spelled and signed (A24's header and algorithm, A68's names): the
        #: personality's dialect's, resolved once from the settings' choices.
        self.payloads = payloads or Payloads()
        self._client: httpx.AsyncClient | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._resuming: set[asyncio.Task[None]] = set()  # run_due after a load (it awaits _tasks)
        self._due = asyncio.Lock()  # the control plane and the wall clock may both run retries

    def emit(self, partner: str, event_type: str, data: dict[str, Any]) -> str:
        """Record ``event_type`` for the partner's subscriptions to it; returns its ``evt_`` id.

        Raises ValueError for an event type the spec does not list (``webhook_events``).
        """
        if event_type not in EVENTS:
            raise ValueError(f"{event_type!r} is not a webhook event of the spec")
        from kit.sim.records import Delivery  # defined by the first event, not by a first session

        state = self.state
        event_id = state.ids.next("evt")
        bodies: dict[str, bytes] = {}  # by version: a subscription gets its own version's (A27)
        for sub in state.subscriptions.values():
            if sub.partner != partner:
                continue
            name = versions.webhook_name(event_type, sub.api_version)  # change 6
            if name is None or name not in sub.events:
                continue
            body = bodies.get(sub.api_version)
            if body is None:
                body = bodies[sub.api_version] = encode_json(
                    self.payloads.seal(
                        {
                            "id": event_id,
                            "type": name,
                            "api_version": sub.api_version,
                            "created_at": format_time(state.now),
                            "data": versions.event_data(event_type, data, sub.api_version),
                        }
                    ),
                    ascii_only=True,
                )
            delivery = Delivery(
                delivery_id=f"{event_id}:{sub.subscription_id}",
                event_id=event_id,
                event_type=name,
                subscription_id=sub.subscription_id,
                partner=partner,
                url=sub.url,
                body=body,
                first_at=state.now,
                deprecated=versions.webhook_deprecated(event_type, sub.api_version),
                next_at=state.now,
            )
            state.deliveries[delivery.delivery_id] = delivery  # the log is bounded (A53)
            self._spawn(delivery)
        return event_id

    def _spawn(self, delivery: Delivery) -> None:
        delivery.in_progress = True
        task = asyncio.get_running_loop().create_task(self._attempt(delivery))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _attempt(self, delivery: Delivery) -> None:
        delivery.in_progress = True
        generation = self.state.generation
        at = delivery.next_at or self.state.now
        keys = self.state.keys
        names = self.payloads.headers
        headers = {
            "content-type": "application/json",
            names.signature: keys.sign_detached(
                delivery.body,
                iat=int(at.timestamp()),
                event_id=delivery.event_id,
                algorithm=self.payloads.signing_algorithm,
            ),
        }
        version = self._version_of(delivery)
        if version is not None:  # the version the subscription is pinned to (A27)
            headers[names.api_version] = version
        if delivery.deprecated:
            headers["Deprecation"] = DEPRECATION
        status: int | None = None
        error: str | None = None
        try:
            async with asyncio.timeout(TIMEOUT_S):  # one deadline for the whole attempt (A25)
                if await webhook_target_refusal(delivery.url, self.settings) is not None:
                    error = "target-not-allowed"  # checked again at each attempt (A39)
                else:
                    status = await self._post(delivery.url, delivery.body, headers)
        except (TimeoutError, httpx.TimeoutException):
            error = "timeout"
        except httpx.HTTPError as exc:
            error = type(exc).__name__
        finally:
            delivery.in_progress = False
        if generation != self.state.generation:
            return  # the simulator was reset meanwhile
        from kit.sim.records import Attempt

        delivery.attempts.append(Attempt(at, status, error))
        if status is not None and 200 <= status < 300:
            delivery.status, delivery.next_at = "delivered", None
        elif len(delivery.attempts) > len(RETRY_OFFSETS):
            delivery.status, delivery.next_at = "failed", None
        else:
            offset = RETRY_OFFSETS[len(delivery.attempts) - 1]
            delivery.next_at = delivery.first_at + timedelta(seconds=offset)
        if delivery.status != "pending":
            self.state.deliveries.finished(delivery.delivery_id)  # first to go beyond the bound (A53)
        self.state.deliveries.touch(delivery.delivery_id)
        self.state.commit()  # a durable simulator writes the attempt (kit serve --state)

    def _version_of(self, delivery: Delivery) -> str | None:
        """The API version ``delivery`` is of: its body's ``api_version`` (A27), which its
        subscription was pinned to (read from the body: the subscription may be gone)."""
        try:
            event = decode_json(delivery.body, constants=True)
        except ValueError:
            return None
        if not isinstance(event, dict):
            return None
        version = self.payloads.open(event).get("api_version")
        return version if isinstance(version, str) else None

    async def _post(self, url: str, body: bytes, headers: dict[str, str]) -> int:
        """POST the delivery; its answer's status. The body is read only until it holds
        :data:`ANSWER_READ_BYTES` (a short answer read to its end keeps the connection for the
        next attempt; leaving the block with more unread closes it)."""
        async with self.client.stream("POST", url, content=body, headers=headers) as response:
            held = 0
            async for chunk in response.aiter_raw():
                held += len(chunk)
                if held >= ANSWER_READ_BYTES:
                    break
            return response.status_code

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            # No redirects followed (A25); no proxies from the environment.
            self._client = async_http_client(timeout=TIMEOUT_S, trust_env=False)
        return self._client

    async def settle(self) -> None:
        """Wait for attempts in flight (each bounded by the time-out)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def run_due(self) -> None:
        """Run every retry that has fallen due on the simulator clock, in time order."""
        async with self._due:
            await self._run_due()

    async def _run_due(self) -> None:
        await self.settle()
        state = self.state
        while True:
            due = [
                d
                for _, d in state.deliveries.pending()
                if d.status == "pending"
                and not d.in_progress
                and d.next_at is not None
                and d.next_at <= state.now
            ]
            if not due:
                return
            first = min(d.next_at for d in due if d.next_at is not None)
            batch = [d for d in due if d.next_at == first]
            await asyncio.gather(*(self._attempt(d) for d in batch))

    def resume(self) -> None:
        """Send, in the background, what was pending when the state was loaded or restored."""
        task = asyncio.get_running_loop().create_task(self.run_due())
        self._resuming.add(task)
        task.add_done_callback(self._resuming.discard)

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        self._tasks.clear()

    async def aclose(self) -> None:
        for task in list(self._resuming):
            task.cancel()
        self.cancel_all()
        if self._client is not None:
            await self._client.aclose()
            self._client = None
