"""The service headers every response carries: request id, API version, assumptions (A27, A28).

:class:`ServiceHeaders` wraps the whole app, so 404s, 405s and the control plane get them too.
It gives each request its ``svc-request-id`` and an empty set of assumptions in
``request.state``; whatever the request's checks add to that set is named in
``svc-assumptions`` on the way out, with A21 for every problem+json answer (its shape), A45
for every answer of the control plane (``/_sim``, the simulator's own) and A46 for every answer
of a simulator on the wall clock (its times are the machine's, not seeded). The OpenAPI document
and its pages (``/openapi.json``, ``/docs``, ``/redoc``) name A48: the document holds the
simulator's choices. Every answer from a deprecated endpoint's path, whatever the method, gets
its ``Deprecation`` header (and the POST's ``Link``, A03), errors and 405s included, under
the versions that deprecate it (change 1, ``kit.sim.versions``).

Before anything else, the guards of a shared server (:class:`Gate`, ``kit.sim.guard``): a
``Host`` that does not name the server is 400 ``host-not-allowed``, another ``Origin`` on the
control plane 403 ``origin-not-allowed`` (A70), one request more than it answers at once 503
``server-busy`` (A72). They are asked of the request as it came off the wire: with the register's
own dialect ``ServiceHeaders`` asks them itself; under a dialect that re-spells the wire,
:class:`Guarded` asks them outside the translation (``kit.sim.dialect``), before a header is
renamed or a byte of the body read, and ``ServiceHeaders`` answers the refusal it hands down (so
the answer carries the service headers, in the dialect's spelling, as any other).

Step 0 of the order of checks is here, before any routing: the version a request names in
``svc-api-version`` (A27). An unknown one is 400 ``unsupported-api-version`` naming the served
versions (on the token endpoints the RFC 6749 form, ``invalid_request``); a known one, or the
server's default when none is named, serves the request (``request.state.api_version``) and is
named in the answer's ``svc-api-version``. A request that names a version names A27.
A durable simulator (``kit serve --state``) writes the request's changes before its answer starts
to leave.

Under a choice overlay (``kit.sim.personality``) it is also where ``svc-assumptions`` is left
out of every answer (A61). The body is never touched here: a dialect's problem codes (A64) are
renamed by its translation outside (``kit.sim.dialect.Spoken``), with the rest of its spelling.

    >>> app.add_middleware(ServiceHeaders, state=sim.state, version=sim.version)  # doctest: +SKIP
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kit.sim import versions
from kit.sim.asgi import first, put
from kit.sim.guard import Guard
from kit.sim.headers import (
    API_VERSION,
    ASSUMPTIONS,
    DEPRECATED,
    REQUEST_ID,
    TOKEN_PATH,
    deprecation_headers,
)
from kit.sim.problems import PROBLEM_MEDIA_TYPE, OAuthError, Problem
from kit.sim.settings import Settings
from kit.sim.state import State

#: How many distinct Host headers the guard's verdicts are remembered for (then forgotten).
_HOSTS_REMEMBERED = 64

#: The token endpoints, which answer errors in the RFC 6749 form (A21), step 0's too.
TOKEN_PATHS = frozenset({TOKEN_PATH, *DEPRECATED})

#: The control plane's paths (kit/sim/routes/control.py), the simulator's own (A45).
CONTROL_PREFIX = "/_sim/"
#: The register entry of the OpenAPI document and its pages (the simulator's choices, A48).
DOCUMENT_ENTRY = "A48"


_REQUEST_ID, _API_VERSION, _ASSUMPTIONS = (
    name.lower().encode("latin-1") for name in (REQUEST_ID, API_VERSION, ASSUMPTIONS)
)
_PROBLEM_MEDIA_TYPE = PROBLEM_MEDIA_TYPE.encode("latin-1")


#: Where :class:`Guarded` hands its refusal to ``ServiceHeaders`` (the scope's ``state``).
_REFUSAL = "guard_refusal"


def _path(scope: Scope) -> str:
    """The request's path below its ``root_path``."""
    path, root = scope["path"], scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


