"""The values of a state file: records pickled, read back knowing only the record classes.

A record (a dataclass of ``kit.sim.state`` or ``kit.sim.records``) is pickled as its class and
its fields' values, a UTC time as its seven numbers and a device key as its public JWK
(:data:`_TABLE`); the unpickler finds only those classes and functions, so a snapshot from
elsewhere cannot run code. A key of a home is written as text (:func:`_key_text`, JSON), read
back by :func:`_key`.

    >>> from kit.sim.state import Nonce
    >>> import datetime as dt
    >>> nonce = Nonce("p", dt.datetime(2025, 1, 6, tzinfo=dt.UTC))
    >>> decode(encode(nonce)) == nonce
    True
"""

from __future__ import annotations

import copyreg
import dataclasses
import datetime as dt
import io
import json
import operator
import pickle
import weakref
from collections.abc import Callable
from typing import Any

from joserfc.jwk import ECKey

from kit.sim import records, state


def _ec_key(jwk: dict[str, Any]) -> ECKey:
    return ECKey.import_key(jwk)


#: Each live device key's reduction, by id (the keys are not hashable), with a weak
#: reference that drops it when the key goes.
_EC_REDUCED: dict[int, tuple[weakref.ref[Any], tuple[Any, ...]]] = {}


def _reduce_ec_key(key: ECKey) -> tuple[Any, ...]:
    """A device's public key as its JWK, worked out once per key object (a session, account
    and person holding it are written again and again)."""
    ident = id(key)
    found = _EC_REDUCED.get(ident)
    if found is not None and found[0]() is key:
        return found[1]
    reduced = (_ec_key, (key.as_dict(private=False),))
    _EC_REDUCED[ident] = (weakref.ref(key, lambda _: _EC_REDUCED.pop(ident, None)), reduced)
    return reduced


def _utc(year: int, month: int, day: int, hour: int, minute: int, second: int, micro: int) -> dt.datetime:
    return dt.datetime(year, month, day, hour, minute, second, micro, tzinfo=dt.UTC)


def _reduce_datetime(value: dt.datetime) -> tuple[Any, ...]:
    """A UTC time as its seven numbers (a third of the time pickle takes for an aware datetime,
    and every record holds a few); any other time as pickle writes it."""
    if value.tzinfo is dt.UTC:
        return _utc, (
            value.year,
            value.month,
            value.day,
            value.hour,
            value.minute,
            value.second,
            value.microsecond,
        )
    return value.__reduce_ex__(5)  # type: ignore[return-value]


def _reduce_record(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """A record as its class and its fields' values: no field names, a sixth less pickling."""
    values = operator.attrgetter(*(f.name for f in dataclasses.fields(cls)))
    return lambda record: (cls, values(record))


_TABLE = copyreg.dispatch_table.copy()
_TABLE[type(ECKey.generate_key("P-256"))] = _reduce_ec_key
_TABLE[dt.datetime] = _reduce_datetime
#: The record classes: ``kit.sim.state``'s own and the kept ones it names (``kit.sim.records``).
_RECORDS = [
    c
    for m in (state, records)
    for c in vars(m).values()
    if isinstance(c, type) and c.__module__ == m.__name__
]
_TABLE.update(
    (c, _reduce_record(c))
    for c in _RECORDS  # called with every field
    if dataclasses.is_dataclass(c) and len(dataclasses.fields(c)) > 1
    if all(f.init for f in dataclasses.fields(c))
)
_ALLOWED = {
    ("datetime", "datetime"),
    ("datetime", "timezone"),
    ("datetime", "timedelta"),
    ("decimal", "Decimal"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    (__name__, "_ec_key"),
    (__name__, "_utc"),
    *((c.__module__, c.__qualname__) for c in _RECORDS),
}


class _Pickler(pickle.Pickler):
    dispatch_table = _TABLE


def encode(value: Any) -> bytes:
    out = io.BytesIO()
    _Pickler(out, protocol=5).dump(value)
    return out.getvalue()


#: Names an older file gives: this module's functions where versions 1 and 2 named them, and
#: the kept records under ``kit.sim.state``, which resolves them (files written before they
#: named :mod:`kit.sim.records` as their module).
_MOVED: dict[tuple[str, str], Any] = {
    ("kit.sim.statefile", "_ec_key"): _ec_key,
    ("kit.sim.statefile", "_utc"): _utc,
    **{(state.__name__, name): getattr(records, name) for name in records.__all__},
}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        moved = _MOVED.get((module, name))
        if moved is not None:
            return moved
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not a record of a kit state")
        return super().find_class(module, name)


def decode(data: bytes) -> Any:
    return _Unpickler(io.BytesIO(data)).load()


def _key_text(key: Any) -> str:
    if type(key) is str and key.isascii() and key.isprintable() and '"' not in key and "\\" not in key:
        return f'"{key}"'  # what json.dumps writes for it, without its machinery (most keys)
    return json.dumps(key, separators=(",", ":"))


def _key(text: str) -> Any:
    value = json.loads(text)
    return tuple(value) if isinstance(value, list) else value
