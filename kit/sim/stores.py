"""Bounded stores: what grows with traffic keeps a bounded number of records per partner.

A shared ``kit serve`` stays up for days and its clock moves only when someone moves it, so
nothing that expires on simulator time ever expires on its own. Each store that grows with
traffic (nonces, idempotency keys, sessions, webhook deliveries, partner tokens, rate windows,
inbound events, subscriptions, faults) is a :class:`Store`: a dict for reading, that keeps
at most ``bound`` records per partner client and forgets the oldest beyond it, at insert,
in O(1). The time-based half (expired nonces and tokens, idempotency keys past their window,
sessions past their grace, finished deliveries past their day) is :meth:`Store.sweep`, run
when the clock moves (``State.sweep``). The bounds are register entries A50-A58
(:class:`Bounds`); what a partner can still see (accounts, persons, cards, transfers,
document requests) is kept in plain dicts.

    >>> store = Store(2)
    >>> for n in range(3):
    ...     store[f"k{n}"] = Record("p")
    >>> list(store), store.dropped
    (['k1', 'k2'], 1)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, ItemsView, Iterator, KeysView, ValuesView
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from kit import register

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
_MISSING: Any = object()


class Bounds(NamedTuple):
    """How much each store keeps (per partner client unless said), from the register.

    >>> Bounds.from_register().nonces
    1000
    """

    nonces: int  # A50: outstanding nonces per partner
    idempotency_keys: int  # A51: keys per partner
    idempotency_seconds: int  # A20: each key kept this long (24 h)
    sessions: int  # A52: sessions per partner, valid or not
    session_grace_seconds: int  # A52: kept this long after they stop being valid
    deliveries: int  # A53: delivery log per partner (finished ones go first)
    delivery_keep_seconds: int  # A53: a finished delivery is kept this long after its last attempt
    partner_tokens: int  # A54: tokens per partner (expired and revoked ones go when the clock moves)
    rate_windows: int  # A55: devices whose session rate is tracked, per partner
    inbound_events: int  # A56: inbound events kept per partner
    subscriptions: int  # A57: webhook subscriptions per partner
    faults: int  # A58: injected faults, all partners together

    @classmethod
    def from_register(cls) -> Bounds:
        """The bounds the register gives (A50-A58, and A20's window)."""
        v = register.value
        return cls(
            nonces=int(v("A50")["max_outstanding_per_partner"]),
            idempotency_keys=int(v("A51")["max_keys_per_partner"]),
            idempotency_seconds=int(v("A20")["retention_seconds"]),
            sessions=int(v("A52")["max_sessions_per_partner"]),
            session_grace_seconds=int(v("A52")["kept_after_expiry_seconds"]),
            deliveries=int(v("A53")["max_deliveries_per_partner"]),
            delivery_keep_seconds=int(v("A53")["kept_after_last_attempt_seconds"]),
            partner_tokens=int(v("A54")["max_tokens_per_partner"]),
            rate_windows=int(v("A55")["max_devices_per_partner"]),
            inbound_events=int(v("A56")["max_events_per_partner"]),
            subscriptions=int(v("A57")["max_subscriptions_per_partner"]),
            faults=int(v("A58")["max_faults"]),
        )

    def replace(self, **changes: int) -> Bounds:
        """A copy with some bounds changed (tests use small ones)."""
        unknown = set(changes) - set(self._fields)
        if unknown:
            raise TypeError(f"no such bound: {', '.join(sorted(unknown))}")
        return self._replace(**changes)


@dataclass
class Record:
    """Anything with a ``partner`` (the doctests' record)."""

    partner: str


def by_record(key: Any, record: Any) -> str:
    """The partner of a record that names it (``record.partner``)."""
    return str(record.partner)


def by_key(key: Any, record: Any) -> str:
    """The partner of a record keyed by ``(partner, …)``."""
    return str(key[0])


def everyone(key: Any, record: Any) -> str:
    """One group for all partners (the control plane's faults)."""
    return ""


class Store(Generic[K, V]):
    """A dict of records that keeps at most ``bound`` per partner (None: no bound).

    Reading is a dict's (``get``, ``[]``, ``in``, ``values()``, ``len``); adding a new key
    beyond the bound forgets the partner's oldest record (:meth:`_victim`) and counts it in
    ``dropped``. Replacing an existing key keeps its place. ``partner_of(key, record)`` names
    the partner (:func:`by_record`, :func:`by_key`, :func:`everyone`).

        >>> tokens = Store(1)
        >>> tokens["a"] = Record("p"); tokens["b"] = Record("q"); tokens["c"] = Record("p")
        >>> sorted(tokens)
        ['b', 'c']
    """

    def __init__(self, bound: int | None, partner_of: Callable[[Any, Any], str] = by_record) -> None:
        if bound is not None and bound < 1:
            raise ValueError("a bound keeps at least one record")
        self.bound = bound
        self.dropped = 0  # records forgotten by the bound or a sweep, since the last reset
        self._partner_of = partner_of
        self._data: dict[K, V] = {}
        self._order: dict[str, OrderedDict[K, None]] = {}

    # -- reading: a dict's ----------------------------------------------------------------------

    def get(self, key: K, default: Any = None) -> Any:
        return self._data.get(key, default)

    def __getitem__(self, key: K) -> V:
        return self._data[key]

    def peek(self, key: K) -> V | None:
        """``get`` for a reader that changes nothing: a durable simulator need not write the
        record again (``kit.sim.journal``)."""
        return self._data.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self) -> Iterator[K]:
        return iter(self._data)

    def keys(self) -> KeysView[K]:
        return self._data.keys()

    def values(self) -> ValuesView[V]:
        return self._data.values()

    def items(self) -> ItemsView[K, V]:
        return self._data.items()

    # -- writing --------------------------------------------------------------------------------

    def __setitem__(self, key: K, record: V) -> None:
        if key in self._data:
            self._data[key] = record
            return
        partner = self._partner_of(key, record)
        self._data[key] = record
        count = self._add(partner, key)
        if self.bound is not None and count > self.bound:
            self._forget(partner, self._victim(partner))

    def setdefault(self, key: K, default: V) -> V:
        found = self._data.get(key, _MISSING)
        if found is _MISSING:
            self[key] = found = default
        return found  # type: ignore[no-any-return]

    def pop(self, key: K, default: Any = _MISSING) -> Any:
        record = self._data.pop(key, _MISSING)
        if record is _MISSING:
            if default is _MISSING:
                raise KeyError(key)
            return default
        self._remove(self._partner_of(key, record), key)
        return record

    def __delitem__(self, key: K) -> None:
        self.pop(key)

    def clear(self) -> None:
        self._data.clear()
        self._order.clear()

    def touch(self, key: K) -> None:
        """Say a record was changed in place outside a lookup (a durable simulator writes it;
        in memory there is nothing to do, ``kit.sim.journal``)."""

    def sweep(self, stale: Callable[[V], bool], *, in_order: bool = False) -> int:
        """Forget every record ``stale`` says is stale; how many.

        ``in_order``: a partner's records go stale oldest first (an expiry at a fixed time
        after insertion), so each partner's scan stops at its first fresh record.
        """
        gone: list[tuple[str, K]] = []
        for partner, order in self._order.items():
            for key in order:
                if stale(self._data[key]):
                    gone.append((partner, key))
                elif in_order:
                    break
        for partner, key in gone:
            self._forget(partner, key)
        return len(gone)

    # -- the per-partner order (DeliveryLog keeps its own) ----------------------------------------

    def _add(self, partner: str, key: K) -> int:
        """Index a new key under its partner; the partner's count."""
        order = self._order.get(partner)
        if order is None:
            order = self._order[partner] = OrderedDict()
        order[key] = None
        return len(order)

    def _remove(self, partner: str, key: K) -> None:
        order = self._order.get(partner)
        if order is not None:
            order.pop(key, None)
            if not order:
                del self._order[partner]

    def _victim(self, partner: str) -> K:
        """The record the bound forgets: the partner's oldest."""
        return next(iter(self._order[partner]))

    def _forget(self, partner: str, key: K) -> None:
        del self._data[key]
        self._remove(partner, key)
        self.dropped += 1


