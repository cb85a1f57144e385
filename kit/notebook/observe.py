"""What a choice check that differs observed: the register key and the value the server gave.

A choice check compares what the server answered with what the register (or the expectation
overlay) chose, read through :func:`kit.notebook.chosen`. The companion keeps the last values
read that way (:meth:`kit.notebook.companion.Companion.chose`); when a comparison made with
``show=True`` misses (:class:`kit.notebook.expect.Mismatch` keeps both values then), :func:`observe`
finds which ``chosen(entry, key)`` the expected value was — the whole value, one item of a table
(``chosen("A64", "codes")["card-already-closed"]``), or leaves of a tuple or list built from
them — and returns, for each, the key's value as the server answered it: an **observation**
(:class:`Observation`).

Only values of the register's type are kept (:mod:`kit._choices` validates them as an overlay
would), and only what the notebook said may be shown: codes, statuses, id formats, lifetimes,
lists of names. ``kit regress --write-choices`` writes them as an overlay.

Example::

    >>> reads = [(("A15", "reasons"), ["lost", "stolen", "damaged"])]
    >>> [o.answered for o in observe(["lost", "stolen", "damaged"], ["lost", "stolen"], reads, "A15")]
    [['lost', 'stolen']]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kit import _choices as choices

__all__ = ["Observation", "observe"]

Read = tuple[tuple[str, str], Any]


@dataclass(frozen=True)
class Observation:
    """One register key as this server answered it: ``entry``, ``key``, the value the check
    expected (``chosen``) and the value the server gave (``answered``, of the register's type)."""

    entry: str
    key: str
    chosen: Any
    answered: Any

    def data(self) -> dict[str, Any]:
        """As JSON: ``{"entry", "key", "chosen", "answered"}``."""
        return {"entry": self.entry, "key": self.key, "chosen": self.chosen, "answered": self.answered}

    @classmethod
    def of(cls, data: Any) -> Observation | None:
        """From :meth:`data` (``None`` when it is not one)."""
        if not isinstance(data, Mapping) or not all(isinstance(data.get(n), str) for n in ("entry", "key")):
            return None
        return cls(data["entry"], data["key"], data.get("chosen"), data.get("answered"))


def _plain(value: Any) -> Any:
    """``value`` as JSON has it (tuples as lists), or raise ``TypeError`` for anything else."""
    return json.loads(json.dumps(value, allow_nan=False))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b if not isinstance(a, Mapping) else a == b


def _leaves(want: Any, got: Any) -> Iterator[tuple[Any, Any]]:
    """The pairs of parts that differ, walking tuples, lists and tables of the same shape."""
    if isinstance(want, list | tuple) and isinstance(got, list | tuple) and len(want) == len(got):
        for w, g in zip(want, got, strict=True):
            yield from _leaves(w, g)
    elif isinstance(want, Mapping) and isinstance(got, Mapping) and set(want) == set(got):
        for name in want:
            yield from _leaves(want[name], got[name])
    elif not _same(want, got):
        yield want, got


def _valid(entry: str, key: str, chosen: Any, answered: Any) -> Observation | None:
    """The observation when ``answered`` is a value of the register's type for the key."""
    try:
        chosen, answered = _plain(chosen), _plain(answered)
        choices.parse({entry: {key: answered}})
    except (TypeError, ValueError):
        return None
    return None if answered == chosen else Observation(entry, key, chosen, answered)


def observe(want: Any, got: Any, reads: Iterable[Read], basis: str) -> list[Observation]:
    """What a miss of ``got`` against ``want`` observed of the keys ``reads`` named (``((entry,
    key), value)``, the entry of the check's ``basis`` first); empty when it names none.

    Raises:
        Nothing.
    """
    ordered: Sequence[Read] = sorted(reads, key=lambda read: read[0][0] != basis)
    for (entry, key), value in ordered:
        if _same(value, want):
            found = _valid(entry, key, value, got)
            return [found] if found else []
    answered: dict[tuple[str, str], Any] = {}
    for w, g in _leaves(want, got):
        for (entry, key), value in ordered:
            if _same(value, w):
                answered[(entry, key)] = g
                break
            if isinstance(value, Mapping):
                item = next((name for name, v in value.items() if _same(v, w)), None)
                if item is not None:
                    table = answered.setdefault((entry, key), dict(value))
                    table[item] = g
                    break
    values = dict(ordered)
    observed = [_valid(entry, key, values[(entry, key)], g) for (entry, key), g in answered.items()]
    return [o for o in observed if o is not None]
