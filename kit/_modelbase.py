"""What every typed result shares (:mod:`kit.models` documents them): :class:`Money`, the
:class:`Model` base (repr, HTML, ``from_wire``, ``to_dict``) and how a wire value becomes a
field's value. Apart from :mod:`kit.models` so that :mod:`kit._results` builds on it without
importing the module that names it.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Callable, Mapping
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar, TypeVar

M = TypeVar("M", bound="Model")


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 string as an aware ``datetime`` (``None`` stays ``None``)."""
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _parse_date(value: Any) -> date | None:
    if value is None or isinstance(value, date):
        return value
    return date.fromisoformat(str(value))


def _cell(value: Any) -> str:
    """A field as a table cell: ``-`` for nothing, text without quotes, lists comma-separated."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return ", ".join(_cell(v) for v in value) or "-"
    return _show(value)


def _show(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Money):
        return str(value)
    return repr(value)


@dataclasses.dataclass(frozen=True)
class Money:
    """An amount of money: ``Decimal`` plus an ISO 4217 currency (the wire contract: USD only).

    Example::

        >>> Money.parse("12.5").to_wire()
        {'value': '12.5', 'currency': 'USD'}

    Raises:
        TypeError: a float amount (binary floats cannot hold cents exactly).
        ValueError: an amount that is not a decimal number.
    """

    amount: Decimal
    currency: str = "USD"

    @classmethod
    def parse(cls, amount: Money | Decimal | str | int, currency: str = "USD") -> Money:
        if isinstance(amount, Money):
            return amount
        if isinstance(amount, float):
            raise TypeError("money must not be a float; pass a string such as '12.50' or a Decimal")
        try:
            value = Decimal(str(amount)) if not isinstance(amount, Decimal) else amount
        except InvalidOperation as exc:
            raise ValueError(f"{amount!r} is not a decimal amount") from exc
        return cls(value, currency)

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Money:
        return cls(Decimal(str(data["value"])), str(data.get("currency", "USD")))

    def to_wire(self) -> dict[str, str]:
        """``{"value": "12.50", "currency": "USD"}``; the value is sent as given, never rounded."""
        return {"value": format(self.amount, "f"), "currency": self.currency}

    def __str__(self) -> str:
        return f"{format(self.amount, 'f')} {self.currency}"

    def __repr__(self) -> str:
        return f"Money('{self}')"


class Model:
    """Shared behaviour of the result dataclasses (repr, HTML, ``from_wire``, ``to_dict``)."""

    _title: ClassVar[str] = ""

    def __repr__(self) -> str:
        parts = ", ".join(
            f"{f.name}={_show(getattr(self, f.name))}"
            for f in dataclasses.fields(self)  # type: ignore[arg-type]
            if f.repr
        )
        return f"{type(self).__name__}({parts})"

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(f.name)}</th>"
            f"<td style='text-align:left'>{html.escape(_cell(getattr(self, f.name)))}</td></tr>"
            for f in dataclasses.fields(self)  # type: ignore[arg-type]
            if f.repr
        )
        return f"<table><caption>{html.escape(type(self).__name__)}</caption>{rows}</table>"

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict (Sensitive values stay wrapped)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]

    @classmethod
    def from_wire(cls: type[M], data: Mapping[str, Any], **extra: Any) -> M:
        """Build from a JSON object: unknown keys dropped, missing ones ``None`` (an absent
        optional field stays absent: ``-`` in tables), and each value converted by its field's
        type (:data:`FROM_WIRE`: times, dates, money, lists). A value that cannot be converted
        (another server's format) is kept as ``None`` too — the contract check reports it — so
        that a different field never crashes the caller.

        Example::

            >>> from kit.models import Card
            >>> Card.from_wire({"card_id": "c1", "created_at": "yesterday"}).created_at is None
            True
        """
        values = {**data, **extra}
        fields = dataclasses.fields(cls)  # type: ignore[arg-type]
        converted = {
            f.name: _converted(FROM_WIRE.get(str(f.type), _same), values.get(f.name)) for f in fields
        }
        return cls(**cls._convert(converted))

    @classmethod
    def _convert(cls, values: dict[str, Any]) -> dict[str, Any]:
        return values


def _same(value: Any) -> Any:
    return value


def _converted(convert: Callable[[Any], Any], value: Any) -> Any:
    try:
        return convert(value)
    except (ValueError, TypeError, KeyError, InvalidOperation):
        return None


#: How a wire value becomes a field's value, by the field's annotation.
FROM_WIRE: dict[str, Callable[[Any], Any]] = {
    "datetime | None": parse_time,
    "date | None": _parse_date,
    "Money | None": lambda v: Money.from_wire(v) if isinstance(v, Mapping) else v,
    "tuple[str, ...]": lambda v: tuple(v or ()),
    "Mapping[str, Any]": lambda v: dict(v or {}),
}
