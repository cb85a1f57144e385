"""Choice overlays: a TOML file that re-chooses values of register entries.

The register (``data/assumptions.toml``) holds the simulator's choices where the spec says
"not shown"; an entry's ``value`` table is what code reads (:func:`kit.register.value`). An
overlay re-chooses some of those values, one table per entry id, its keys overriding that
entry's value keys::

    description = "another server's choices"   # optional, free text
    [A14]
    months = 24

:func:`load` (a file) and :func:`parse` (a mapping) validate first, and raise
:class:`ChoicesError` (a ``ValueError``) naming the entry and key for: an entry the register
does not have, an entry with no value to re-choose, a key the entry's value does not have, a
value of another type than the register's, and a value the seed contradicts (:data:`SEED_FIXED`:
the spec states it, so no overlay may change it; a register entry may also say so itself, with
``seed_fixed = {key = "statement id"}``). :meth:`Overlay.value` is an entry's effective value
under the overlay, :meth:`Overlay.chosen` one key of it.

A file that re-spells the wire (paths, names, headers: :mod:`kit._dialect`) is a **dialect**;
its own rules are :mod:`kit._dialect_rules`'. This module is in the base room (it imports
:mod:`kit.register`, :mod:`kit._env` and the dialect's modules), so the simulator, the client
and the notebook companion all read overlays the same way.

Example::

    >>> overlay = parse({"A14": {"months": 24}})
    >>> overlay.chosen("A14", "months"), overlay.chosen("A14", "temporary_days")
    (24, 30)
    >>> parse({"A14": {"months": "two years"}})
    Traceback (most recent call last):
    ...
    kit._choices.ChoicesError: [A14] months: expected an integer (the register's type), got a string
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from kit import _env as env
from kit import register
from kit._dialect import DEFAULT as DEFAULT_DIALECT
from kit._dialect import Dialect

__all__ = [
    "EMPTY",
    "SEED_FIXED",
    "SERVED",
    "ChoicesError",
    "Overlay",
    "Problem",
    "dialect",
    "effective",
    "from_env",
    "load",
    "parse",
]

#: Top-level keys of an overlay file that are not entries (free text about the file).
META_KEYS = frozenset({"description"})
_ENTRY_ID = re.compile(r"A\d{2,3}")


class Problem(NamedTuple):
    """One reason an overlay is refused: the entry, the key (``""`` for the whole entry), why."""

    entry: str
    key: str
    message: str

    def __str__(self) -> str:
        where = f"[{self.entry}] {self.key}" if self.key else f"[{self.entry}]"
        return f"{where}: {self.message}"


class ChoicesError(ValueError):
    """An overlay that cannot be used; ``problems`` names each entry and key (the first is the
    message). The client and ``kit regress`` turn it into their own typed error."""

    def __init__(self, problems: list[Problem], source: str | None = None) -> None:
        self.problems = list(problems)
        self.source = source
        first = str(self.problems[0]) if self.problems else "not a dialect file"
        more = len(self.problems) - 1
        tail = f" (and {more} more: {'; '.join(map(str, self.problems[1:4]))})" if more > 0 else ""
        super().__init__(f"{first}{tail}" + (f" in {source}" if source else ""))

    @property
    def entry(self) -> str:
        """The entry of the first problem."""
        return self.problems[0].entry if self.problems else ""

    @property
    def key(self) -> str:
        """The key of the first problem (``""`` for a whole entry)."""
        return self.problems[0].key if self.problems else ""


class Fixed(NamedTuple):
    """A register value the spec states: the statement and what any value must satisfy."""

    statement: str
    rule: str
    holds: Callable[[Any], bool]


def _seed_card_types(value: Any) -> bool:
    return set(register.spec().get("card_types_added", [])) <= set(value)


def _session_types(value: Any) -> bool:
    return sorted(str(v).lower() for v in value) == ["account", "anonymous", "person"]


#: What the spec states of a register value: ``(entry, key)`` → the statement and the rule an
#: overlay's value must keep. Anything else of a value table is a choice.
SEED_FIXED: Mapping[tuple[str, str], Fixed] = MappingProxyType(
    {
        ("A05", "session_types"): Fixed(
            "session.1", "exactly the three session types anonymous, account, person", _session_types
        ),
        ("A13", "types"): Fixed("card.1", 'every card type the spec names ("temporary")', _seed_card_types),
        ("A27", "version"): Fixed(
            "version.1", "the spec's version", lambda v: v == register.spec().get("version")
        ),
        ("A28", "session_id"): Fixed(
            "session.4", "the spec's session header", lambda v: v == register.spec().get("session_header")
        ),
    }
)

#: What a simulator can answer under an overlay: entry → the value keys it applies (``None``:
#: every key). ``kit.sim.personality`` refuses any other key; ``kit regress --write-choices``
#: writes only these (an overlay ``kit serve --choices`` can load).
SERVED: Mapping[str, frozenset[str] | None] = MappingProxyType(
    {
        "A01": frozenset({"token_lifetime_seconds", "client_auth"}),
        "A02": None,
        "A04": frozenset({"nonce_lifetime_seconds"}),
        "A05": frozenset({"session_types"}),
        "A06": frozenset({"strategies", "fixed_seconds", "sliding_idle_seconds", "sliding_max_seconds"}),
        "A10": frozenset({"starting_balance"}),
        "A13": frozenset({"types"}),
        "A14": None,
        "A15": None,
        "A18": None,
        "A20": frozenset({"header", "replayed_header"}),
        "A24": None,
        "A27": frozenset({"header", "versions"}),
        "A28": frozenset({"request_id", "session_expires_at", "assumptions"}),
        "A32": None,
        "A60": None,
        "A61": None,
        "A62": None,
        "A63": None,
        "A64": None,
        "A67": frozenset({"paths"}),
        "A68": None,
    }
)

_TYPE_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}


def _kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list | tuple):
        return "a list"
    return _TYPE_NAMES.get(type(value), f"a {type(value).__name__}")


def _type_fault(want: Any, got: Any) -> str | None:
    """Why ``got`` is not of ``want``'s type (``None`` when it is): bool, int, float (an integer
    will do), str, a list of the first element's type, a table of the same keys."""
    if isinstance(want, bool) or isinstance(got, bool):
        same = isinstance(want, bool) and isinstance(got, bool)
    elif isinstance(want, float):
        same = isinstance(got, int | float)
    elif isinstance(want, list | tuple):
        if not isinstance(got, list | tuple):
            return f"expected a list (the register's type), got {_kind(got)}"
        if want:
            for i, item in enumerate(got):
                fault = _type_fault(want[0], item)
                if fault:
                    return f"item {i}: {fault}"
        return None
    elif isinstance(want, Mapping):
        if not isinstance(got, Mapping):
            return f"expected a table (the register's type), got {_kind(got)}"
        if not want:  # an empty table in the register (A68's renames): names of the file's choosing
            bad = [k for k, v in got.items() if not isinstance(v, str)]
            return f"{bad[0]}: expected a string, got {_kind(got[bad[0]])}" if bad else None
        unknown = sorted(set(got) - set(want))
        if unknown:
            return f"unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(want))})"
        for key in got:
            fault = _type_fault(want[key], got[key])
            if fault:
                return f"{key}: {fault}"
        return None
    else:
        same = type(got) is type(want)
    return None if same else f"expected {_kind(want)} (the register's type), got {_kind(got)}"


