"""The guards of a shared server as ASGI layers (A70, A72): asked of a request as it came.

``kit.sim.guard`` holds the rules (which ``Host`` names the server, which ``Origin`` the control
plane answers, which webhook targets are allowed); here they are asked of every request before
anything else, together with the concurrency limit: a ``Host`` that does not name the server is
400 ``host-not-allowed``, another ``Origin`` on the control plane 403 ``origin-not-allowed``
(A70), one request more than the server answers at once 503 ``server-busy`` (A72).

With the register's own dialect ``ServiceHeaders`` (``kit.sim.middleware``, a :class:`Gate`)
asks them itself, first; under a dialect that re-spells the wire, :class:`Guarded` asks them
outside the translation (``kit.sim.dialect``), before a header is renamed or a byte of the body
read, and hands its refusal down (:func:`handed_down`) for ``ServiceHeaders`` to answer, so that
the answer carries the service headers, in the dialect's spelling, as any other.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from kit.sim.asgi import first
from kit.sim.guard import Guard
from kit.sim.problems import Problem
from kit.sim.settings import Settings

__all__ = ["CONTROL_PREFIX", "Gate", "Guarded", "handed_down", "path_of"]

#: How many distinct Host headers the guard's verdicts are remembered for (then forgotten).
_HOSTS_REMEMBERED = 64
#: The control plane's paths (kit/sim/routes/control.py), the simulator's own (A45, A70).
CONTROL_PREFIX = "/_sim/"
#: Where :class:`Guarded` hands its refusal down (the scope's ``state``).
_REFUSAL = "guard_refusal"


def path_of(scope: Scope) -> str:
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
        refusal = self.refusal(scope, path_of(scope))
        if refusal is not None:
            scope.setdefault("state", {})[_REFUSAL] = refusal
            await self.app(scope, receive, send)
            return
        self._in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self._in_flight -= 1


def handed_down(scope: Scope, path: str) -> Problem | None:
    """The refusal :class:`Guarded` asked of the request as it came, if any (the signature of
    :meth:`Gate.refusal`, so that ``ServiceHeaders`` asks either the same way)."""
    refusal: Problem | None = scope["state"].get(_REFUSAL)
    return refusal
