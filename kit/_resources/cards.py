"""Cards: the partner token suffices; the current session is sent when known
(spec rule 5) and must then be bound to the card's account."""

from __future__ import annotations

from kit import register
from kit._resources._base import Resource
from kit.models import Card

__all__ = ["CARD_TYPES", "CLOSE_REASONS", "Cards"]

#: The card types and close reasons the simulator accepts (register entries A13 and A15).
CARD_TYPES: tuple[str, ...] = tuple(register.value("A13")["types"])
CLOSE_REASONS: tuple[str, ...] = tuple(register.value("A15")["reasons"])


class Cards(Resource):
    """``api.cards``."""

    def create(self, account_id: str, *, type: str = "temporary", idempotency_key: str | None = None) -> Card:
        """Issue a card (``physical``, ``virtual`` or ``temporary``).

        Example::

            >>> api.cards.create(acc_id, type="temporary").status    # doctest: +SKIP
            'active'

        Raises:
            UnknownCardType, AccountNotFound, SessionNotBound.
        """
        reply = self._requestor.send(
            "create_card",
            {"account_id": account_id},
            json={"type": type},
            idempotency_key=idempotency_key,
            submitted={"unknown-card-type": type},
        )
        return Card.from_wire(reply.body or {})

    def get(self, card_id: str) -> Card:
        """Read a card (status ``active``, ``closed`` or ``expired``).

        Raises:
            CardNotFound, SessionNotBound.
        """
        reply = self._requestor.send("get_card", {"card_id": card_id})
        return Card.from_wire(reply.body or {})

    def close(self, card_id: str, *, reason: str | None = None, idempotency_key: str | None = None) -> Card:
        """Close a card, optionally with a reason (1.2.0); emits the ``card.closed`` webhook.

        Example::

            >>> api.cards.close(card.card_id, reason="lost").close_reason   # doctest: +SKIP
            'lost'

        Raises:
            UnknownCloseReason: the message lists the allowed reasons.
            CardAlreadyClosed, CardNotActive, CardNotFound.
        """
        body = {} if reason is None else {"reason": reason}
        reply = self._requestor.send(
            "close_card",
            {"card_id": card_id},
            json=body,
            idempotency_key=idempotency_key,
            submitted={"unknown-close-reason": str(reason)},
        )
        return Card.from_wire(reply.body or {})
