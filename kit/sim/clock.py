"""The simulator's clock: frozen at a seeded start, moved only by the control plane."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def parse_time(text: str) -> datetime:
    """An RFC 3339 UTC time (``Z`` or an offset) as an aware datetime."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError("a time zone is required")
    return value.astimezone(UTC)


def format_time(value: datetime) -> str:
    """RFC 3339 UTC with a ``Z`` and whole seconds (sub-seconds kept when present)."""
    value = value.astimezone(UTC)
    if value.microsecond:
        return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


class Clock:
    """Simulator time. ``now`` only changes through :meth:`advance` or :meth:`reset`."""

    def __init__(self, start: str) -> None:
        self._start = parse_time(start)
        self._now = self._start

    @property
    def now(self) -> datetime:
        return self._now

    def reset(self) -> None:
        self._now = self._start

    def advance(self, seconds: float) -> datetime:
        self._now = self._now + timedelta(seconds=seconds)
        return self._now

    def after(self, seconds: float) -> datetime:
        return self._now + timedelta(seconds=seconds)
