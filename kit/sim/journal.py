"""What changed since the state was last written: one interface for every home of state.

The simulator keeps three kinds of state (``kit.sim.state``): bounded
:class:`~kit.sim.stores.Store` objects, plain dicts of what a partner can still see, and the
:class:`~kit.sim.stores.DeliveryLog`. A durable simulator (``kit serve --state FILE``) makes
them the *tracked* kinds below: the same classes, that also tell a :class:`Journal` every key
a request reads or writes (a record read may be changed in place), every key forgotten by a
bound or a sweep, and every key touched explicitly (:meth:`~kit.sim.stores.Store.touch`, for
a record changed outside a lookup: an expiry, a delivery attempt). A simulator in memory uses
the plain classes and pays nothing.

:meth:`Journal.changed` is what the next write must cover: every key touched since the last
write, and every key any request still open has touched (a request may read a record, wait,
and change it later; its own write, before its answer leaves, covers it anyway). The write
takes the records as they are in memory at that moment: between two awaits every change of a
request is complete, so what lands on disk is always a state the simulator was in.

    >>> journal = Journal()
    >>> cards = tracked_dict(journal, "cards")
    >>> cards["c1"] = "card"
    >>> sorted(journal.changed())
    [('cards', 'c1')]
"""

from __future__ import annotations

import contextvars
from typing import Any

from kit.sim.stores import DeliveryLog, Store

Key = tuple[str, Any]  # (store name, key in the store)

_UNIT: contextvars.ContextVar[dict[Key, None] | None] = contextvars.ContextVar("kit_sim_unit", default=None)


class Journal:
    """The keys touched since the last write, and those of requests still open."""

    def __init__(self) -> None:
        self._dirty: dict[Key, None] = {}
        self._open: dict[int, dict[Key, None]] = {}  # by id: two units may hold equal keys
        #: Everything must be written again (after a reset or a restore): the next write
        #: replaces the whole file.
        self.everything = True

    def touch(self, name: str, key: Any) -> None:
        item = (name, key)
        self._dirty[item] = None
        unit = _UNIT.get()
        if unit is not None:
            unit[item] = None

    def changed(self) -> list[Key]:
        """What the next write must cover (and forget, for the keys of no open request)."""
        out = dict(self._dirty)
        for unit in self._open.values():
            out.update(unit)
        return list(out)

    def written(self) -> None:
        """The keys :meth:`changed` gave are on disk."""
        self._dirty.clear()
        self.everything = False

    def alone(self) -> bool:
        """Whether at most one request is open (the caller's, if it is in one)."""
        return len(self._open) <= 1

    def open_requests(self) -> int:
        return len(self._open)

    def flushed(self) -> None:
        """The current request's keys are on disk (its write covered them, and it changes
        nothing while it waits): later writes need not cover them again."""
        unit = _UNIT.get()
        if unit is not None:
            unit.clear()

    def unit(self) -> _Unit:
        """One request: the keys it touches stay in every write until it ends."""
        return _Unit(self)


class _Unit:
    """A request's keys, in the journal while it is open (a plain context manager: a
    generator's costs a few microseconds more per request)."""

    __slots__ = ("_journal", "_keys", "_token")

    def __init__(self, journal: Journal) -> None:
        self._journal = journal
        self._keys: dict[Key, None] = {}

    def __enter__(self) -> None:
        keys = self._keys
        self._journal._open[id(keys)] = keys
        self._token = _UNIT.set(keys)

    def __exit__(self, *exc: object) -> None:
        _UNIT.reset(self._token)
        keys = self._keys
        journal = self._journal
        del journal._open[id(keys)]
        journal._dirty.update(keys)  # changes after its write, if any: the next write covers them


class _Tracking:
    """The lookups and writes of a dict or a Store, each telling the journal its key."""

    _journal: Journal
    _name: str

    def get(self, key: Any, default: Any = None) -> Any:
        self._journal.touch(self._name, key)
        return super().get(key, default)  # type: ignore[misc]

    def __getitem__(self, key: Any) -> Any:
        self._journal.touch(self._name, key)
        return super().__getitem__(key)  # type: ignore[misc]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._journal.touch(self._name, key)
        super().__setitem__(key, value)  # type: ignore[misc]

    def __delitem__(self, key: Any) -> None:
        self._journal.touch(self._name, key)
        super().__delitem__(key)  # type: ignore[misc]

    def pop(self, key: Any, *default: Any) -> Any:
        self._journal.touch(self._name, key)
        return super().pop(key, *default)  # type: ignore[misc]

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self._journal.touch(self._name, key)
        return super().setdefault(key, default)  # type: ignore[misc]

    def touch(self, key: Any) -> None:
        self._journal.touch(self._name, key)

    def clear(self) -> None:
        for key in list(self):  # type: ignore[call-overload]
            self._journal.touch(self._name, key)
        super().clear()  # type: ignore[misc]


class TrackedDict(_Tracking, dict):  # type: ignore[type-arg]
    """A dict of kept records (accounts, cards…) that tells the journal what it touches."""


class TrackedStore(_Tracking, Store):  # type: ignore[type-arg]
    """A bounded :class:`Store` whose writes, reads and forgotten records the journal learns."""

    def _forget(self, partner: str, key: Any) -> None:
        self._journal.touch(self._name, key)
        super()._forget(partner, key)

    def finished(self, key: Any) -> None:  # DeliveryLog's, when mixed in below
        self._journal.touch(self._name, key)
        super().finished(key)  # type: ignore[misc]


class TrackedDeliveryLog(TrackedStore, DeliveryLog):  # type: ignore[type-arg]
    """The webhook delivery log, tracked."""


def tracked_dict(journal: Journal, name: str) -> TrackedDict:
    out = TrackedDict()
    out._journal, out._name = journal, name
    return out


def tracked(journal: Journal, name: str, store: Store[Any, Any]) -> Store[Any, Any]:
    """An empty tracked store like ``store`` (same bound, same partner rule)."""
    out: Any
    if isinstance(store, DeliveryLog):
        out = TrackedDeliveryLog(store.bound)
    else:
        out = TrackedStore(store.bound, store._partner_of)
    out._journal, out._name = journal, name
    return out  # type: ignore[no-any-return]
