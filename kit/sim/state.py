"""The simulator's state: plain records in dicts, one :class:`State` per app, reset by seed.

Routes change state only after every check has passed, so a refused request leaves it as it
was (the order of checks, ``kit.sim.pipeline``). Nothing here holds clear-text PII: a person
keeps only the KYC questions and answers derived from it. What grows with traffic is a bounded
:class:`~kit.sim.stores.Store` (A50-A58); what a partner can still see is kept.

    >>> state = State(seed=7, clock_start="2025-01-06T09:00:00Z")
    >>> state.ids.next("acc").startswith("acc_")
    True
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

from kit._lazy import resolved_from
from kit.sim.atrest import Sealer
from kit.sim.clock import Clock
from kit.sim.crypto import DeviceId, ECKey, SimKeys
from kit.sim.ids import Ids
from kit.sim.journal import Journal, tracked, tracked_dict
from kit.sim.stores import Bounds, DeliveryLog, Store, by_key, everyone

if TYPE_CHECKING:
    from kit.sim.records import (
        Account,
        Card,
        Delivery,
        DocumentRequest,
        InboundEvent,
        Person,
        Subscription,
        Transfer,
    )


@dataclass
class PartnerToken:
    """A partner access token the simulator issued (A01): its partner and expiry. It is kept
    under the token's digest (``kit.sim.atrest``), never the token."""

    partner: str
    expires_at: datetime
    revoked: bool = False


@dataclass
class Nonce:
    """A nonce handed out with init data (A04), for one session request before it expires."""

    partner: str
    expires_at: datetime
    used: bool = False


@dataclass
class Session:
    """A device-level session (A05, A06): who, which device and key, and its lifetime's times.
    ``token`` is the session token's digest (``kit.sim.atrest``), as its key in the store."""

    token: str
    partner: str
    session_type: str
    strategy: str
    device: DeviceId
    device_key: ECKey
    created_at: datetime
    chain_start: datetime
    last_used: datetime
    account_id: str | None = None
    person_id: str | None = None
    ended: bool = False
    superseded: bool = False


def body_digest(body: Any) -> bytes:
    """A fingerprint of a parsed JSON body: equal bodies, whatever their key order, give equal
    digests. An idempotency record keeps this, not the body, which can be large (A51).

        >>> body_digest({"a": 1, "b": [2]}) == body_digest({"b": [2], "a": 1})
        True
    """
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).digest()


@dataclass
class IdempotencyRecord:
    """A POST answered under an ``Idempotency-Key`` (A20, A51), replayed for the same request."""

    method: str
    path: str
    body: bytes  # body_digest() of the request body
    created_at: datetime
    in_flight: bool = True
    status: int = 0
    response_body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    #: The key id of the :class:`~kit.sim.atrest.Sealer` that sealed ``response_body`` (an
    #: answer carrying a clear token); None: kept as sent.
    sealed_by: str | None = None


@dataclass
class Fault:
    """A fault the control plane injects into matching requests (``POST /_sim/faults``)."""

    fault_id: str
    method: str
    path: str
    status: int | None
    rate: float
    times: int | None
    when: str
    retry_after: int | None
    latency_ms: int | None
    fired: int = 0


class Durable(Protocol):
    """Where a durable simulator writes its state (``kit.sim.durable.StateFile``)."""

    def save(self, state: State) -> None: ...

    async def flush(self, state: State) -> None: ...


@lru_cache(maxsize=8)
def keys_for(seed: int) -> SimKeys:
    """Server keys derived from the seed (cached: RSA generation takes a fifth of a second).

    The last few seeds only: a shared server reset to seed after seed (and its crypto
    workers, which derive the keys of each token's seed) must not keep every seed's keys.
    """
    return SimKeys.from_seed(seed)


@lru_cache(maxsize=4)
def keys_of_secret(secret: bytes) -> SimKeys:
    """Server keys derived from a server's secret (``Settings.secret_keys``), kept in this
    process only (never in the key cache): a reset or a restore keeps them."""
    return SimKeys.from_secret(secret)


#: The stores a partner can still see through the API: never bounded.
_KEPT = ("accounts", "persons", "cards", "transfers", "document_requests")
#: Every home of records, bounded or kept, in the order a state file lists them.
HOMES = (
    "partner_tokens",
    "nonces",
    "sessions",
    "session_starts",
    "inbound_events",
    "subscriptions",
    "deliveries",
    "idempotency",
    "faults",
    *_KEPT,
)


