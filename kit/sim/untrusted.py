"""State files and snapshots are untrusted input: opened defensively, checked, validated.

A snapshot can come from a colleague, a bug report or a web page; a ``--state`` file from a
shared folder. Before anything of one is read:

- its schema must be exactly one the kit writes (:data:`SCHEMAS`, per format version): these
  tables with these definitions, their automatic indexes, and nothing else (no view, trigger or
  other index, whose SQL would run when the records are read);
- the connection runs with ``trusted_schema=OFF``, ``cell_size_check=ON``, no memory map, SQLite's
  defensive mode where the Python runtime exposes it (3.12+), and a progress handler that ends
  any statement past a budget of virtual-machine instructions (register A71), so a crafted file
  cannot keep a query running; ``quick_check`` runs first, inside the same budget.

Every value read back is then validated against the type its record declares
(:func:`conforms`), then against the bounds of what a server could have written
(``kit.sim.statebounds``); a value that does not fit (a balance that is not a finite decimal or
past the money limit, a time without a zone or centuries ahead, a record of the wrong class or
under another id) refuses the file, naming what is wrong.

    >>> conforms([1, 2], list[int]) is None
    True
    >>> conforms({"a": "x"}, dict[str, int])
    "a value of 'a' is a str, not an int"
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import random
import re
import sqlite3
import types
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from joserfc.jwk import ECKey

from kit import register
from kit.sim.statebounds import hints, out_of_bounds

__all__ = ["SCHEMAS", "TABLES", "Refused", "conforms", "guarded", "invalid", "schema_of"]

_LIMITS = register.value("A71")
#: The default budget of one statement on an untrusted file (SQLite VM instructions).
BUDGET = int(_LIMITS["sqlite_budget_instructions"])
#: The progress handler runs every this many instructions.
_STEP = 1_000

_KIT_STATE = "CREATE TABLE kit_state (name TEXT PRIMARY KEY, value BLOB NOT NULL)"
_RECORDS = (
    "CREATE TABLE records (home TEXT NOT NULL, key TEXT NOT NULL, seq INTEGER NOT NULL,"
    " value BLOB NOT NULL, PRIMARY KEY (home, key)) WITHOUT ROWID"
)
_JOURNAL = "CREATE TABLE journal (id INTEGER PRIMARY KEY, data BLOB NOT NULL)"
#: The tables the kit writes (``kit.sim.statefile`` creates them from these).
TABLES = (_KIT_STATE, _RECORDS, _JOURNAL)
_AUTO_INDEX = ("index", "sqlite_autoindex_kit_state_1", "kit_state", None)
_V1 = frozenset(
    {("table", "kit_state", "kit_state", _KIT_STATE), _AUTO_INDEX, ("table", "records", "records", _RECORDS)}
)
_V2 = _V1 | {("table", "journal", "journal", _JOURNAL)}
#: Each format version's schema, exactly: (type, name, table, SQL) of every schema row.
SCHEMAS: dict[int, frozenset[tuple[str, str, str, str | None]]] = {1: _V1, 2: _V2, 3: _V2, 4: _V2}


class Refused(Exception):
    """An untrusted file that cannot be used; the message says what is wrong."""


def _normal(sql: str | None) -> str | None:
    return None if sql is None else re.sub(r"\s+", " ", sql).strip()


def schema_of(conn: sqlite3.Connection) -> frozenset[tuple[str, str, str, str | None]]:
    """The file's schema rows, their SQL with white space normalised."""
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    return frozenset((kind, name, table, _normal(sql)) for kind, name, table, sql in rows)


@contextmanager
def guarded(conn: sqlite3.Connection, budget: int = BUDGET) -> Iterator[None]:
    """Run the block with ``conn`` hardened for an untrusted file (see the module's docstring);
    a statement past ``budget`` instructions raises :class:`Refused`. The progress handler is
    removed afterwards (a running server's own writes have no budget)."""
    spent = 0

    def progress() -> int:
        nonlocal spent
        spent += _STEP
        return 1 if spent > budget else 0

    setconfig = getattr(conn, "setconfig", None)
    if setconfig is not None:  # Python 3.12+
        setconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, True)  # type: ignore[attr-defined]
    conn.execute("PRAGMA trusted_schema=OFF")
    conn.execute("PRAGMA cell_size_check=ON")
    conn.execute("PRAGMA mmap_size=0")
    conn.set_progress_handler(progress, _STEP)
    try:
        yield
    except sqlite3.OperationalError as exc:
        if spent > budget:
            raise Refused(
                f"reading it took more than the budget of {budget:,} SQLite instructions (A71)"
            ) from None
        raise Refused(f"SQLite cannot read it ({exc})") from None
    finally:
        conn.set_progress_handler(None, 0)


# --- values -------------------------------------------------------------------------------------

_ARTICLE = {"int": "an int", "ECKey": "an EC key"}


def _kind(value: Any) -> str:
    return type(value).__name__


def _an(hint: Any) -> str:
    name = getattr(hint, "__name__", str(hint))
    return _ARTICLE.get(name, f"a {name}")


def conforms(value: Any, hint: Any, where: str = "a value") -> str | None:
    """Why ``value`` does not fit the annotation ``hint``, or None when it does."""
    return _check(value, hint, where, set())


