"""The companion's one record for this kernel: the clients it made, their calls and drift,
the checks' outcomes, and the profile checks are judged against.

The client core keeps no such record: the companion builds its clients with
:func:`kit.connect` and passes its hooks (:mod:`kit._hooks`), so it sees every call and every
drift of every client a notebook makes through :func:`connect`.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict, deque
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from kit._drift import Drift, DriftLog
from kit._hooks import Hooks
from kit._profiles import Profile, SimProfile, lookup
from kit.notebook.wire import Sink, cell

if TYPE_CHECKING:
    from kit._client import Client
    from kit._history import Entry
    from kit._wire import Exchange
    from kit.notebook.outcome import CheckOutcome

__all__ = ["COMPANION", "Companion", "connect"]

#: At most this many calls are kept (a population run through the companion).
CALL_LIMIT = 10_000
#: At most this many values read with ``kit.notebook.chosen`` are kept (the latest).
READ_LIMIT = 256


class Companion:
    """What a notebook kernel has seen (see the module docstring); one per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.calls: deque[Entry] = deque(maxlen=CALL_LIMIT)
        self.drift = DriftLog()
        self.outcomes: list[CheckOutcome] = []
        self._reads: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._noted: dict[str, set[str]] = {}
        self.clients = 0
        self._latest: tuple[Profile, str | None] | None = None
        self._chosen: Profile | None = None
        self.hooks = Hooks(call=(self._on_call,), drift=(self._on_drift,), wire=(self._on_wire,))
        self._sink: Sink | None = None
        self._sink_read = False

    def _on_call(self, entry: Entry) -> None:
        with self._lock:
            self.calls.append(entry)

    def _on_drift(self, rows: Sequence[Drift]) -> None:
        self.drift.record(rows)

    def _on_wire(self, exchange: Exchange) -> None:
        exchange.comment = exchange.comment or cell()
        if self._sink is not None:
            self._sink.write(exchange)

    def connect(self, profile: Any = "sim", **overrides: Any) -> Client:
        """:func:`kit.connect` with the companion's hooks added to the caller's, recording the
        wire (``record=True`` unless the caller says otherwise)."""
        from kit._client import connect as core_connect
        from kit.notebook.display import install

        hooks = Hooks.of(overrides.pop("hooks", None)) + self.hooks
        overrides.setdefault("record", True)
        api = core_connect(profile, hooks=hooks, **overrides)
        with self._lock:
            self.clients += 1
            self._latest = (api.config.profile, api.config.base_url)
            if not self._sink_read:  # kit regress names the kernel's wire files (once)
                self._sink, self._sink_read = Sink.from_env(), True
            if self._sink is not None:
                self._sink.watch(api.wire_log)
        install(self.drift)
        return api

    def seen(self, profile: str | Profile | type[Profile], base_url: str | None = None) -> None:
        """Judge checks as after a client of ``profile`` at ``base_url`` (what :meth:`connect`
        notes; tests use it without a server)."""
        with self._lock:
            self._latest = (lookup(profile), base_url)

    def use(self, profile: str | Profile | type[Profile] | None) -> None:
        """Judge checks against ``profile`` (``None``: back to the latest client's)."""
        self._chosen = None if profile is None else lookup(profile)

    def judged(self) -> tuple[Profile, str | None]:
        """The profile checks are judged against and the API's base URL: the one given to
        :meth:`use`, else the latest client's, else ``sim``."""
        latest = self._latest
        if self._chosen is not None:
            return self._chosen, latest[1] if latest else None
        return latest if latest is not None else (SimProfile(), None)

    def record(self, outcome: CheckOutcome) -> None:
        with self._lock:
            self.outcomes.append(outcome)

    def results(self) -> list[CheckOutcome]:
        with self._lock:
            return list(self.outcomes)

    def chose(self, entry: str, key: str, value: Any) -> None:
        """Note that a check expects ``value`` for ``entry``'s ``key`` (:func:`kit.notebook.chosen`)."""
        with self._lock:
            self._reads[(entry, key)] = copy.deepcopy(value)
            self._reads.move_to_end((entry, key))
            while len(self._reads) > READ_LIMIT:
                self._reads.popitem(last=False)

    def reads(self) -> list[tuple[tuple[str, str], Any]]:
        """The values checks expect, as read (latest first): ``((entry, key), value)``."""
        with self._lock:
            return list(reversed(self._reads.items()))

    def note(self, ids: Iterable[str], where: str) -> None:
        """Note register entries met outside the clients and checks, and ``where``
        (:func:`kit.notebook.relied.note`)."""
        with self._lock:
            for entry in ids:
                self._noted.setdefault(entry.strip(), set()).add(where)

    def noted(self) -> dict[str, set[str]]:
        """The entries :meth:`note` was given, each with where it was met."""
        with self._lock:
            return {entry: set(where) for entry, where in self._noted.items()}


#: This process's companion.
COMPANION = Companion()


def connect(profile: Any = "sim", **overrides: Any) -> Client:
    """A client for one device, as :func:`kit.connect` (same arguments), seen by the
    companion: its checks are judged against this client's profile, the drift its answers
    meet is shown after the cell, its calls are counted, and its wire is recorded, redacted
    (``api.wire()``, ``api.export_har(path)``; each exchange names its notebook cell; under
    ``kit regress`` written for the run, :mod:`kit.notebook.wire`).

    Example::

        >>> from kit.notebook import connect
        >>> api = connect("sim", seed=7)                      # doctest: +SKIP

    Raises:
        ConfigError, TransportError: as :func:`kit.connect`.
    """
    return COMPANION.connect(profile, **overrides)