class Gate:
    """The guards of a shared server (A70, A72), asked of a request as it came: whether its
    ``Host`` names the server, whether a control-plane request comes from another ``Origin``,
    and whether the server already answers as many requests as it takes at once."""

    def __init__(self, guard: Guard | None, max_concurrency: int | None) -> None:
        self.guard = guard or Guard(Settings())  # A70: the Host names (and Origin) it answers
        self._hosts: dict[str | None, bool] = {}  # Host headers seen, and whether each is allowed
        self.max_concurrency = max_concurrency  # A72; None: no limit
        self._in_flight = 0

    def refusal(self, scope: Scope, path: str) -> Problem | None:
        """The guards' answer before any other (A70, A72): a Host that does not name the server,
        another origin on the control plane, or too many requests at once; None to go on."""
        host = first(scope, b"host")
        allowed = self._hosts.get(host)
        if allowed is None:
            if len(self._hosts) >= _HOSTS_REMEMBERED:
                self._hosts.clear()
            allowed = self._hosts[host] = self.guard.allows_host(host)
        if not allowed:
            return self.guard.host_refusal(scope)
        if path.startswith(CONTROL_PREFIX):
            refusal = self.guard.origin_refusal(scope)
            if refusal is not None:
                return refusal
        if self.max_concurrency is not None and self._in_flight >= self.max_concurrency:
            return Problem(
                503,
                "server-busy",
                "The simulator is answering as many requests as it takes at once; retry shortly.",
                headers={"Retry-After": "1"},
                assumptions=("A72",),
            )
        return None


class Guarded(Gate):
    """``app`` (a dialect's translation, ``kit.sim.dialect.Spoken``) behind the guards of a
    shared server, asked of the request as it came (:class:`Gate`): no header the dialect
    renames can hide the real ``Host`` or ``Origin``, and a request counts towards the
    concurrency limit (A72) from its first byte, its body's reading included.

    A refused request still goes through ``app``, its refusal in the scope's state: the
    ``ServiceHeaders`` inside (built with ``guarded=True``) answers it before anything else, and
    nothing reads its body.
    """

    def __init__(self, app: ASGIApp, guard: Guard | None, max_concurrency: int | None) -> None:
        super().__init__(guard, max_concurrency)
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope, _path(scope))
        if refusal is not None:
            scope.setdefault("state", {})[_REFUSAL] = refusal
            await self.app(scope, receive, send)
            return
        self._in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self._in_flight -= 1


def _handed_down(scope: Scope, path: str) -> Problem | None:
    """The refusal :class:`Guarded` asked of the request as it came, if any."""
    refusal: Problem | None = scope["state"].get(_REFUSAL)
    return refusal


class ServiceHeaders(Gate):
    """ASGI middleware adding ``svc-request-id``, ``svc-api-version`` and ``svc-assumptions``.

    An answer that already names a request id (an idempotent replay repeats the original's)
    keeps it, and its assumptions with it. With ``guarded``, the guards were asked outside
    (:class:`Guarded`): it answers the refusal handed down, and counts nothing (A72 is
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
        self._verdict = _handed_down if guarded else self.refusal
        self.state = state
        self.version = version
        self.documents = documents  # the OpenAPI document's path and its pages' (A48)
        self.send_assumptions = send_assumptions  # A61
        #: Whether a version deprecates the legacy token endpoints (change 1), asked once.
        self.served = served  # the versions served (A27; one of them under an overlay)
        self._deprecating = {v: versions.legacy_deprecated(v) for v in served}

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
        path = path[len(root) :] if root and path.startswith(root) else path  # _path(scope), inline
        if path.startswith(CONTROL_PREFIX):
            assumptions.add("A45")
        elif path in self.documents:
            assumptions.add(DOCUMENT_ENTRY)
        asked = (  # 0. the version
            versions.requested_document(scope) if path in self.documents else versions.requested(scope)
        )
        version = self.version if asked is None else asked
        supported = version in self.served
        if asked is not None:
            assumptions.add("A27")
        request_state["api_version"] = version if supported else self.version
        served = request_state["api_version"]
        deprecation = (
            deprecation_headers(scope["method"], path)
            if path in DEPRECATED and self._deprecating.get(served, False)
            else {}
        )
        if deprecation:
            assumptions.add("A03")

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
                problem = content_type.startswith(_PROBLEM_MEDIA_TYPE)  # latin-1 both ways
                if problem:
                    assumptions.add("A21")
                if not self.send_assumptions:
                    if _ASSUMPTIONS in names:  # an idempotent replay's stored headers
                        raw[:] = [(k, v) for k, v in raw if k != _ASSUMPTIONS]
                elif assumptions and _ASSUMPTIONS not in names:
                    raw.append((_ASSUMPTIONS, ",".join(sorted(assumptions)).encode("latin-1")))
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
                await self._durably(scope, receive, send_with_headers)
        finally:
            self._in_flight -= 1

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
