"""What happens when simulator time passes: cards expire (A14, A38), webhook retries fall due
(A25) and stale records are forgotten (A59).

On a seeded clock time passes only when the control plane moves it (``POST
/_sim/clock/advance`` calls :func:`clock_moved`). On the wall clock (A46) it passes by itself:
:func:`follow_wall_clock` runs beside the app, retries every second, expiry and bounds every
minute.

    >>> task = asyncio.create_task(follow_wall_clock(sim))  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import logging

from kit import register
from kit.sim.pipeline import session_expires_at
from kit.sim.runtime import Sim

_WALL = register.value("A46")
#: How often, on the wall clock, due webhook retries are sent (seconds).
RETRIES_EVERY_S = float(_WALL["retries_every_seconds"])
#: How often, on the wall clock, cards expire and time bounds act (seconds).
EXPIRY_EVERY_S = float(_WALL["expiry_and_bounds_every_seconds"])
_log = logging.getLogger("kit.sim")


async def clock_moved(sim: Sim) -> None:
    """Catch up with the clock: expire cards, send due retries, forget stale records."""
    if sim.state.cards:  # the cards' routes are imported by the first card, not by a session
        from kit.sim.routes.cards import expire_cards

        expire_cards(sim)
    await sim.delivery.run_due()
    lifetimes = sim.personality.sessions
    # time-based bounds act when the clock moves (A59)
    sim.state.sweep(lambda s: session_expires_at(s, lifetimes), sim.personality.rate_window)


async def follow_wall_clock(
    sim: Sim, *, retries_every: float = RETRIES_EVERY_S, expiry_every: float = EXPIRY_EVERY_S
) -> None:
    """Until cancelled: due retries every ``retries_every`` seconds, :func:`clock_moved` every
    ``expiry_every``. A failing round is retried at the next one; the server stays up."""
    rounds = max(1, round(expiry_every / retries_every))
    tick = 0
    while True:
        await asyncio.sleep(retries_every)
        tick += 1
        try:
            if tick % rounds == 0:
                await clock_moved(sim)
            else:
                await sim.delivery.run_due()
            sim.state.commit()  # a durable simulator writes what time did
        except Exception as exc:  # a week-long server outlives one bad round; the next retries
            _log.warning("wall-clock round failed: %s", type(exc).__name__)