def _entries() -> dict[str, dict[str, Any]]:
    return {str(a["id"]): a for a in register.assumptions()}


def _check_entry(entry_id: str, table: Any, entry: Mapping[str, Any] | None) -> list[Problem]:
    if entry is None:
        return [Problem(entry_id, "", "no such entry in the register (data/assumptions.toml)")]
    if not isinstance(table, Mapping):
        return [Problem(entry_id, "", f"expected a table of the entry's value keys, got {_kind(table)}")]
    base = entry.get("value")
    if not isinstance(base, Mapping) or not base:
        return [Problem(entry_id, "", "the entry has no value to re-choose (it has no value table)")]
    problems = []
    fixed_here = entry.get("seed_fixed", {})
    for key, got in table.items():
        if key not in base:
            known = ", ".join(sorted(base))
            problems.append(Problem(entry_id, key, f"no such key in the entry's value (known: {known})"))
            continue
        fault = _type_fault(base[key], got)
        if fault:
            problems.append(Problem(entry_id, key, fault))
            continue
        if isinstance(fixed_here, Mapping) and key in fixed_here and got != base[key]:
            problems.append(
                Problem(
                    entry_id, key, f"the spec states it ({fixed_here[key]}): no dialect file may change it"
                )
            )
            continue
        fixed = SEED_FIXED.get((entry_id, key))
        if fixed is not None and not fixed.holds(got):
            problems.append(
                Problem(entry_id, key, f"the seed contradicts it ({fixed.statement}: {fixed.rule})")
            )
    return problems


