"""The wire, recorded: each call's attempts (request and response headers and bodies) and each
webhook delivery the client's receiver got, redacted when recorded (:mod:`kit._redaction`).

Off by default: ``kit.connect(..., record=True)`` gives the client a :class:`Recorder`
(``api.wire_log``); the notebook companion (:mod:`kit.notebook`) turns it on for every client a
notebook makes. The recorder watches the client's ``httpx.Client`` through httpx's event hooks
(every attempt: a retried call, a 401 that refetches the partner token) and the transport tells
it where a call begins and ends, so a call's attempts stay together — an injected 503 and its
replayed retry are two attempts of one call. Nothing is kept before it is redacted.

Bounded memory: at most :data:`MAX_CALLS` calls and deliveries (the oldest are dropped),
:data:`MAX_ATTEMPTS` attempts per call, and :data:`MAX_BODY` characters of each redacted body
(the rest is cut, and said so).

``api.wire()`` shows a call (:mod:`kit._wire_view`), ``api.export_har(path)`` writes HAR 1.2.
Each ``wire`` hook of the client (:mod:`kit._hooks`) gets every :class:`Exchange` once it is
complete (a call once it ended, a delivery once answered); a hook may set its ``comment``
(the notebook companion writes the cell there).

Example::

    >>> api = kit.connect("sim", record=True)                       # doctest: +SKIP
    >>> api.accounts.create()                                       # doctest: +SKIP
    >>> api.wire_log.exchanges()[-1].attempts[0].request.headers[0] # doctest: +SKIP
    ('host', '127.0.0.1:<port>')
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any, Literal

import httpx

from kit._dialect import DEFAULT, Dialect
from kit._redaction import Redactor

__all__ = [
    "MAX_ATTEMPTS",
    "MAX_BODY",
    "MAX_CALLS",
    "Attempt",
    "Exchange",
    "Message",
    "Recorder",
    "as_dict",
    "from_dict",
]

#: Calls and deliveries kept per client (the oldest are dropped).
MAX_CALLS = 1_000
#: Attempts kept per call (retries past this are counted, not kept).
MAX_ATTEMPTS = 10
#: Characters of a redacted body kept.
MAX_BODY = 64_000


@dataclass(frozen=True)
class Message:
    """One side of an attempt: headers (name in lower case, redacted value), the redacted body
    (``None``: none), its MIME type, its size in bytes on the wire, and whether it was cut."""

    headers: tuple[tuple[str, str], ...]
    body: str | None
    mime: str
    size: int
    cut: bool = False


@dataclass(frozen=True)
class Attempt:
    """One request sent and the answer to it (``status`` ``None``: no answer came)."""

    started: datetime
    method: str
    url: str
    request: Message
    status: int | None
    reason: str
    response: Message | None
    ms: float


@dataclass
class Exchange:
    """A call (``kind="call"``: its attempts in order) or a webhook delivery received
    (``kind="delivery"``: one attempt, the answer the receiver gave)."""

    index: int
    kind: Literal["call", "delivery"]
    method: str
    path: str
    attempts: list[Attempt] = field(default_factory=list)
    comment: str | None = None
    step: str | None = None
    dropped: int = 0
    #: The path in the kit's spelling, when a dialect moved it (``path`` is the wire's).
    kit_path: str | None = None
    #: A call's rows in the history's table of calls (:mod:`kit._history`); a delivery's number.
    numbers: list[int] = field(default_factory=list)

    @property
    def status(self) -> int | None:
        """The final attempt's status."""
        return self.attempts[-1].status if self.attempts else None

    @property
    def note(self) -> str:
        """The comment and the flow step, as one line."""
        return "; ".join(p for p in (self.comment, f"step: {self.step}" if self.step else None) if p)


#: Called with each exchange once it is complete (``hooks={"wire": [...]}``, :mod:`kit._hooks`).
WireHook = Callable[[Exchange], None]


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


class _Pending:
    def __init__(self, request: httpx.Request, exchange: Exchange | None) -> None:
        self.request = request
        self.exchange = exchange
        self.started = datetime.now(UTC)
        self.t0 = time.perf_counter()


