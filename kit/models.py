"""Typed results: frozen dataclasses with a readable repr and an HTML table for notebooks.

Money is :class:`Money` (a ``Decimal`` and a currency, never a float); times are timezone-aware
``datetime`` objects; sensitive values stay :class:`~kit.Sensitive`. ``from_wire`` builds a
model from an API answer, ignoring fields it does not know.

Example::

    >>> Money.parse("12.50")
    Money('12.50 USD')
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Callable, Mapping
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar, TypedDict, TypeVar

from kit._sensitive import Sensitive

__all__ = [
    "Account",
    "Card",
    "DocumentRequest",
    "InboundEvent",
    "InitData",
    "KycResult",
    "Money",
    "Person",
    "Persona",
    "PiiFields",
    "SessionInfo",
    "Subscription",
    "TokenInfo",
    "Transfer",
    "WebhookEvent",
    "parse_time",
]

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


@dataclasses.dataclass(frozen=True, repr=False)
class TokenInfo(Model):
    """A partner access token: its shape, never its value (``token`` is masked)."""

    token_type: str
    expires_in: int | None
    scope: str | None
    token: Sensitive[str] = dataclasses.field(repr=False)
    #: For the deprecated endpoints: the ``Deprecation`` and ``Link`` headers of the answer.
    deprecation: str | None = None
    link: str | None = None


@dataclasses.dataclass(frozen=True, repr=False)
class InitData(Model):
    """Session initialization data: key ids and algorithms (the nonce stays inside)."""

    kids: tuple[str, ...]
    algorithms: tuple[str, ...]
    enc: tuple[str, ...]
    nonce_expires_at: datetime | None
    nonce: Sensitive[str] = dataclasses.field(repr=False)
    #: Each public key's description (kid, kty, crv or size in bits, use, alg): no key material.
    keys: tuple[dict[str, Any], ...] = dataclasses.field(default=(), repr=False)


@dataclasses.dataclass(frozen=True, repr=False)
class SessionInfo(Model):
    """The device's current session as the client knows it (the token is never shown)."""

    session_type: str
    expiration_strategy: str
    expires_at: datetime | None
    device_id: str
    account_id: str | None = None
    person_id: str | None = None


@dataclasses.dataclass(frozen=True, repr=False)
class Account(Model):
    account_id: str
    status: str
    balance: Money | None
    product: str | None
    created_at: datetime | None


@dataclasses.dataclass(frozen=True, repr=False)
class Person(Model):
    person_id: str
    account_id: str
    status: str


@dataclasses.dataclass(frozen=True, repr=False)
class KycResult(Model):
    person_id: str
    status: str
    attempts_left: int | None


@dataclasses.dataclass(frozen=True, repr=False)
class Card(Model):
    card_id: str
    account_id: str
    type: str
    status: str
    last4: str | None
    expires_on: date | None
    close_reason: str | None
    created_at: datetime | None


@dataclasses.dataclass(frozen=True, repr=False)
class InboundEvent(Model):
    event_id: str
    event_type: str
    account_id: str
    occurred_at: datetime | None
    received_at: datetime | None


@dataclasses.dataclass(frozen=True, repr=False)
class Transfer(Model):
    """A P2P transfer; ``viewer_role`` is ``sender`` or ``receiver`` (header ``svc-p2p-role``)."""

    transfer_id: str
    status: str
    from_account_id: str
    to_person_id: str
    amount: Money | None
    memo: str | None
    created_at: datetime | None
    viewer_role: str | None


@dataclasses.dataclass(frozen=True, repr=False)
class DocumentRequest(Model):
    document_request_id: str
    person_id: str | None
    account_id: str | None
    status: str
    document_type: str | None
    created_at: datetime | None
    completed_at: datetime | None


@dataclasses.dataclass(frozen=True, repr=False)
class Subscription(Model):
    subscription_id: str
    url: str
    events: tuple[str, ...]


@dataclasses.dataclass(frozen=True, repr=False)
class WebhookEvent(Model):
    """A verified webhook delivery: the envelope; ``data`` is the resource as sent."""

    id: str
    type: str
    api_version: str | None
    created_at: datetime | None
    data: Mapping[str, Any] = dataclasses.field(repr=False)
    kid: str | None = None
    iat: int | None = None


class PiiFields(TypedDict):
    """The four PII keyword arguments of ``persons.create``, still wrapped."""

    first_name: Sensitive[str]
    last_name: Sensitive[str]
    date_of_birth: Sensitive[str]
    national_id: Sensitive[str]


@dataclasses.dataclass(frozen=True, repr=False)
class Persona(Model):
    """A synthetic person of the simulator; PII fields are :class:`~kit.Sensitive`.

    ``persona.pii`` unpacks into :meth:`kit._resources.persons.Persons.create`::

        api.persons.create(account_id, **persona.pii)
    """

    persona_id: str
    first_name: Sensitive[str]
    last_name: Sensitive[str]
    date_of_birth: Sensitive[str]
    national_id: Sensitive[str]
    device: Mapping[str, Any] | None

    PII_FIELDS: ClassVar[tuple[str, ...]] = (
        "first_name",
        "last_name",
        "date_of_birth",
        "national_id",
    )

    @classmethod
    def _convert(cls, values: dict[str, Any]) -> dict[str, Any]:
        for name in cls.PII_FIELDS:
            raw = values.get(name)
            values[name] = raw if isinstance(raw, Sensitive) else Sensitive(raw, label=name)
        return values

    @property
    def pii(self) -> PiiFields:
        """The four PII fields, still wrapped, as keyword arguments for ``persons.create``."""
        return PiiFields(
            first_name=self.first_name,
            last_name=self.last_name,
            date_of_birth=self.date_of_birth,
            national_id=self.national_id,
        )