class DeliveryLog(Store[str, V]):
    """The webhook delivery log: beyond the bound, a partner's oldest *finished* delivery
    goes first; only when all of them are pending does the oldest pending one (A53).

    The engine calls :meth:`finished` when a delivery is delivered or failed;
    :meth:`pending` lists the rest (what retries may still fall due for). :meth:`sweep`
    looks at finished deliveries only: a pending one is never swept.

        >>> log = DeliveryLog(2)
        >>> log["a"] = Record("p"); log["b"] = Record("p"); log.finished("b")
        >>> log["c"] = Record("p")
        >>> sorted(log), [k for k, _ in log.pending()]
        (['a', 'c'], ['a', 'c'])
    """

    def __init__(self, bound: int | None) -> None:
        super().__init__(bound, by_record)
        self._pending: dict[str, OrderedDict[str, None]] = {}

    def finished(self, key: str) -> None:
        """Mark a delivery done (delivered or failed): the first the bound may forget."""
        record = self._data.get(key)
        if record is None:
            return  # forgotten meanwhile
        partner = self._partner_of(key, record)
        pending = self._pending.get(partner)
        if pending is not None and pending.pop(key, _MISSING) is not _MISSING:
            self._order.setdefault(partner, OrderedDict())[key] = None

    def pending(self) -> Iterator[tuple[str, V]]:
        """Every pending delivery, oldest first within each partner."""
        for order in list(self._pending.values()):
            for key in list(order):
                yield key, self._data[key]

    def _add(self, partner: str, key: str) -> int:
        pending = self._pending.setdefault(partner, OrderedDict())
        pending[key] = None
        return len(pending) + len(self._order.get(partner, ()))

    def _remove(self, partner: str, key: str) -> None:
        pending = self._pending.get(partner)
        if pending is not None and pending.pop(key, _MISSING) is not _MISSING:
            return
        super()._remove(partner, key)

    def _victim(self, partner: str) -> str:
        finished = self._order.get(partner)
        if finished:
            return next(iter(finished))
        return next(iter(self._pending[partner]))

    def clear(self) -> None:
        super().clear()
        self._pending.clear()
