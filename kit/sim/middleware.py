"""The service headers every response carries: request id, API version, assumptions (A27, A28).

:class:`ServiceHeaders` wraps the whole app, so 404s, 405s and the control plane get them too.
It gives each request its ``svc-request-id`` and an empty set of assumptions in
``request.state``; whatever the request's checks add to that set is named in
``svc-assumptions`` on the way out, with A21 for every problem+json answer (its shape), A45
for every answer of the control plane (``/_sim``, the simulator's own) and A46 for every answer
of a simulator on the wall clock (its times are the machine's, not seeded). The OpenAPI document
and its pages (``/openapi.json``, ``/docs``, ``/redoc``) name A48: the document holds the
simulator's choices. Every answer from a deprecated endpoint's path, whatever the method, gets
its ``Deprecation`` header (and the POST's ``Link``, A03), errors and 405s included.
A durable simulator (``kit serve --state``) writes the request's changes before its answer starts
to leave.

Under a choice overlay (``kit.sim.personality``) it is also where two choices are applied to
every answer: ``svc-assumptions`` left out (A61), and problem codes renamed (A64: the ``code``
and the end of the ``type`` of a problem+json body). With the register's own choices neither
costs anything: the body is not touched.

    >>> app.add_middleware(ServiceHeaders, state=sim.state, version=sim.version)  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kit.sim.headers import API_VERSION, ASSUMPTIONS, REQUEST_ID, deprecation_headers
from kit.sim.problems import PROBLEM_MEDIA_TYPE
from kit.sim.state import State

#: The control plane's paths (kit/sim/routes/control.py), the simulator's own (A45).
CONTROL_PREFIX = "/_sim/"
#: The register entry of the OpenAPI document and its pages (the simulator's choices, A48).
DOCUMENT_ENTRY = "A48"


class ServiceHeaders:
    """ASGI middleware adding ``svc-request-id``, ``svc-api-version`` and ``svc-assumptions``.

    An answer that already names a request id (an idempotent replay repeats the original's)
    keeps it, and its assumptions with it.
    """

    def __init__(
        self,
        app: ASGIApp,
        state: State,
        version: str,
        documents: frozenset[str] = frozenset(),
        *,
        send_assumptions: bool = True,
        codes: Mapping[str, str] | None = None,
    ) -> None:
        self.app = app
        self.state = state
        self.version = version
        self.documents = documents  # the OpenAPI document's path and its pages' (A48)
        self.send_assumptions = send_assumptions  # A61
        self.codes = dict(codes or {})  # our problem code -> the code sent (A64); empty: as ours

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = self.state.ids.next("req")
        request_state = scope.setdefault("state", {})
        request_state["request_id"] = request_id
        assumptions: set[str] = {"A46"} if self.state.clock.wall else set()
        request_state["assumptions"] = assumptions
        path, root = scope["path"], scope.get("root_path", "")
        path = path[len(root) :] if root and path.startswith(root) else path
        if path.startswith(CONTROL_PREFIX):
            assumptions.add("A45")
        elif path in self.documents:
            assumptions.add(DOCUMENT_ENTRY)
        deprecation = deprecation_headers(scope["method"], path)
        if deprecation:
            assumptions.add("A03")

        # a problem's start, held while its body's code is renamed (A64; only under an overlay)
        held: list[Message] | None = [] if self.codes else None

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if REQUEST_ID not in headers:
                    headers[REQUEST_ID] = request_id
                headers[API_VERSION] = self.version
                for name, value in deprecation.items():
                    headers[name] = value
                problem = headers.get("content-type", "").startswith(PROBLEM_MEDIA_TYPE)
                if problem:
                    assumptions.add("A21")
                if not self.send_assumptions:
                    if ASSUMPTIONS in headers:  # an idempotent replay's stored headers
                        del headers[ASSUMPTIONS]
                elif assumptions and ASSUMPTIONS not in headers:
                    headers[ASSUMPTIONS] = ",".join(sorted(assumptions))
                if problem and held is not None:
                    held.append(message)
                    return
            elif held and message["type"] == "http.response.body":
                if message.get("more_body"):
                    raise RuntimeError("a problem+json body in parts")  # JSONResponse sends one
                start, body = held.pop(), self.renamed(message.get("body", b""))
                MutableHeaders(scope=start)["content-length"] = str(len(body))
                await send(start)
                message = {**message, "body": body}
            await send(message)

        if self.state.journal is None:  # in memory: nothing more to do
            await self.app(scope, receive, send_with_headers)
        else:
            await self._durably(scope, receive, send_with_headers)

    async def _durably(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the request as one unit of the journal; its changes are written before its
        answer starts to leave (``kit serve --state``), or when it ends without one."""
        journal = self.state.journal
        assert journal is not None
        written = False

        async def send_once_written(message: Message) -> None:
            nonlocal written
            if message["type"] == "http.response.start" and not written:
                await self.state.flush()
                journal.flushed()
                written = True
            await send(message)

        try:
            with journal.unit():
                await self.app(scope, receive, send_once_written)
        finally:
            if not written:  # no answer sent (a disconnect, an error): written all the same
                self.state.commit()

    def renamed(self, body: bytes) -> bytes:
        """A problem+json body with its code renamed as the overlay says (A64)."""
        try:
            problem = json.loads(body)
        except ValueError:
            return body
        code = problem.get("code") if isinstance(problem, dict) else None
        if not isinstance(code, str) or code not in self.codes:
            return body
        problem["code"] = self.codes[code]
        kind = problem.get("type")
        if isinstance(kind, str) and kind.endswith(code):
            problem["type"] = kind[: -len(code)] + self.codes[code]
        return json.dumps(problem, separators=(",", ":"), ensure_ascii=False).encode()
