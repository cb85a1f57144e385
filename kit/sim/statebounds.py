"""The bounds of a state the server itself could have written (register A71).

A snapshot or a state file is untrusted input (``kit.sim.untrusted``): once every value has its
record's type, it must also be a value a server could have given it, or the file is refused
(400 ``snapshot-invalid``; at start, ``refusing to start``) naming what is out of bounds:

- the clock before the year ``clock_before_year`` (the control plane moves it no further), a
  wall clock's offset not negative nor longer than that; the seed and the id counters 64-bit;
- money (a balance, a transfer's amount) a finite decimal of at most two places (A19), not
  negative (an amount positive) and below ``money_limit`` (funding stops short of it);
- no time later than the clock plus ``future_max_seconds`` (ten years: the longest lifetime a
  server gives, a card's, is about three);
- ids of the two formats a server gives (A41's prefixed ids, A60's UUIDs), each record under its
  own id; a token kept under a digest of its form (format 4 on), a session under its own;
- faults within the control plane's bounds (A47), stored answers with a status and ``svc-*``
  headers an answer can carry, subscriptions with a URL and events a partner could send (A47)
  and a version the kit serves (A27).

    >>> out_of_bounds({"seed": 7, "now": _LIMIT, "offset": _ZERO, "counters": {}}, {})
    'the clock is not before the year 9000'
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import typing
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from joserfc.jwk import ECKey

from kit import register
from kit._lazy import LazyPattern
from kit.sim.atrest import is_digest

__all__ = ["hints", "out_of_bounds", "start_outside"]

_LIMITS = register.value("A71")
_SIZES = {name: int(value) for name, value in register.value("A47").items()}
_LIMIT = dt.datetime(int(_LIMITS["clock_before_year"]), 1, 1, tzinfo=dt.UTC)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_ZERO = dt.timedelta(0)
_FUTURE = dt.timedelta(seconds=int(_LIMITS["future_max_seconds"]))
_MONEY_LIMIT = Decimal(_LIMITS["money_limit"])
_INT64 = range(-(2**63), 2**63)
# Compiled when a state is first checked: a server that never loads one never compiles them.
_COUNTER = LazyPattern(r"[a-z0-9]{1,16}")
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
_HEADER_NAME = LazyPattern(r"svc-[a-z0-9-]{1,64}|content-type")
_HEADER_VALUE = LazyPattern(r"[\x20-\x7e]{0,4096}")
_URL = LazyPattern(r"https?://\S+")
_VERSIONS = frozenset(register.value("A27")["versions"])
_DELIVERY_STATUSES = frozenset({"pending", "delivered", "failed"})
_ATTEMPTS_MAX = len(register.value("A25")["retry_offsets_seconds"]) + 1
_IDS = {
    kind: LazyPattern(rf"{kind}_[0-9a-f]{{20}}|{_UUID}")
    for kind in ("acc", "per", "card", "p2p", "evt", "sub", "doc", "flt")
}
#: A kept record's own id (its field and prefix) and the ids it refers to (field: prefix).
_OWN: dict[str, tuple[str, str, dict[str, str]]] = {
    "accounts": ("account_id", "acc", {}),
    "persons": ("person_id", "per", {"account_id": "acc"}),
    "cards": ("card_id", "card", {"account_id": "acc"}),
    "transfers": (
        "transfer_id",
        "p2p",
        {"from_account_id": "acc", "to_account_id": "acc", "from_person_id": "per", "to_person_id": "per"},
    ),
    "inbound_events": ("event_id", "evt", {"account_id": "acc"}),
    "document_requests": ("document_request_id", "doc", {"person_id": "per", "account_id": "acc"}),
    "subscriptions": ("subscription_id", "sub", {}),
    "faults": ("fault_id", "flt", {}),
}


def out_of_bounds(meta: Any, homes: dict[str, dict[Any, Any]], version: int = 4) -> str | None:
    """Why a state of the right types (its clock and counters ``meta``, its ``homes``, of state
    file format ``version``) is not one a server could have written, or None."""
    if meta is None:
        return "it holds records but no clock" if any(homes.values()) else None
    reason = _meta(meta)
    if reason:
        return reason
    latest = meta["now"] + _FUTURE
    for home, kept in homes.items():
        check = _CHECKS.get(home)
        own = _OWN.get(home)
        for key, value in kept.items():
            reason = (
                _values(value, latest)
                or (check(key, value, version) if check else None)
                or (_own(key, value, *own) if own else None)
            )
            if reason:
                return f"{home}: {reason}"
    return None


def start_outside(seed: int, starting_balance: Decimal) -> str | None:
    """Why a server started with ``seed`` and ``starting_balance`` would write a state it then
    refuses, or None."""
    if seed not in _INT64:
        return "the seed (--seed) must be a 64-bit integer (A71)"
    return _amount(starting_balance, "the starting balance (--starting-balance, A10)")


def _meta(meta: dict[str, Any]) -> str | None:
    if meta["now"] >= _LIMIT:
        return f"the clock is not before the year {_LIMIT.year}"
    if not _ZERO <= meta["offset"] <= _LIMIT - _EPOCH:
        return "the clock's offset is negative or too long"
    if meta["seed"] not in _INT64:
        return "the seed is not a 64-bit integer"
    for prefix, count in meta["counters"].items():
        if not _COUNTER.fullmatch(prefix) or count not in range(2**63):
            return f"the id counter {prefix[:20]!r} is not one the server keeps"
    return None


#: Names the records' annotations use that their modules import for type checking only.
_NAMES = {"DeviceId": tuple[str, str], "ECKey": ECKey, "Decimal": Decimal, "datetime": dt.datetime}
_HINTS: dict[type, dict[str, Any]] = {}


def hints(cls: type) -> dict[str, Any]:
    """A record class's fields and their annotations, resolved (once per class)."""
    found = _HINTS.get(cls)
    if found is None:
        found = _HINTS[cls] = typing.get_type_hints(cls, localns=_NAMES)
    return found


