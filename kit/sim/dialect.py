"""The simulator speaking a dialect: the translation, inside the guards, when an overlay
re-spells the wire.

The routes, the order of checks and every test of the simulator speak the register's spelling
(:data:`kit._dialect.DEFAULT`). When a personality's dialect differs, the app
(``kit.sim.app.edge``) puts :class:`Spoken` between the guards of a shared server and
``ServiceHeaders``: the 500 problem, then the Host, Origin and concurrency checks on the request
as it came (``kit.sim.guarded.Guarded``, A70, A72), then this translation, once each way:

- the request: the dialect's header names (A02, A20, A27) to the simulator's, at once; a JSON
  body's member names (A68) and session values (A05, A06) to the kit's, only when the app reads
  the body (after the route and the partner token: steps 1 and 2 of the order of checks,
  ``kit.sim.pipeline``) and only up to A22's limit: past it, or with a ``Content-Length`` past
  it, what was read and the rest go to the app untranslated, and it refuses them (413) as it
  would without a dialect; nothing more than the limit and one chunk is held here;
- the answer: header names (A18, A20, A24, A27, A28) and the partner token's scheme in
  ``WWW-Authenticate`` (A02) to the dialect's, a problem's code (A64,
  :meth:`kit._dialect.Dialect.problem_to_wire`; the control plane's problems too), and a JSON
  body's member names, the JSON Pointers of ``errors[].field`` and session values to the
  dialect's, all in one pass: a body is held, decoded and encoded at most once; the 500
  problem's names too (:meth:`Spoken.unexpected`, for the layer outside).

The guards' refusals are answered inside, by ``ServiceHeaders``, so they too come out in the
dialect's spelling. Paths are not this layer's: the route table serves each operation at its
personality's path (A67, ``Personality.paths()``), and nowhere else. The control plane
(``/_sim``) keeps its names; the OpenAPI document is re-spelled whole by
:func:`kit._dialect.Dialect.document`. With the register's own dialect there is no such layer
(:func:`speaking` gives the app itself): the answers are byte for byte those of an app without it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Scope

from kit import register
from kit._dialect import Dialect
from kit._headers import HEADERS, HeaderNames
from kit._operations import BY_KEY
from kit.sim.asgi import decode_json, encode_json

__all__ = ["Spoken", "speaking"]

ASGI = Callable[..., Any]
Handler = Callable[[Request, Exception], Awaitable[Response]]

#: A request body past this is not translated (the app refuses it: A22).
_LIMIT = int(register.value("A22")["max_body_bytes"])
_JSON = re.compile(rb"^application/(problem\+)?json\b")
#: The spec's token endpoints: HTTP Basic may come in Authorization there whatever A02 says.
_TOKEN_PATHS = frozenset(BY_KEY[key].path for key in ("access_token", "legacy_access_token"))


def speaking(app: ASGI, dialect: Dialect) -> ASGI:
    """``app`` as a server speaking ``dialect`` (``app`` itself for the register's own)."""
    return Spoken(app, dialect) if Spoken.needed(dialect) else app


class Spoken:
    """``app`` behind the translation of one dialect (see the module docstring)."""

    @staticmethod
    def needed(dialect: Dialect) -> bool:
        """Whether ``dialect`` re-spells the wire (it is not the register's own in every part)."""
        return not dialect.default

    def __init__(self, app: ASGI, dialect: Dialect) -> None:
        self.app = app
        self.dialect = dialect
        ours = Dialect.of(None)
        our_names, their_names = HEADERS, HeaderNames.of(dialect)
        # the header names the dialect renames: theirs → ours, lower case (A02, A18, A20, A24, A27, A28)
        renamed = {t: o for t, o in dialect.headers_from_wire.items() if o != t}
        self._in = {t.encode(): o.encode() for t, o in renamed.items()}
        self._out = {o.encode(): dialect.headers[o].encode() for o in renamed.values()}
        # our names of the request headers it renamed (besides the token's): not honoured under it
        sent = {our_names.idempotency_key.lower(), our_names.api_version.lower()}
        self._unheard = {o.encode() for o in renamed.values() if o in sent}
        self._auth = our_names.authorization.lower().encode()
        self._token_header = their_names.authorization.lower().encode()
        self._scheme = (ours.chosen("A02", "scheme"), dialect.chosen("A02", "scheme"))
        self._codes = bool(dialect.renamed_codes)  # A64: a problem's code renamed
        self._names = not dialect.plain or any(
            dialect.chosen(e, k) != ours.chosen(e, k)
            for e, k in (("A05", "session_types"), ("A06", "strategies"))
        )

    # ---- the request
    def _headers_in(self, headers: list[tuple[bytes, bytes]], path: str) -> list[tuple[bytes, bytes]]:
        out = []
        ours, theirs = self._scheme
        for name, value in headers:
            name = name.lower()
            if name == self._auth and self._token_header != self._auth and path not in _TOKEN_PATHS:
                continue  # the partner token travels in the dialect's header only (A02)
            if name in self._unheard and name not in self._in:
                continue
            if name == self._token_header:
                scheme, _, token = value.decode("latin-1").partition(" ")
                if scheme.lower() == theirs.lower():
                    value = f"{ours} {token}".encode("latin-1")
                elif theirs.lower() != ours.lower() and scheme.lower() == ours.lower():
                    value = b"Unknown " + token.encode("latin-1")  # our scheme is not theirs
            out.append((self._in.get(name, name), value))
        return out

    def _body_in(self, body: bytes) -> bytes:
        try:
            return encode_json(self.dialect.body_from_wire(decode_json(body, constants=True)))
        except (ValueError, RecursionError):
            return body  # the app answers malformed-json (or its schema's problem) itself

    # ---- the answer
    def _headers_out(self, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        ours, theirs = self._scheme
        out = []
        for name, value in headers:
            low = name.lower()
            if low == b"www-authenticate" and value.startswith(ours.encode()):
                value = theirs.encode() + value[len(ours) :]
            out.append((self._out.get(low, name), value))
        return out

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        names = self._names and not path.startswith("/_sim") and path != "/openapi.json"
        # in place: the 500 layer outside reads the request as the app inside saw it
        scope["headers"] = self._headers_in(list(scope["headers"]), path)
        if names and scope["method"] in ("POST", "PUT", "PATCH"):
            receive = self._translating(scope, receive)
        await self.app(scope, receive, self._answer(send, names, path == "/openapi.json"))

    def _translating(self, scope: Scope, receive: Any) -> Any:
        """``receive`` giving a JSON body translated, read only when the app asks for it (after
        its own checks before the body's: the route, the partner token) and never past A22's
        limit: a longer body, one whose ``Content-Length`` says so, or another media type goes
        to the app as it came, which refuses or reads it as it would without a dialect."""
        headers = dict(scope["headers"])
        if not _JSON.match(headers.get(b"content-type", b"")):
            return receive
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > _LIMIT):
            return receive
        pending: list[Message] | None = None

        async def translated() -> Message:
            nonlocal pending
            if pending is None:
                pending = await self._read(receive)
                if length is not None and pending[-1]["type"] == "http.request":  # translated
                    scope["headers"] = _sized(scope["headers"], pending[0].get("body", b""))
            return pending.pop(0) if pending else await receive()

        return translated

    async def _read(self, receive: Any) -> list[Message]:
        """The request's body as one message, translated; or the messages as they came, once
        they pass A22's limit (then the rest as it comes) or end in a disconnect."""
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return messages
            size += len(message.get("body", b""))
            if size > _LIMIT:
                return messages  # nothing more is held here: the app refuses it (413, A22)
            if not message.get("more_body", False):
                break
        body = self._body_in(b"".join(m.get("body", b"") for m in messages))
        return [{"type": "http.request", "body": body, "more_body": False}]

    def _answer(self, send: Any, names: bool, document: bool) -> Any:
        held: dict[str, Any] = {}

        async def answer(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = self._headers_out(list(message.get("headers", [])))
                kind = dict((k.lower(), v) for k, v in headers).get(b"content-type", b"")
                media = _JSON.match(kind)
                problem = media is not None and media.group(1) is not None
                if media and (names or document or (problem and self._codes)):
                    held.update(start={**message, "headers": headers}, chunks=[], problem=problem)
                    return
                await send({**message, "headers": headers})
                return
            if message["type"] != "http.response.body" or "start" not in held:
                await send(message)
                return
            held["chunks"].append(message.get("body", b""))
            if message.get("more_body", False):
                return
            body = self._body_out(b"".join(held["chunks"]), names, document, held["problem"])
            start = held["start"]
            start["headers"] = _sized(start["headers"], body)
            await send(start)
            await send({"type": "http.response.body", "body": body, "more_body": False})

        return answer

    def _body_out(self, body: bytes, names: bool, document: bool, problem: bool) -> bytes:
        """An answer's JSON body in the dialect's spelling, decoded and encoded once: a
        problem's code (A64), then the member names, pointers and session values (or the
        OpenAPI document's whole spelling); ``body`` itself when nothing in it changes."""
        try:
            data = decode_json(body, constants=True)
        except ValueError:
            return body
        spelled = self.dialect.problem_to_wire(data) if problem else data
        if document:
            spelled = self.dialect.document(spelled)
        elif names:
            spelled = self.dialect.body_to_wire(spelled)
        elif spelled is data:
            return body
        return encode_json(spelled)

    def unexpected(self, handler: Handler) -> Handler:
        """``handler`` (the 500 layer's, outside this one) answering in the dialect's spelling."""

        async def answer(request: Request, exc: Exception) -> Response:
            response = await handler(request, exc)
            response.raw_headers = self._headers_out(response.raw_headers)
            path = request.scope["path"]
            names = self._names and not path.startswith("/_sim") and path != "/openapi.json"
            if names or self._codes:  # a problem: its code as any other problem's (A64)
                response.body = self._body_out(bytes(response.body), names, False, True)
                response.raw_headers = _sized(response.raw_headers, response.body)
            return response

        return answer


def _sized(headers: list[tuple[bytes, bytes]], body: bytes) -> list[tuple[bytes, bytes]]:
    return [(k, str(len(body)).encode() if k.lower() == b"content-length" else v) for k, v in headers]