class Recorder:
    """One client's wire log (see the module docstring); thread-safe.

    ``secrets``: ``(kind, value)`` pairs to redact from the start (:class:`kit._redaction.Redactor`);
    ``dialect``: the server's spelling, whose names of secrets are redacted as the kit's.
    """

    def __init__(
        self,
        secrets: Iterable[tuple[str, str]] = (),
        *,
        hooks: Sequence[WireHook] = (),
        dialect: Dialect = DEFAULT,
    ) -> None:
        self.redactor = Redactor(secrets, dialect=dialect)
        self._hooks = tuple(hooks)
        self._lock = threading.Lock()
        self._exchanges: deque[Exchange] = deque(maxlen=MAX_CALLS)
        self._count = 0
        self._local = threading.local()
        self._step: str | None = None

    def __repr__(self) -> str:
        return f"<wire Recorder: {len(self._exchanges)} exchanges kept>"

    def __len__(self) -> int:
        return len(self._exchanges)

    def exchanges(self) -> list[Exchange]:
        """Every exchange kept, in the order they began."""
        with self._lock:
            return list(self._exchanges)

    def clear(self) -> None:
        with self._lock:
            self._exchanges.clear()

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        """Name the flow step of the calls made inside (shown in the HAR entry's comment)."""
        previous, self._step = self._step, name
        try:
            yield
        finally:
            self._step = previous

    # -- calls --------------------------------------------------------------------------------

    def _new(self, kind: Literal["call", "delivery"], method: str, path: str) -> Exchange:
        with self._lock:
            self._count += 1
            exchange = Exchange(self._count, kind, method, path, step=self._step)
            self._exchanges.append(exchange)
        return exchange

    def _stack(self) -> list[Exchange]:
        stack: list[Exchange] | None = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    @contextlib.contextmanager
    def call(self, method: str, path: str, kit_path: str | None = None) -> Iterator[Exchange]:
        """One call on this thread (the transport's ``request``): the attempts sent inside are
        its own. Calls nest (the token exchange the auth flow makes inside a call); an attempt
        left without an answer is kept as such."""
        exchange = self._new("call", method, self.redactor.url(path))
        if kit_path is not None and kit_path != path:
            exchange.kit_path = self.redactor.url(kit_path)
        stack = self._stack()
        stack.append(exchange)
        try:
            yield exchange
        finally:
            self._flush()
            stack.pop()
            self._done(exchange)

    def numbered(self, number: int) -> None:
        """The history numbered a row of the call running on this thread (the view shows it)."""
        if stack := self._stack():
            stack[-1].numbers.append(number)

    def event_hooks(self) -> dict[str, list[Callable[..., Any]]]:
        """httpx ``event_hooks`` that record every attempt of the client."""
        return {"request": [self._on_request], "response": [self._on_response]}

    def _flush(self) -> None:
        pending: _Pending | None = getattr(self._local, "pending", None)
        self._local.pending = None
        if pending is not None:  # sent, and no answer came (a connection error)
            self._add(pending, None)

    def _on_request(self, request: httpx.Request) -> None:
        self._flush()
        stack = self._stack()
        self._local.pending = _Pending(request, stack[-1] if stack else None)

    def _on_response(self, response: httpx.Response) -> None:
        response.read()
        pending: _Pending | None = getattr(self._local, "pending", None)
        self._local.pending = None
        if pending is None or pending.request is not response.request:
            pending = _Pending(response.request, self._stack()[-1] if self._stack() else None)
        self._add(pending, response)

    def _message(self, headers: httpx.Headers, content: bytes) -> Message:
        shown = tuple((n.lower(), self.redactor.header(n, v)) for n, v in headers.multi_items())
        mime = headers.get("content-type", "")
        body = self.redactor.body(content, mime)
        cut = body is not None and len(body) > MAX_BODY
        if body is not None and cut:
            body = body[:MAX_BODY]
        return Message(shown, body, mime.split(";")[0].strip(), len(content), cut)

    def _add(self, pending: _Pending, response: httpx.Response | None) -> None:
        request = pending.request
        exchange = pending.exchange
        alone = exchange is None  # an attempt outside any call the transport began
        if exchange is None:
            exchange = self._new("call", request.method, self.redactor.url(request.url.path))
        sent = self._message(request.headers, request.content)
        answer = self._message(response.headers, response.content) if response is not None else None
        attempt = Attempt(
            started=pending.started,
            method=request.method,
            url=self.redactor.url(str(request.url)),
            request=sent,
            status=response.status_code if response is not None else None,
            reason=response.reason_phrase if response is not None else "no answer",
            response=answer,
            ms=round((time.perf_counter() - pending.t0) * 1000, 2),
        )
        self._append(exchange, attempt)
        if alone:
            self._done(exchange)

    def _append(self, exchange: Exchange, attempt: Attempt) -> None:
        with self._lock:
            if len(exchange.attempts) < MAX_ATTEMPTS:
                exchange.attempts.append(attempt)
            else:
                exchange.dropped += 1

    def _done(self, exchange: Exchange) -> None:
        for hook in self._hooks:
            hook(exchange)

    # -- webhook deliveries ----------------------------------------------------------------------

    def delivery(
        self,
        url: str,
        headers: Mapping[str, str] | Iterable[tuple[str, str]],
        body: bytes,
        status: int,
        ms: float,
    ) -> Exchange:
        """Record a webhook delivery the client's receiver got and the status it answered."""
        items = list(headers.items()) if isinstance(headers, Mapping) else list(headers)
        request_headers = httpx.Headers(items)
        exchange = self._new("delivery", "POST", self.redactor.url(httpx.URL(url).path))
        exchange.numbers.append(sum(e.kind == "delivery" for e in self.exchanges()))
        answer = Message((("content-length", "0"),), None, "", 0)
        attempt = Attempt(
            started=datetime.now(UTC),
            method="POST",
            url=self.redactor.url(url),
            request=self._message(request_headers, body),
            status=status,
            reason=_reason(status),
            response=answer,
            ms=round(ms, 2),
        )
        self._append(exchange, attempt)
        self._done(exchange)
        return exchange