@dataclass(frozen=True)
class Overlay:
    """A validated overlay: entry id → the keys it re-chooses (see the module docstring).

    ``source`` is the file it came from (``None`` for a mapping); ``description`` its free text.
    The empty overlay (:data:`EMPTY`) re-chooses nothing: every value is the register's.
    """

    values: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    source: str | None = None
    description: str = ""

    def __bool__(self) -> bool:
        return bool(self.values)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self.values

    def entries(self) -> list[str]:
        """The entry ids this overlay re-chooses, in the register's order."""
        return [str(a["id"]) for a in register.assumptions() if a["id"] in self.values]

    def changes(self, entry_id: str) -> dict[str, Any]:
        """The keys of ``entry_id`` this overlay re-chooses (empty when none)."""
        return dict(self.values.get(entry_id, {}))

    def value(self, entry_id: str) -> dict[str, Any]:
        """``entry_id``'s effective value: the register's value with this overlay's keys over it
        (a table's items over the register's table: ``[A64.codes]`` re-chooses only the codes it names).

        Raises:
            KeyError: no such entry in the register.
        """
        base = register.value(entry_id)
        changes = self.values.get(entry_id, {})
        return {
            **base,
            **{
                k: {**base[k], **v} if isinstance(v, Mapping) and isinstance(base.get(k), Mapping) else v
                for k, v in changes.items()
            },
        }

    def chosen(self, entry_id: str, key: str) -> Any:
        """One key of ``entry_id``'s effective value.

        Raises:
            KeyError: no such entry, or the entry's value has no such key (both named).
        """
        found = self.value(entry_id)
        if key not in found:
            known = ", ".join(sorted(found)) or "none"
            raise KeyError(f"register entry {entry_id} has no value key {key!r} (known: {known})")
        return found[key]


#: The overlay that re-chooses nothing.
EMPTY = Overlay()


def parse(data: Mapping[str, Any], *, source: str | None = None) -> Overlay:
    """Validate ``data`` (entry id → table of value keys) and return the overlay.

    Raises:
        ChoicesError: every problem found, each naming its entry and key (nothing is half-used).
    """
    entries = _entries()
    problems: list[Problem] = []
    values: dict[str, dict[str, Any]] = {}
    description = ""
    for entry_id, table in data.items():
        if entry_id in META_KEYS:
            if not isinstance(table, str):
                problems.append(Problem(entry_id, "", f"expected a string, got {_kind(table)}"))
            description = str(table)
            continue
        if not _ENTRY_ID.fullmatch(entry_id) and entry_id not in entries:
            problems.append(Problem(entry_id, "", "not a register entry id (A01, A02, …) nor 'description'"))
            continue
        found = _check_entry(entry_id, table, entries.get(entry_id))
        problems += found
        if not found:
            values[entry_id] = {k: _frozen(v) for k, v in table.items()}
    if values:
        from kit import _dialect_rules  # the wire's own rules (collisions, standard names, headers)

        problems += [Problem(*found) for found in _dialect_rules.problems(values)]
    if problems:
        raise ChoicesError(problems, source)
    return Overlay(MappingProxyType(values), source, description)


def _frozen(value: Any) -> Any:
    if isinstance(value, list):
        return [_frozen(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _frozen(v) for k, v in value.items()}
    return value


def load(path: str | os.PathLike[str]) -> Overlay:
    """Read and validate an overlay file (TOML).

    Raises:
        ChoicesError: the file cannot be read, is not TOML, or fails validation (entry and key
            named).
    """
    import tomllib  # here: most processes read no overlay (kept out of connect's imports)

    source = str(path)
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise ChoicesError([Problem("file", "", f"cannot be read ({exc.strerror or exc})")], source) from None
    except tomllib.TOMLDecodeError as exc:
        raise ChoicesError([Problem("file", "", f"is not TOML ({exc})")], source) from None
    return parse(data, source=source)


def from_env(environ: Mapping[str, str] | None = None, name: str = env.SIM_CHOICES) -> Overlay | None:
    """The overlay the variable ``name`` names (``KIT_SIM_CHOICES`` by default; the regression
    run's expectation is ``KIT_EXPECT_CHOICES``), or ``None`` when it is not set.

    Raises:
        ChoicesError: as :func:`load`.
    """
    path = (os.environ if environ is None else environ).get(name)
    return load(Path(path)) if path else None


def dialect(choices: str | os.PathLike[str] | Dialect | None) -> Dialect:
    """The dialect a file names (:mod:`kit._dialect`; a ChoicesError as :func:`load`), one already
    read, or the simulator's own for ``None``."""
    if isinstance(choices, Dialect):
        return choices
    return Dialect.of(load(choices)) if choices else DEFAULT_DIALECT


def effective(entry_id: str, overlay: Overlay | None = None) -> dict[str, Any]:
    """``entry_id``'s value under ``overlay`` (the register's own when ``None``).

    Example::

        >>> effective("A14")["months"], effective("A14", parse({"A14": {"months": 24}}))["months"]
        (36, 24)

    Raises:
        KeyError: no such entry.
    """
    return (overlay or EMPTY).value(entry_id)
