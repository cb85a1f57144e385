"""Inbound events: the eight types of the spec."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from kit import register
from kit._resources._base import Resource
from kit.models import InboundEvent

__all__ = ["EVENT_TYPES", "Events"]

# The eight types the spec allows (its "Inbound events" section), from data/spec.toml.
EVENT_TYPES: tuple[str, ...] = tuple(register.fact("inbound_event_types"))


def _rfc3339(value: datetime | str) -> str:
    if isinstance(value, str):
        return value
    if value.tzinfo is None:
        raise ValueError("occurred_at must be timezone-aware (UTC)")
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


class Events(Resource):
    """``api.events``."""

    def send(
        self,
        account_id: str,
        event_type: str,
        *,
        occurred_at: datetime | str | None = None,
        details: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> InboundEvent:
        """Send an inbound event for an account (accepted with 202).

        Example::

            >>> api.events.send(acc_id, "password.changed").event_type   # doctest: +SKIP
            'password.changed'

        Raises:
            UnknownEventType: "event type 'password.reset' is not allowed; allowed: …".
        """
        body: dict[str, Any] = {"event_type": event_type}
        if occurred_at is not None:
            body["occurred_at"] = _rfc3339(occurred_at)
        if details is not None:
            body["details"] = dict(details)
        reply = self._requestor.send(
            "send_event",
            {"account_id": account_id},
            json=body,
            idempotency_key=idempotency_key,
            submitted={"unknown-event-type": event_type},
        )
        return InboundEvent.from_wire(reply.body or {})
