"""An ASGI app of the notebook's own, served on loopback for a demonstration: notebook 08's
webhook receiver runs under it. What a notebook need not read: uvicorn in a background thread,
a free port, a record of what the app answered (the event id and the status, never a header
or the body), and the last delivery it accepted, kept in memory to send it again: a replay, or a
forgery when the body is changed. ``about`` narrows all of it to the deliveries that name one
resource (a card id…): a server delivers each of the partner's events to every subscription, so
an app on a server shared with other runs gets theirs too.

Example::

    >>> with local_app(webhook_app(api), about=card_id) as running:  # doctest: +SKIP
    ...     api.webhooks.subscribe(running.url, ["card.closed"])
    ...     api.cards.close(card_id, reason="lost")            # the service delivers card.closed
    ...     running.wait()                                     # your app answered it: 204
    ...     replayed = running.send_again()                    # the same again: 200, not processed twice
"""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from time import monotonic, sleep
from typing import Any

__all__ = ["Running", "local_app"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: How long the app may take to start, and a caller waits for its first answer.
START_SECONDS = 10.0
#: Headers of the delivery not sent again as they came: the connection's own (httpx sets them).
_HOP_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})


@dataclass
class Running:
    """The app as it runs: ``url`` (its path ``/webhooks``: the port varies, never print it),
    ``answers`` (one ``{"event", "answer"}`` per request) and the last delivery answered 2xx."""

    url: str
    answers: list[dict[str, Any]] = field(default_factory=list)
    last: tuple[bytes, dict[str, str]] | None = None
    _answered: threading.Condition = field(default_factory=threading.Condition, repr=False)

    def wait(self, count: int = 1, timeout: float = START_SECONDS) -> None:
        """Until ``count`` requests have been answered (or ``timeout`` seconds)."""
        with self._answered:
            self._answered.wait_for(lambda: len(self.answers) >= count, timeout)

    def _record(self, answer: dict[str, Any], accepted: tuple[bytes, dict[str, str]] | None) -> None:
        with self._answered:
            self.answers.append(answer)
            if accepted is not None:
                self.last = accepted
            self._answered.notify_all()

    def _accepted(self) -> tuple[bytes, dict[str, str]]:
        if self.last is None:
            raise LookupError("the app has accepted no delivery yet")
        return self.last

    @property
    def last_body(self) -> bytes:
        """The body of the last delivery the app accepted (answered 2xx), byte for byte.

        Raises:
            LookupError: the app has accepted no delivery yet.
        """
        return self._accepted()[0]

    def send_again(self, *, body: bytes | None = None, timeout: float = START_SECONDS) -> int:
        """Send the last delivery the app accepted to it again, with the headers it came with
        (its signature among them), and return the status the app answers: a replay. ``body``:
        other bytes in its place under the same signature (a forgery). Recorded in ``answers``.

        Raises:
            LookupError: the app has accepted no delivery yet.
        """
        import httpx

        original, received = self._accepted()
        headers = {k: v for k, v in received.items() if k.lower() not in _HOP_HEADERS}
        content = original if body is None else body
        return httpx.post(self.url, content=content, headers=headers, timeout=timeout).status_code


def _peek(body: bytes) -> tuple[str, set[str]]:
    """The event id a delivery's body names, and every string in it (unverified, in whatever
    names the server's dialect gives its members: ``about`` is looked for among the values)."""
    try:
        event = json.loads(body)
        found = event.get("id", "-")
    except (ValueError, AttributeError):
        return "-", set()
    return (found if isinstance(found, str) else "-"), set(_strings(event))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict | list):
        for item in value.values() if isinstance(value, dict) else value:
            yield from _strings(item)


def _recording(app: ASGIApp, running: Running, about: str | None) -> ASGIApp:
    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        chunks: list[bytes] = []

        async def reading() -> Message:
            message = await receive()
            chunks.append(message.get("body", b""))
            return message

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                body = b"".join(chunks)
                status = int(message["status"])
                event, strings = _peek(body)
                if about is not None and about not in strings:
                    await send(message)  # answered, not recorded: about another resource
                    return
                accepted = None
                if 200 <= status < 300:
                    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
                    accepted = (body, headers)
                running._record({"event": event, "answer": status}, accepted)
            await send(message)

        await app(scope, reading, sending)

    return wrapped


@contextmanager
def local_app(app: ASGIApp, *, path: str = "/webhooks", about: str | None = None) -> Iterator[Running]:
    """Serve ``app`` under uvicorn on a free loopback port in a background thread, for the block;
    then stop it and wait for the thread. ``about``: record (and send again) only the requests
    whose body holds this resource id as a value (``data.card_id``, whatever the member's name in
    the server's dialect); the app still answers every request.

    Raises:
        RuntimeError: it did not start within :data:`START_SECONDS`.
    """
    import uvicorn

    running = Running(url="")
    config = uvicorn.Config(
        _recording(app, running, about), host="127.0.0.1", port=0, log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="notebook-app", daemon=True)
    thread.start()
    deadline = monotonic() + START_SECONDS
    while not server.started:
        if monotonic() > deadline or not thread.is_alive():
            server.should_exit = True
            raise RuntimeError("the notebook's app did not start")
        sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    running.url = f"http://127.0.0.1:{port}{path}"
    try:
        yield running
    finally:
        server.should_exit = True
        thread.join(START_SECONDS)
