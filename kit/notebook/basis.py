"""What a check rests on: a statement of the spec or a register entry, and the values expected.

Every check names its **basis** (:func:`kit.notebook.check`): ``spec="card.1"`` — a statement
of the spec (its id in ``data/spec.toml``): any server that keeps the spec must hold it — or
``choice="A15"`` — a register entry (``data/assumptions.toml``): what the simulator chose where
the spec says "not shown", which another server may choose differently.

The values a choice check compares with come from :func:`chosen`: the register's, or those of
an **expectation overlay** (:mod:`kit._choices`) — named by ``KIT_EXPECT_CHOICES`` (``kit regress
--choices FILE`` sets it for every kernel) or set here with :func:`expect_choices` — so that a
run against a server whose choices are known expects them (known differences stop being news).

Example::

    >>> Basis.of(spec=None, choice="A14").describe()
    'choice A14'
    >>> chosen("A14", "months") == kit.register.value("A14")["months"]   # doctest: +SKIP
    True
"""

from __future__ import annotations

import os
import re
import threading
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from kit import _choices as choices
from kit import _env as env
from kit import register
from kit._choices import ChoicesError, Overlay
from kit.errors import ConfigError
from kit.notebook.companion import COMPANION

__all__ = [
    "Basis",
    "chosen",
    "expect_choices",
    "expectation",
    "problem_code",
    "require_basis",
    "statement_ids",
]

_STATEMENT_ID = re.compile(r"^[a-z][a-z_]*\.\d+$")


@cache
def statement_ids() -> frozenset[str]:
    """The ids of the spec's statements (``data/spec.toml`` ``[[statement]]``; empty when the
    file has no ids)."""
    with open(register.data_dir() / "spec.toml", "rb") as f:
        found = tomllib.load(f).get("statement", [])
    return frozenset(str(s["id"]) for s in found if isinstance(s, dict) and "id" in s)


@cache
def _entry_ids() -> frozenset[str]:
    return frozenset(str(a["id"]) for a in register.assumptions())


@dataclass(frozen=True)
class Basis:
    """A check's basis: ``kind`` ``"spec"`` (a spec statement) or ``"choice"`` (a register
    entry), and the ``id``; ``kind == ""`` for a check that names none (deprecated)."""

    kind: str = ""
    id: str = ""

    @classmethod
    def of(cls, *, spec: str | None, choice: str | None) -> Basis:
        """The basis of ``spec=`` or ``choice=`` (at most one), validated.

        Raises:
            ValueError: both given; an id not in ``data/spec.toml`` / the register (named).
        """
        if spec and choice:
            raise ValueError(
                f"a check rests on one basis: spec={spec!r} or choice={choice!r}, not both; "
                "split it into a spec check and a choice check"
            )
        if spec:
            known = statement_ids()
            if (known and spec not in known) or (not known and not _STATEMENT_ID.match(spec)):
                raise ValueError(f"spec={spec!r}: no such statement of the seed (ids of data/spec.toml)")
            return cls("spec", spec)
        if choice:
            if choice not in _entry_ids():
                raise ValueError(f"choice={choice!r}: no such register entry (data/assumptions.toml)")
            return cls("choice", choice)
        if _STRICT.on:
            raise TypeError(
                "a check names its basis: check(name, spec='<statement id>') for what the spec "
                "states, or check(name, choice='A..') for a register entry"
            )
        return cls()

    def __bool__(self) -> bool:
        return bool(self.kind)

    def describe(self) -> str:
        """``"spec card.1"``, ``"choice A15"`` (empty without a basis)."""
        return f"{self.kind} {self.id}" if self else ""


class _Strict:
    on = False


_STRICT = _Strict()


def require_basis(on: bool = True) -> None:
    """Make a check without ``spec=`` or ``choice=`` an error (``TypeError``).

    Off until every notebook names its checks' bases; then the default becomes on and this
    switch goes away.
    """
    _STRICT.on = on


_lock = threading.Lock()
_expected: dict[str, Overlay | None] = {}


def expect_choices(overlay: Overlay | str | os.PathLike[str] | None) -> Overlay | None:
    """Expect ``overlay``'s values in choice checks (a file path, an :class:`Overlay`, or
    ``None`` for the register's own); the environment's ``KIT_EXPECT_CHOICES`` is not read again.

    Raises:
        ConfigError: the file is not a valid overlay (entry and key named).
    """
    if overlay is not None and not isinstance(overlay, Overlay):
        overlay = _load(Path(overlay))
    with _lock:
        _expected["set"] = overlay
    return overlay


def _load(path: Path) -> Overlay:
    try:
        return choices.load(path)
    except ChoicesError as exc:
        raise ConfigError(f"dialect file {path}: {exc}") from None


def expectation() -> Overlay | None:
    """The overlay choice checks expect: the one given to :func:`expect_choices`, else the file
    ``KIT_EXPECT_CHOICES`` names, else ``None`` (the register's values).

    Raises:
        ConfigError: the file is not a valid overlay.
    """
    with _lock:
        if "set" in _expected:
            return _expected["set"]
    path = os.environ.get(env.EXPECT_CHOICES)
    found = _load(Path(path)) if path else None
    with _lock:
        _expected.setdefault("set", found)
        return _expected["set"]


def chosen(entry: str, key: str) -> Any:
    """The value a choice check expects for ``entry``'s ``key``: the expectation overlay's
    (:func:`expectation`) when it re-chooses it, else the register's.

    Example::

        >>> chosen("A14", "months")                 # doctest: +SKIP
        36

    Raises:
        KeyError: no such entry, or no such key in its value (both named).
        ConfigError: the expectation overlay's file is not valid.
    """
    value = (expectation() or choices.EMPTY).chosen(entry, key)
    COMPANION.chose(entry, key, value)  # what a difference is compared with (kit.notebook.observe)
    return value


#: The register entry whose ``codes`` table names every problem code (the spec shows none).
CODES_ENTRY = "A64"


def problem_code(name: str) -> str:
    """The problem code a choice check expects for the problem ``name`` (the simulator's name
    for it): the spec shows no codes, so each is register entry A64's choice, or the
    expectation overlay's (:func:`chosen`, so a difference is observed as for any choice).

    Example::

        >>> problem_code("card-already-closed")            # doctest: +SKIP
        'card-already-closed'

    Raises:
        KeyError: no problem of that name in the register's table of codes.
    """
    codes = chosen(CODES_ENTRY, "codes")
    if name not in codes:
        raise KeyError(f"{name!r} is not a problem of the register's table of codes ({CODES_ENTRY})")
    code: str = codes[name]
    return code


def chooser(entry: str) -> str:
    """Who made the choice a check of ``entry`` expects: ``the simulator`` or the overlay."""
    overlay = expectation()
    if overlay is not None and entry in overlay:
        return f"the expected dialect file ({Path(overlay.source).name if overlay.source else 'given'})"
    return "the simulator"
