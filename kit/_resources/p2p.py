"""P2P transfers: person sessions tell the sender from the receiver."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from kit._resources._base import Resource
from kit.models import Money, Transfer

__all__ = ["P2P"]


class P2P(Resource):
    """``api.p2p``."""

    def transfer(
        self,
        *,
        from_account_id: str,
        to_person_id: str,
        amount: Money | Decimal | str | int,
        currency: str = "USD",
        memo: str | None = None,
        idempotency_key: str | None = None,
    ) -> Transfer:
        """Send money to a person; the same Idempotency-Key across retries moves it once.

        Example::

            >>> api.p2p.transfer(from_account_id=a, to_person_id=p, amount="12.50").status  # doctest: +SKIP
            'completed'

        Raises:
            SessionTypeNotAllowed: needs the sender's person session.
            InvalidAmount, UnsupportedCurrency, SelfTransfer, RecipientNotEligible,
            InsufficientFunds: no money moved.
        """
        money = Money.parse(amount, currency)
        body: dict[str, Any] = {
            "from_account_id": from_account_id,
            "to_person_id": to_person_id,
            "amount": money.to_wire(),
        }
        if memo is not None:
            body["memo"] = memo
        reply = self._requestor.send("create_transfer", json=body, idempotency_key=idempotency_key)
        role = reply.headers.get(self._requestor.transport.names.p2p_role)
        return Transfer.from_wire(reply.body or {}, viewer_role=role)

    def get(self, transfer_id: str) -> Transfer:
        """A transfer as the current person sees it (``viewer_role`` sender or receiver).

        Raises:
            TransferNotFound: neither sender nor receiver. SessionTypeNotAllowed: not a person.
        """
        reply = self._requestor.send("get_transfer", {"transfer_id": transfer_id})
        body = dict(reply.body or {})
        role = body.pop("viewer_role", None) or reply.headers.get(self._requestor.transport.names.p2p_role)
        return Transfer.from_wire(body, viewer_role=role)