class State:
    """Everything the simulator knows. :meth:`reset` returns it to the seeded start.

    ``bounds`` (default: the register's, A50-A58) bound the stores that grow with traffic;
    ``wall_clock`` makes its clock follow the machine's (A46). ``sealer`` is the server's secret
    (``kit.sim.atrest``; default: one of this process); with ``secret_keys`` the server's keys
    come from it, else from the seed.
    """

    def __init__(
        self,
        seed: int,
        clock_start: str,
        bounds: Bounds | None = None,
        *,
        wall_clock: bool = False,
        uuid_ids: bool = False,
        sealer: Sealer | None = None,
        secret_keys: bool = False,
    ) -> None:
        self.clock = Clock(clock_start, wall=wall_clock)
        self.uuid_ids = uuid_ids  # ids as UUIDs (A60)
        self.bounds = bounds or Bounds.from_register()
        #: Set by a durable simulator (``kit.sim.durable``): what changed, and where it goes.
        self.journal: Journal | None = None
        self.file: Durable | None = None
        #: The server's secret (``kit.sim.atrest``): it digests tokens, seals stored answers that
        #: carry a clear token and, with ``secret_keys``, gives the keys. A server with a state
        #: file has the one kept beside it.
        self.sealer = sealer or Sealer.in_memory()
        self.secret_keys = secret_keys
        self.reset(seed)

    def attach(self, journal: Journal, file: Durable) -> None:
        """Make the state durable: its homes tell ``journal`` what they touch, and
        :meth:`commit` and :meth:`flush` write to ``file``. Starts afresh (a reset)."""
        self.journal, self.file = journal, file
        self.reset(self.seed)

    def commit(self) -> None:
        """Write what changed, now (a durable simulator; in memory, nothing to do)."""
        if self.file is not None:
            self.file.save(self)

    async def flush(self) -> None:
        """Write what changed, sharing the transaction of the requests finishing now; return
        once it is on disk (a durable simulator; in memory, nothing to do)."""
        if self.file is not None:
            await self.file.flush(self)

    def reset(self, seed: int) -> None:
        self.seed = seed
        self.generation = getattr(self, "generation", 0) + 1
        self.clock.reset()
        self.ids = Ids(seed, uuids=self.uuid_ids)
        self.random = random.Random(f"kit-sim:{seed}:faults")
        self.keys = keys_of_secret(self.sealer.derive("server-keys")) if self.secret_keys else keys_for(seed)
        b = self.bounds
        # Bounded: they grow with traffic and nobody reads them back for long (A50-A58).
        self.partner_tokens: Store[str, PartnerToken] = Store(b.partner_tokens)
        self.nonces: Store[str, Nonce] = Store(b.nonces)
        self.sessions: Store[str, Session] = Store(b.sessions)
        self.session_starts: Store[tuple[str, str], list[datetime]] = Store(b.rate_windows, by_key)
        self.inbound_events: Store[str, InboundEvent] = Store(b.inbound_events)
        self.subscriptions: Store[str, Subscription] = Store(b.subscriptions)
        self.deliveries: DeliveryLog[Delivery] = DeliveryLog(b.deliveries)
        self.idempotency: Store[tuple[str, str], IdempotencyRecord] = Store(b.idempotency_keys, by_key)
        self.faults: Store[str, Fault] = Store(b.faults, everyone)
        # Kept: what a partner can still see.
        self.accounts: dict[str, Account] = {}
        self.persons: dict[str, Person] = {}
        self.cards: dict[str, Card] = {}
        self.transfers: dict[str, Transfer] = {}
        self.document_requests: dict[str, DocumentRequest] = {}
        journal = self.journal
        if journal is not None:  # a durable simulator: the same homes, tracked
            journal.everything = True
            for name in HOMES:
                home = getattr(self, name)
                setattr(
                    self, name, tracked_dict(journal, name) if name in _KEPT else tracked(journal, name, home)
                )

    @property
    def now(self) -> datetime:
        return self.clock.now

    def stores(self) -> dict[str, dict[str, Any]]:
        """Each store's size, its bound per partner (None: kept) and how many it forgot.

        >>> State(7, "2025-01-06T09:00:00Z").stores()["nonces"]
        {'size': 0, 'bound': 1000, 'dropped': 0}
        """
        out: dict[str, dict[str, Any]] = {}
        for name, store in vars(self).items():
            if isinstance(store, Store):
                out[name] = {"size": len(store), "bound": store.bound, "dropped": store.dropped}
            elif name in _KEPT:
                out[name] = {"size": len(store), "bound": None, "dropped": 0}
        return dict(sorted(out.items()))

    def sweep(self, session_expires_at: Callable[[Session], datetime], rate_window: timedelta) -> int:
        """Forget what has gone stale on the clock (run when it moves); how many records.

        Nothing swept changes an answer inside the bounds: an expired nonce or token is
        refused the same whether kept or not, and so is an idempotency key past its window
        (A20), an ended session or a device's rate window quiet for ``rate_window`` (A32, the
        personality's: an overlay may choose another). Sessions are kept
        until ``session_grace_seconds`` after they stopped being valid (A52), finished
        deliveries ``delivery_keep_seconds`` after their last attempt (A53).
        """
        now, b = self.now, self.bounds
        grace = timedelta(seconds=b.session_grace_seconds)
        keep = timedelta(seconds=b.delivery_keep_seconds)
        window = timedelta(seconds=b.idempotency_seconds)

        def delivery_done(d: Delivery) -> bool:
            return now - (d.attempts[-1].at if d.attempts else d.first_at) >= keep

        def key_done(r: IdempotencyRecord) -> bool:
            return not r.in_flight and now - r.created_at >= window

        return (
            self.nonces.sweep(lambda n: now >= n.expires_at, in_order=True)
            + self.partner_tokens.sweep(lambda t: t.revoked or now >= t.expires_at)
            + self.idempotency.sweep(key_done, in_order=True)
            + self.sessions.sweep(lambda s: s.ended or now >= session_expires_at(s) + grace)
            + self.session_starts.sweep(lambda w: not w or now - w[-1] >= rate_window)
            + self.deliveries.sweep(delivery_done)
        )

    # Lookups scoped to a partner: another partner's record is simply not there (A30).
    def account(self, partner: str, account_id: str) -> Account | None:
        found = self.accounts.get(account_id)
        return found if found is not None and found.partner == partner else None

    def person(self, partner: str, person_id: str) -> Person | None:
        found = self.persons.get(person_id)
        return found if found is not None and found.partner == partner else None

    def card(self, partner: str, card_id: str) -> Card | None:
        found = self.cards.get(card_id)
        return found if found is not None and found.partner == partner else None


#: The kept records, defined in :mod:`kit.sim.records` when one is first used.
_RECORDS = frozenset(
    {"Account", "Attempt", "Card", "Delivery", "DocumentRequest", "InboundEvent", "Person", "Subscription"}
    | {"Transfer"}
)


__getattr__, __dir__ = resolved_from("kit.sim.records", _RECORDS, globals())
