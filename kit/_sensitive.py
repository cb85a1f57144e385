"""Wrappers that keep secrets and personal data out of every output, by mechanism.

:class:`Sensitive` holds PII, decrypted secure data and credentials (tokens, client secrets,
nonces). Its ``repr``, ``str``, ``format`` and HTML display are masked; it refuses pickling
and JSON; :meth:`Sensitive.reveal` hands the value over for use in memory (spec
rules 3 and 4).

Example::

    >>> from kit import Sensitive
    >>> dob = Sensitive("1990-04-01", label="date_of_birth")
    >>> dob
    Sensitive(date_of_birth=••••••)
    >>> dob.reveal()
    '1990-04-01'
"""

from __future__ import annotations

from typing import Any, Generic, NoReturn, TypeVar

from kit.errors import SensitiveDataError

__all__ = ["MASK", "Sensitive", "reveal"]

T = TypeVar("T")

MASK = "••••••"


class Sensitive(Generic[T]):
    """A value that must never be shown, logged, pickled or serialized.

    Example::

        >>> s = Sensitive({"questions": []}, label="kyc_questions")
        >>> str(s)
        '••••••'

    Raises:
        SensitiveDataError: on pickling (``pickle.dumps``) or copying to disk by pickle.
    """

    __slots__ = ("_label", "_value")
    _value: T
    _label: str

    def __init__(self, value: T, *, label: str = "sensitive") -> None:
        object.__setattr__(self, "_value", value)
        object.__setattr__(self, "_label", label)

    def reveal(self) -> T:
        """The wrapped value, for use in memory only (never print, log or store it)."""
        return self._value

    @property
    def label(self) -> str:
        """What the value is (``"first_name"``, ``"session_token"``…); never the value."""
        return self._label

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("Sensitive values are immutable")

    def __repr__(self) -> str:
        return f"Sensitive({self._label}={MASK})"

    def __str__(self) -> str:
        return MASK

    def __format__(self, spec: str) -> str:
        return format(MASK, spec)

    def _repr_html_(self) -> str:
        return f'<span title="{self._label}: hidden">{MASK}</span>'

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # IPython's pretty printer
        p.text(repr(self))

    def _refuse(self) -> NoReturn:
        raise SensitiveDataError(
            f"refusing to pickle a Sensitive value ({self._label}): "
            "it must not leave memory; use .reveal() deliberately if you must"
        )

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        self._refuse()

    def __reduce__(self) -> NoReturn:
        self._refuse()

    def __getstate__(self) -> NoReturn:
        self._refuse()

    def __copy__(self) -> Sensitive[T]:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Sensitive[T]:
        return self

    # Comparison reveals nothing printable; it lets tests and callers check equality in memory.
    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sensitive):
            return bool(self._value == other._value)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def reveal(value: Any) -> Any:
    """``value.reveal()`` for a :class:`Sensitive`, the value itself otherwise."""
    return value.reveal() if isinstance(value, Sensitive) else value
