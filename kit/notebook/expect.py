"""Comparisons that say what was expected and what came, without leaking a value.

Inside a check (:func:`kit.notebook.check`), compare with :func:`expect`, :func:`expect_in` and
:func:`expect_true` (also methods of the check: ``c.expect(…)``) instead of a bare ``assert``.
A miss raises :class:`Mismatch` (an ``AssertionError``) whose message names ``what`` was
compared and, where the caller says the values are safe to show (``show=True``: codes,
statuses, header names, id *formats* — :func:`id_format`), the values; otherwise only their
kind and length::

    with check("a card's id has the simulator's format", choice="A41") as c:
        c.expect(id_format(card.card_id), "card_ + 20 hex", what="card id format", show=True)
    with check("the refusal names the card's state", choice="A16") as c:
        c.expect(error.code, chosen("A16", "already_closed"), what="problem code", show=True)

Never pass ``show=True`` for a fixture value (a name, a date of birth, a KYC answer), a token or
anything a person typed: the message goes to the cell, ``summary.md`` and JUnit.

Each comparison counts toward every check running in this context (the module functions as
well as the check's methods, a :class:`Tally` per check): a check that made none is reported
failed, "expected nothing" (:mod:`kit.notebook.checks`).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from contextvars import ContextVar, Token
from types import TracebackType
from typing import Any

from kit._plural import counted

__all__ = ["Mismatch", "Tally", "describe", "expect", "expect_in", "expect_true", "id_format", "tally"]

_SHOWN_CHARS = 80
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_PREFIX = re.compile(r"^([A-Za-z][A-Za-z0-9]*[_-])(.*)$")


#: The tallies of the checks running in this context, innermost last.
_RUNNING: ContextVar[tuple[Tally, ...]] = ContextVar("kit_notebook_tallies", default=())


class Tally:
    """How many expectations were made while it is entered (``with Tally() as t: …; t.made``):
    a check enters one around its body.

    Example::

        >>> with Tally() as outer, Tally() as inner:
        ...     expect(1, 1, what="one")
        >>> outer.made, inner.made
        (1, 1)
    """

    def __init__(self) -> None:
        self.made = 0
        self._token: Token[tuple[Tally, ...]] | None = None

    def __enter__(self) -> Tally:
        self._token = _RUNNING.set((*_RUNNING.get(), self))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        token, self._token = self._token, None
        try:
            if token is not None:
                _RUNNING.reset(token)
        except ValueError:  # left in another context than it was entered in: drop it there
            _RUNNING.set(tuple(t for t in _RUNNING.get() if t is not self))


def tally() -> None:
    """Count one expectation toward every check running here (each ``expect*`` does; so does
    :class:`kit.notebook.refused`, a refusal being what its block expects)."""
    for running in _RUNNING.get():
        running.made += 1


class Mismatch(AssertionError):
    """A comparison in a check that did not hold: ``what``, and the expected and received values
    as they may be shown (``want``, ``got``: words, never a hidden value)."""

    def __init__(self, what: str, want: str, got: str, *, shown: tuple[Any, Any] | None = None) -> None:
        self.what, self.want, self.got = what, want, got
        #: ``(want, got)`` as compared, kept only when the caller said they may be shown
        #: (``show=True``): what a choice check records of a difference (:mod:`kit.notebook.observe`).
        self.shown = shown
        super().__init__(f"{what}: expected {want}, got {got}")


def describe(value: Any) -> str:
    """A value's kind without the value: ``a string of 24 characters``, ``an integer``, ``None``.

    Example::

        >>> describe("secret"), describe(3), describe(None), describe([1, 2])
        ('a string of 6 characters', 'an integer', 'None', 'a list of 2 items')
    """
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return f"a string of {counted(len(value), 'character')}"
    if isinstance(value, list | tuple | set | frozenset):
        return f"a {type(value).__name__} of {counted(len(value), 'item')}"
    if isinstance(value, dict):
        return f"a mapping of {counted(len(value), 'key')}"
    return f"a {type(value).__name__}"


def _shown(value: Any, show: bool) -> str:
    if not show:
        return describe(value)
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def id_format(identifier: Any) -> str:
    """An identifier's format, safe to show: ``card_ + 20 hex``, ``UUID``, ``36 characters``.

    Example::

        >>> id_format("card_7f6be71442b1cff4cdeb"), id_format("3f2a6c1e-0d4b-4c8e-9a1f-2b3c4d5e6f70")
        ('card_ + 20 hex', 'UUID')
        >>> id_format("p2p_7f6be71442b1cff4cdeb")
        'p2p_ + 20 hex'
        >>> id_format("AB12"), id_format(None)
        ('4 letters and digits', 'None')
    """
    if not isinstance(identifier, str):
        return describe(identifier)
    if _UUID.match(identifier):
        return "UUID"
    prefix, rest = "", identifier
    found = _PREFIX.match(identifier)
    if found and found.group(2):
        prefix, rest = found.group(1), found.group(2)
    if _UUID.match(rest):
        body = "UUID"
    elif re.fullmatch(r"[0-9a-f]+", rest):
        body = f"{len(rest)} hex"
    elif rest.isdigit():
        body = f"{len(rest)} digits"
    elif rest.isalnum():
        body = f"{len(rest)} letters and digits"
    else:
        body = f"{len(rest)} characters"
    return f"{prefix} + {body}" if prefix else body


def expect(got: Any, want: Any, *, what: str, show: bool = False) -> None:
    """``got == want``, or :class:`Mismatch` naming ``what`` (values shown only with ``show``).

    Example::

        >>> expect(404, 404, what="status", show=True)
        >>> expect(409, 404, what="status", show=True)
        Traceback (most recent call last):
        ...
        kit.notebook.expect.Mismatch: status: expected 404, got 409
    """
    tally()
    if got != want:
        raise Mismatch(what, _shown(want, show), _shown(got, show), shown=(want, got) if show else None)


def expect_in(got: Any, allowed: Collection[Any], *, what: str, show: bool = False) -> None:
    """``got in allowed``, or :class:`Mismatch` (the allowed values listed only with ``show``).

    Example::

        >>> expect_in("lost", ["lost", "stolen"], what="close reason", show=True)
    """
    tally()
    if got not in allowed:
        want = (
            "one of " + ", ".join(_shown(a, True) for a in allowed)
            if show
            else f"one of {len(allowed)} allowed values"
        )
        raise Mismatch(what, want, _shown(got, show))


def expect_true(condition: object, what: str, *, got: Any = None, want: str = "true") -> None:
    """``condition`` holds, or :class:`Mismatch` naming ``what``: ``want`` says in words what
    was expected, ``got`` (shown as given: pass only what is safe) what came.

    Example::

        >>> expect_true(False, "the card is listed", got="not in the list", want="in the list")
        Traceback (most recent call last):
        ...
        kit.notebook.expect.Mismatch: the card is listed: expected in the list, got not in the list
    """
    tally()
    if not condition:
        raise Mismatch(what, want, "false" if got is None else str(got)[:_SHOWN_CHARS])
