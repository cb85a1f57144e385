"""The durable journal's hand-off: a request's changes written before its answer leaves.

A durable simulator (``kit serve --state``, ``kit.sim.durable``, ``kit.sim.journal``) runs each
request as one unit of its journal; ``ServiceHeaders`` (``kit.sim.middleware``) hands the request
here, and its changes are flushed when its answer starts to leave, or, when it ends without one
(a disconnect, an error), committed all the same.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kit.sim.state import State

__all__ = ["durably"]


async def durably(state: State, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Run ``app`` on the request as one unit of ``state``'s journal; its changes are written
    before its answer starts to leave, or when it ends without one."""
    journal = state.journal
    assert journal is not None
    written = False

    async def send_once_written(message: Message) -> None:
        nonlocal written
        if message["type"] == "http.response.start" and not written:
            await state.flush()
            journal.flushed()
            written = True
        await send(message)

    try:
        with journal.unit():
            await app(scope, receive, send_once_written)
    finally:
        if not written:  # no answer sent (a disconnect, an error): written all the same
            state.commit()
