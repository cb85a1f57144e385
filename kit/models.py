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
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

from kit._lazy import resolved_from
from kit._modelbase import Model, Money, parse_time
from kit._sensitive import Sensitive

if TYPE_CHECKING:
    from kit._results import (
        Account,
        Card,
        DocumentRequest,
        InboundEvent,
        KycResult,
        Person,
        Subscription,
        Transfer,
        WebhookEvent,
    )

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


#: The resources' results, defined in :mod:`kit._results` when one is first used.
_RESULTS = frozenset(
    {"Account", "Card", "DocumentRequest", "InboundEvent", "KycResult", "Person", "Subscription"}
    | {"Transfer", "WebhookEvent"}
)


__getattr__, __dir__ = resolved_from("kit._results", _RESULTS, globals())
