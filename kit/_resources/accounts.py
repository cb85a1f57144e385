"""Accounts: ``POST /accounts`` under an anonymous session."""

from __future__ import annotations

from kit import register
from kit._resources._base import Resource
from kit.models import Account

__all__ = ["Accounts"]


class Accounts(Resource):
    """``api.accounts``."""

    def create(self, *, product: str | None = None, idempotency_key: str | None = None) -> Account:
        """Open an account; the device becomes bound to it. ``product``: the register's first
        product (A10: ``spending``) unless given.

        Example::

            >>> api.accounts.create().status      # doctest: +SKIP
            'open'

        Raises:
            SessionRequired, SessionTypeNotAllowed: needs the current anonymous session.
            UnknownProduct: a product the server does not offer.
        """
        product = product or str(register.value("A10")["products"][0])
        reply = self._requestor.send(
            "create_account",
            json={"product": product},
            idempotency_key=idempotency_key,
            submitted={"unknown-product": product},
        )
        return Account.from_wire(reply.body or {})