# -- to and from JSON (kit regress carries a kernel's exchanges to the runner) ----------------


def _message_dict(message: Message | None) -> dict[str, Any] | None:
    if message is None:
        return None
    return {
        "headers": [list(h) for h in message.headers],
        "body": message.body,
        "mime": message.mime,
        "size": message.size,
        "cut": message.cut,
    }


def _message_of(data: Mapping[str, Any] | None) -> Message | None:
    if data is None:
        return None
    headers = tuple((str(n), str(v)) for n, v in data["headers"])
    return Message(headers, data["body"], str(data["mime"]), int(data["size"]), bool(data["cut"]))


def as_dict(exchange: Exchange) -> dict[str, Any]:
    """An exchange as JSON-ready data (already redacted: nothing secret is in it)."""
    return {
        "index": exchange.index,
        "kind": exchange.kind,
        "method": exchange.method,
        "path": exchange.path,
        "comment": exchange.comment,
        "step": exchange.step,
        "dropped": exchange.dropped,
        "numbers": list(exchange.numbers),
        "attempts": [
            {
                "started": a.started.isoformat(),
                "method": a.method,
                "url": a.url,
                "request": _message_dict(a.request),
                "status": a.status,
                "reason": a.reason,
                "response": _message_dict(a.response),
                "ms": a.ms,
            }
            for a in exchange.attempts
        ],
    }


def from_dict(data: Mapping[str, Any]) -> Exchange:
    """The exchange :func:`as_dict` wrote.

    Raises:
        KeyError, ValueError, TypeError: not such data.
    """
    attempts = []
    for a in data["attempts"]:
        request = _message_of(a["request"])
        assert request is not None
        attempts.append(
            Attempt(
                started=datetime.fromisoformat(a["started"]),
                method=str(a["method"]),
                url=str(a["url"]),
                request=request,
                status=a["status"],
                reason=str(a["reason"]),
                response=_message_of(a["response"]),
                ms=float(a["ms"]),
            )
        )
    kind: Literal["call", "delivery"] = "delivery" if data["kind"] == "delivery" else "call"
    return Exchange(
        int(data["index"]),
        kind,
        str(data["method"]),
        str(data["path"]),
        attempts,
        data.get("comment"),
        data.get("step"),
        int(data.get("dropped", 0)),
        numbers=[int(n) for n in data.get("numbers", [])],
    )