@functools.cache
def _shape(cls: type) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """A record class's fields holding a time, an amount, and a list (of records or times)."""
    times, amounts, lists = [], [], []
    for name, hint in hints(cls).items():
        if hint is dt.datetime or dt.datetime in typing.get_args(hint):
            times.append(name)
        elif hint is Decimal:
            amounts.append(name)
        elif typing.get_origin(hint) is list:
            lists.append(name)
    return tuple(times), tuple(amounts), tuple(lists)


def _values(value: Any, latest: dt.datetime) -> str | None:
    """Why a time in ``value`` (a record, the records in its lists, or a list of times) is past
    ``latest``, or an amount in it out of bounds, or None."""
    if isinstance(value, list):
        return next((r for item in value if (r := _values(item, latest))), None)
    if isinstance(value, dt.datetime):
        return f"a time is more than {_FUTURE.days:,} days past the clock" if value > latest else None
    if not hasattr(value, "__dataclass_fields__"):
        return None
    cls: type = type(value)
    times, amounts, lists = _shape(cls)
    for name in times:
        found = getattr(value, name)
        if found is not None and found > latest:
            return f"{type(value).__name__}.{name} is more than {_FUTURE.days:,} days past the clock"
    for name in amounts:
        reason = _amount(getattr(value, name), f"{type(value).__name__}.{name}")
        if reason:
            return reason
    return next((r for name in lists if (r := _values(getattr(value, name), latest))), None)


def _amount(amount: Decimal, where: str) -> str | None:
    if not (amount.is_finite() and 0 <= amount < _MONEY_LIMIT):
        return f"{where} is not between 0 and {_MONEY_LIMIT:,} USD"
    if int(amount.as_tuple().exponent) < -2:
        return f"{where} has more than two decimals (A19)"
    return None


def _ids(value: Any, refs: dict[str, str]) -> str | None:
    """Why a field of ``value`` named in ``refs`` (field: id prefix) is not an id of its kind."""
    for name, kind in refs.items():
        found = getattr(value, name)
        if found is not None and not _IDS[kind].fullmatch(found):
            return f"{name} {found[:40]!r} is not an id the server gives"
    return None


def _own(key: Any, value: Any, name: str, kind: str, refs: dict[str, str]) -> str | None:
    if key != getattr(value, name):
        return f"a record is not kept under its own {name}"
    return _ids(value, {name: kind, **refs})


def _token(key: Any, value: Any, version: int) -> str | None:
    if version >= 4 and not is_digest(key):
        return "a token is not kept as a digest"
    return None


def _session(key: Any, value: Any, version: int) -> str | None:
    if version >= 4 and not (is_digest(key) and value.token == key):
        return "a session is not kept under its token's digest"
    return _ids(value, {"account_id": "acc", "person_id": "per"})


def _subscription(key: Any, value: Any, version: int) -> str | None:
    if len(value.url) > _SIZES["webhook_url_max_chars"] or not _URL.fullmatch(value.url):
        return "a subscription's URL is not one a partner could give"
    if len(value.events) > _SIZES["events_per_subscription_max"]:
        return "a subscription names more events than a partner could give"
    if value.api_version not in _VERSIONS:
        return f"a subscription's version {value.api_version[:40]!r} is not one the kit serves"
    return None


def _delivery(key: Any, value: Any, version: int) -> str | None:
    if key != value.delivery_id or key != f"{value.event_id}:{value.subscription_id}":
        return "a delivery is not kept under its own id"
    if value.status not in _DELIVERY_STATUSES or len(value.attempts) > _ATTEMPTS_MAX:
        return "a delivery's status or attempts are not ones the server gives"
    return _ids(value, {"event_id": "evt", "subscription_id": "sub"})


def _stored_answer(key: Any, value: Any, version: int) -> str | None:
    if not 1 <= len(key[1]) <= _SIZES["idempotency_key_max_chars"]:
        return "an idempotency key is not 1 to 255 characters"
    if not (value.status == 0 if value.in_flight else 100 <= value.status <= 599):
        return "a stored answer's status is not an HTTP status"
    if not all(_HEADER_NAME.fullmatch(k) and _HEADER_VALUE.fullmatch(v) for k, v in value.headers.items()):
        return "a stored answer holds a header an answer cannot carry"
    return None


def _within(value: int | None, low: int, high: int | None = None) -> bool:
    return value is None or (low <= value and (high is None or value <= high))


def _fault(key: Any, value: Any, version: int) -> str | None:
    bounded = (
        _within(value.status, _SIZES["fault_status_min"], _SIZES["fault_status_max"]),
        math.isfinite(value.rate) and 0 <= value.rate <= 1,
        _within(value.times, 1),
        value.when in ("before_commit", "after_commit"),
        _within(value.retry_after, 0, _SIZES["fault_retry_after_max_seconds"]),
        _within(value.latency_ms, 0, _SIZES["fault_latency_max_ms"]),
        value.fired >= 0,
    )
    return None if all(bounded) else "a fault is outside the control plane's bounds (A47)"


def _transfer(key: Any, value: Any, version: int) -> str | None:
    return None if value.amount > 0 else "Transfer.amount is not positive"


_CHECKS: dict[str, Callable[[Any, Any, int], str | None]] = {
    "transfers": _transfer,
    "partner_tokens": _token,
    "sessions": _session,
    "subscriptions": _subscription,
    "deliveries": _delivery,
    "idempotency": _stored_answer,
    "faults": _fault,
}
