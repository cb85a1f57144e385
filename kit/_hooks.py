"""Hooks: how something outside a client observes it, as httpx's ``event_hooks`` do.

``kit.connect(..., hooks={"call": [on_call], "drift": [on_drift]})`` (or a :class:`Hooks`):
each ``call`` hook is called with every :class:`~kit._history.Entry` the client records (the
same redacted row as ``api.history``: never a header, body or secret), each ``drift`` hook
with the :class:`~kit._drift.Drift` rows of one answer that differed from the contract, each
``wire`` hook (a client made with ``record=True``) with every redacted
:class:`~kit._wire.Exchange` once it is complete. Hooks
run on the calling thread, after the row is kept; an exception in a hook propagates to the
caller, as in httpx. The notebook companion (:mod:`kit.notebook`) observes its clients this
way; the client core itself keeps no process-wide record.

Example::

    >>> seen = []
    >>> hooks = Hooks.of({"call": [seen.append]})
    >>> len(hooks.call), hooks.drift
    (1, ())
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kit.errors import ConfigError

if TYPE_CHECKING:
    from kit._drift import Drift
    from kit._history import Entry

__all__ = ["CallHook", "DriftHook", "Hooks", "WireHook"]

#: Called with every call a client records.
CallHook = Callable[["Entry"], None]
#: Called with the drift rows of one answer.
DriftHook = Callable[[Sequence["Drift"]], None]
#: Called with each redacted :class:`kit._wire.Exchange` a recording client completes (typed
#: loosely here: :mod:`kit._wire` imports nothing of this module, and this module nothing of it).
WireHook = Callable[[Any], None]


@dataclass(frozen=True)
class Hooks:
    """The hooks of one client: ``call``, ``drift`` and ``wire`` (tuples of callables)."""

    call: tuple[CallHook, ...] = ()
    drift: tuple[DriftHook, ...] = ()
    wire: tuple[WireHook, ...] = ()

    @classmethod
    def of(cls, given: Hooks | Mapping[str, Iterable[Callable[..., None]]] | None) -> Hooks:
        """``given`` as :class:`Hooks` (a mapping's keys are the fields' names).

        Raises:
            ConfigError: an unknown key, or a hook that is not callable.
        """
        if given is None:
            return cls()
        if isinstance(given, Hooks):
            return given
        unknown = sorted(set(given) - {"call", "drift", "wire"})
        if unknown:
            raise ConfigError(f"unknown hook(s) {', '.join(unknown)}; accepted: call, drift, wire")
        call, drift = tuple(given.get("call", ())), tuple(given.get("drift", ()))
        wire = tuple(given.get("wire", ()))
        if not all(callable(h) for h in (*call, *drift, *wire)):
            raise ConfigError("every hook must be callable")
        return cls(call=call, drift=drift, wire=wire)

    def __add__(self, other: Hooks) -> Hooks:
        """Both sets of hooks, ``self``'s first."""
        return Hooks(call=self.call + other.call, drift=self.drift + other.drift, wire=self.wire + other.wire)
