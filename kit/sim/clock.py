"""The simulator's clock: seeded and moved only by the control plane, or the wall clock (A46)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import lru_cache


def parse_time(text: str) -> datetime:
    """An RFC 3339 UTC time (``Z`` or an offset) as an aware datetime."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError("a time zone is required")
    return value.astimezone(UTC)


@lru_cache(maxsize=1024)  # a seeded clock names the same few instants in every answer
def format_time(value: datetime) -> str:
    """RFC 3339 UTC with a ``Z`` and whole seconds (sub-seconds kept when present)."""
    value = value.astimezone(UTC)
    if value.microsecond:
        return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def _machine_time() -> datetime:
    return datetime.now(UTC)


class Clock:
    """Simulator time: seeded, or following the wall clock (A46).

    A seeded clock starts at ``start`` and changes only through :meth:`advance` or
    :meth:`reset`: the same seed and calls give the same times. A ``wall`` clock reads the
    machine's UTC time (``source``, for tests) in whole seconds, never going back;
    :meth:`advance` adds to an offset and :meth:`reset` clears it. ``kit serve --no-control``
    runs on the wall clock, as a partner's sandbox does: without a control plane nobody could
    move a seeded one.

        >>> clock = Clock("2025-01-06T09:00:00Z")
        >>> format_time(clock.advance(90))
        '2025-01-06T09:01:30Z'
    """

    def __init__(
        self, start: str, *, wall: bool = False, source: Callable[[], datetime] | None = None
    ) -> None:
        self.wall = wall
        self._source = source or _machine_time
        self._start = parse_time(start)
        self._offset = timedelta(0)
        self._now: datetime
        self.reset()  # the seeded start, or the machine's time

    @property
    def now(self) -> datetime:
        if self.wall:  # whole seconds (A41's format), and never before a time already given
            self._now = max(self._now, self._source().replace(microsecond=0) + self._offset)
        return self._now

    def reset(self) -> None:
        self._offset = timedelta(0)
        self._now = self._source().replace(microsecond=0) if self.wall else self._start

    def advance(self, seconds: float) -> datetime:
        if self.wall:
            self._offset += timedelta(seconds=seconds)
            return self.now
        self._now = self._now + timedelta(seconds=seconds)
        return self._now

    def after(self, seconds: float) -> datetime:
        return self.now + timedelta(seconds=seconds)
