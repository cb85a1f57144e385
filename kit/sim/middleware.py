"""Step 0 and the service headers every answer carries: request id, API version (A27, A28).

:class:`ServiceHeaders` wraps the whole app, so 404s, 405s and the control plane get them too.
It gives each request its ``svc-request-id`` and its starting assumptions in ``request.state``,
and on the way out sets ``svc-api-version``, the ``Deprecation`` headers of a deprecated path
(``kit.sim.deprecation``, A03) and ``svc-assumptions`` (``kit.sim.assumptions``, A61).

Before anything else, the guards of a shared server (``kit.sim.guarded``, A70, A72): with the
register's own dialect it asks them itself (it is a ``Gate``); under a dialect that re-spells
the wire, ``Guarded`` asks them outside the translation and it answers the refusal handed down
(so the answer carries the service headers, in the dialect's spelling, as any other).

Step 0 of the order of checks is here, before any routing: the version a request names in
``svc-api-version`` (A27). An unknown one is 400 ``unsupported-api-version`` naming the served
versions (on the token endpoints the RFC 6749 form, ``invalid_request``); a known one, or the
server's default when none is named, serves the request (``request.state.api_version``) and is
named in the answer's ``svc-api-version``. A request that names a version names A27. A durable
simulator (``kit serve --state``) then hands the request to its journal (``kit.sim.handoff``).

The body is never touched here: a dialect's spelling, its problem codes (A64) included, is its
translation's outside (``kit.sim.dialect.Spoken``).

    >>> app.add_middleware(ServiceHeaders, state=sim.state, version=sim.version)  # doctest: +SKIP
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kit.sim import versions
from kit.sim.asgi import put
from kit.sim.assumptions import DOCUMENT_ENTRY, Assumptions
from kit.sim.deprecation import Deprecations
from kit.sim.guard import Guard
from kit.sim.guarded import CONTROL_PREFIX, Gate, Guarded, handed_down
from kit.sim.handoff import durably
from kit.sim.headers import API_VERSION, DEPRECATED, REQUEST_ID, TOKEN_PATH
from kit.sim.problems import OAuthError, Problem
from kit.sim.state import State

__all__ = ["CONTROL_PREFIX", "DOCUMENT_ENTRY", "TOKEN_PATHS", "Gate", "Guarded", "ServiceHeaders"]

#: The token endpoints, which answer errors in the RFC 6749 form (A21), step 0's too.
TOKEN_PATHS = frozenset({TOKEN_PATH, *DEPRECATED})

_REQUEST_ID, _API_VERSION = (name.lower().encode("latin-1") for name in (REQUEST_ID, API_VERSION))


class ServiceHeaders(Gate):
    """ASGI middleware adding ``svc-request-id``, ``svc-api-version`` and ``svc-assumptions``.

    An answer that already names a request id (an idempotent replay repeats the original's)
    keeps it, and its assumptions with it. With ``guarded``, the guards were asked outside
    (``Guarded``): it answers the refusal handed down, and counts nothing (A72 is
    ``Guarded``'s).
    """

    def __init__(
        self,
        app: ASGIApp,
        state: State,
        version: str,
        documents: frozenset[str] = frozenset(),
        *,
        send_assumptions: bool = True,
        guard: Guard | None = None,
        max_concurrency: int | None = None,
        served: tuple[str, ...] = versions.SUPPORTED,
        guarded: bool = False,
    ) -> None:
        super().__init__(guard, None if guarded else max_concurrency)
        self.app = app
        self._verdict = handed_down if guarded else self.refusal
        self.state = state
        self.version = version
        self.documents = documents  # the OpenAPI document's path and its pages' (A48)
        self.assumptions = Assumptions(documents, send=send_assumptions)  # A61
        self.served = served  # the versions served (A27; one of them under an overlay)
        self.deprecations = Deprecations(served)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = self.state.ids.next("req")
        request_state = scope.setdefault("state", {})
        request_state["request_id"] = request_id
        path, root = scope["path"], scope.get("root_path", "")
        path = path[len(root) :] if root and path.startswith(root) else path  # path_of(scope), inline
        assumptions = request_state["assumptions"] = self.assumptions.starting(self.state.clock.wall, path)
        asked = (  # 0. the version
            versions.requested_document(scope) if path in self.documents else versions.requested(scope)
        )
        version = self.version if asked is None else asked
        supported = version in self.served
        if asked is not None:
            assumptions.add("A27")
        request_state["api_version"] = version if supported else self.version
        served = request_state["api_version"]
        deprecation = self.deprecations.headers(scope["method"], path, served)
        if deprecation:
            assumptions.add("A03")
        named = self.assumptions.name

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                # What MutableHeaders(scope=message) would do, on the raw list (kit.sim.asgi.put):
                # its names are lower-case bytes, read once.
                raw = message["headers"] = list(message["headers"])
                names = set()
                content_type = b""
                for name, value in raw:  # the names, and the first content-type's value
                    if name == b"content-type" and name not in names:
                        content_type = value
                    names.add(name)
                if _REQUEST_ID not in names:
                    raw.append((_REQUEST_ID, request_id.encode("latin-1")))
                put(raw, names, _API_VERSION, served.encode("latin-1"))
                for name, value in deprecation.items():
                    put(raw, names, name.lower().encode("latin-1"), value.encode("latin-1"))
                named(raw, names, content_type, assumptions)
            await send(message)

        guarded = self._verdict(scope, path)
        if guarded is not None:
            assumptions.update(guarded.assumptions)
            await guarded.response()(scope, receive, send_with_headers)
            return
        if not supported:
            detail = versions.refusal_detail(self.served)
            refusal = (
                OAuthError(400, "invalid_request", detail).response()
                if path in TOKEN_PATHS
                else Problem(400, "unsupported-api-version", detail, supported=list(self.served)).response()
            )
            assumptions.add("A21")
            await refusal(scope, receive, send_with_headers)
            return
        self._in_flight += 1
        try:
            if self.state.journal is None:  # in memory: nothing more to do
                await self.app(scope, receive, send_with_headers)
            else:
                await durably(self.state, self.app, scope, receive, send_with_headers)
        finally:
            self._in_flight -= 1