def _check(value: Any, hint: Any, where: str, seen: set[int]) -> str | None:
    if hint is Any:
        return None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if any(_check(value, option, where, seen) is None for option in options):
            return None
        return f"{where} is a {_kind(value)}, not any of {', '.join(map(_an, options))}"
    if hint is type(None):
        return None if value is None else f"{where} is a {_kind(value)}, not None"
    if origin is None:
        return _scalar(value, hint, where, seen)
    args = typing.get_args(hint)
    if origin in (list, set, frozenset, dict, tuple) and id(value) in seen:
        return None  # a container met before: checked once (a pickle may share one many times)
    if not isinstance(value, origin):
        return f"{where} is a {_kind(value)}, not a {origin.__name__}"
    seen.add(id(value))
    if origin is dict:
        for key, item in value.items():
            reason = _check(key, args[0], f"a key of {where}", seen) or _check(
                item, args[1], f"a value of {key!r}" if isinstance(key, str) else f"a value of {where}", seen
            )
            if reason:
                return reason
        return None
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            args = (args[0],) * len(value)
        if len(value) != len(args):
            return f"{where} has {len(value)} items, not {len(args)}"
        return next((r for v, a in zip(value, args, strict=True) if (r := _check(v, a, where, seen))), None)
    return next((r for item in value if (r := _check(item, args[0], f"an item of {where}", seen))), None)


def _scalar(value: Any, hint: Any, where: str, seen: set[int]) -> str | None:
    if hint is bool:
        return None if type(value) is bool else f"{where} is a {_kind(value)}, not a bool"
    if hint is int or hint is float:
        ok = type(value) is int or (hint is float and type(value) is float)
        return None if ok else f"{where} is a {_kind(value)}, not {_an(hint)}"
    if hint is Decimal:
        if type(value) is not Decimal:
            return f"{where} is a {_kind(value)}, not a Decimal"
        return None if value.is_finite() else f"{where} is not a finite decimal"
    if hint is dt.datetime:
        if type(value) is not dt.datetime:
            return f"{where} is a {_kind(value)}, not a datetime"
        return None if value.utcoffset() == dt.timedelta(0) else f"{where} is not a UTC time"
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        if type(value) is not hint:
            return f"{where} is a {_kind(value)}, not a {hint.__name__}"
        if id(value) in seen:
            return None
        seen.add(id(value))
        for name, field_hint in hints(hint).items():
            if name not in vars(value):
                return f"a {hint.__name__} lacks {name}"
            reason = _check(vars(value)[name], field_hint, f"{hint.__name__}.{name}", seen)
            if reason:
                return reason
        return None
    if isinstance(hint, type):
        if isinstance(value, hint):
            if isinstance(value, ECKey) and value.is_private:
                return f"{where} is a private key"
            return None
        return f"{where} is a {_kind(value)}, not {_an(hint)}"
    return None


# --- a state ----------------------------------------------------------------------------------

#: The meta row's fields and types (:func:`clock_and_counters`).
_META = {"seed": int, "now": dt.datetime, "offset": dt.timedelta, "counters": dict[str, int]}


def invalid(meta: Any, random_state: Any, homes: dict[str, dict[Any, Any]], version: int = 4) -> str | None:
    """Why a state read from a file of format ``version`` (its clock and counters, random state
    and homes, as ``kit.sim.statefile.read`` finds them) cannot become a state, or None: a value
    not of its record's type, or out of the bounds a server keeps (``kit.sim.statebounds``)."""
    if meta is not None:
        if not isinstance(meta, dict) or set(meta) != set(_META):
            return "its clock and counters are not the kit's"
        for name, hint in _META.items():
            if hint is dt.timedelta:
                reason = None if type(meta[name]) is dt.timedelta else f"{name} is not a duration"
            else:
                reason = conforms(meta[name], hint, name)
            if reason:
                return reason
        if random_state is not None:
            try:
                random.Random().setstate(random_state)
            except Exception:
                return "its random state is not one Python's random module wrote"
    for home, kept in homes.items():
        key_hint, value_hint = _home_types()[home]
        for key, value in kept.items():
            reason = conforms(key, key_hint, f"a key of {home}") or conforms(
                value, value_hint, f"a record of {home}"
            )
            if reason:
                return f"{home}: {reason}"
    return out_of_bounds(meta, homes, version)


@functools.cache
def _home_types() -> dict[str, tuple[Any, Any]]:
    """Each home's key and record types (the records are defined on first use)."""
    from kit.sim import records, state

    pair = tuple[str, str]
    return {
        "partner_tokens": (str, state.PartnerToken),
        "nonces": (str, state.Nonce),
        "sessions": (str, state.Session),
        "session_starts": (pair, list[dt.datetime]),
        "inbound_events": (str, records.InboundEvent),
        "subscriptions": (str, records.Subscription),
        "deliveries": (str, records.Delivery),
        "idempotency": (pair, state.IdempotencyRecord),
        "faults": (str, state.Fault),
        "accounts": (str, records.Account),
        "persons": (str, records.Person),
        "cards": (str, records.Card),
        "transfers": (str, records.Transfer),
        "document_requests": (str, records.DocumentRequest),
    }
