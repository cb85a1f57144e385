"""Persons: PII goes only inside ``encrypted_pii`` (spec rule 3)."""

from __future__ import annotations

from datetime import date

from kit._resources._base import Resource
from kit._sensitive import Sensitive, reveal
from kit.models import Person

__all__ = ["Persons"]

PiiValue = str | date | Sensitive[str]


def _plain(value: PiiValue) -> str:
    value = reveal(value)
    return value.isoformat() if isinstance(value, date) else str(value)


class Persons(Resource):
    """``api.persons``."""

    def create(
        self,
        account_id: str,
        *,
        first_name: PiiValue,
        last_name: PiiValue,
        date_of_birth: PiiValue,
        national_id: PiiValue,
        idempotency_key: str | None = None,
    ) -> Person:
        """Add a person to an account; the PII is encrypted to the server key (``encrypted_pii``).

        Values may be ``str`` or :class:`~kit.Sensitive` (``**persona.pii`` from the sim).

        Example::

            >>> api.persons.create(acc.account_id, **persona.pii).status   # doctest: +SKIP
            'kyc_pending'

        Raises:
            SessionRequired, SessionNotBound: needs an account or person session of the account.
            ValidationError: e.g. a date of birth in the future (field ``/encrypted_pii``).
        """
        pii = {
            "first_name": _plain(first_name),
            "last_name": _plain(last_name),
            "date_of_birth": _plain(date_of_birth),
            "national_id": _plain(national_id),
        }
        body = self._requestor.sealed("create_person", pii)
        del pii
        reply = self._requestor.send(
            "create_person",
            {"account_id": account_id},
            json=body,
            idempotency_key=idempotency_key,
        )
        return Person.from_wire(reply.body or {})
