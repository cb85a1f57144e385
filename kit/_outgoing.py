"""What a call is before it is on the wire: its operation, its path template and parameters, its
JSON body before encoding.

The requestor builds one :class:`Outgoing` per call; the transport turns it into a request in one
place (:meth:`Outgoing.path` builds the path; :class:`~kit._transport.Transport` adds the
headers). Each partner operation has a key (:data:`OPERATIONS`): the spec shows the paths of a
few of them; the others are the simulator's choices.

Header names come from their one home, :mod:`kit._headers` (:data:`HEADERS`, re-exported here),
never from a literal beside the code that uses them.

    >>> out = Outgoing(OPERATIONS["get_card"], params={"card_id": "card 1/2"})
    >>> out.path, out.method
    ('/cards/card%201%2F2', 'GET')
"""

# No ``from __future__ import annotations`` here: a NamedTuple evaluates its field annotations
# when the class is made, and a string annotation is compiled there (``typing.ForwardRef``).
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple
from urllib.parse import quote

from kit._dialect import fill
from kit._headers import HEADERS, HeaderNames
from kit._operations import OPERATIONS as TABLE

__all__ = ["HEADERS", "NONE", "OPERATIONS", "RETRY_STATUSES", "HeaderNames", "Operation", "Outgoing", "seg"]

#: The answers sent again after a wait (with backoff, ``Retry-After`` honoured).
RETRY_STATUSES = frozenset({429, 503})
#: No path parameters, no extra headers.
NONE: Mapping[str, str] = MappingProxyType({})


def seg(value: str) -> str:
    """An id as one path segment (quoted: an id can never change the path's shape)."""
    return quote(str(value), safe="")


class Operation(NamedTuple):
    """One operation: its key, method and path template (``{name}`` for each parameter)."""

    key: str
    method: str
    template: str

    @classmethod
    def raw(cls, method: str, path: str, key: str = "raw") -> "Operation":
        """A call by its method and path alone (the control plane, a test's own request)."""
        return cls(key, method, path)


#: Every partner operation the client calls, by key (:data:`kit._operations.OPERATIONS`, the
#: current ones): the spec shows the paths of the token endpoint, init data, ``POST /sessions``,
#: the card close and inbound events; the others are the simulator's choices (A67), which a
#: dialect file may re-choose (:class:`kit._spoken.Spelling`).
OPERATIONS: dict[str, Operation] = {
    op.key: Operation(op.key, op.methods[0], op.path) for op in TABLE if op.called
}


class Outgoing(NamedTuple):
    """One call as the requestor builds it. ``json``: the body before encoding (or ``data``, a
    form, or ``content``, raw bytes with their type in ``headers``); ``partner``: sent with the
    partner token; ``session_token``: the session presented; ``submitted``: a non-sensitive
    value quoted in error messages (problem code → the value the caller sent);
    ``retry_statuses``: the answers sent again after a wait; ``timeout``: its own. Its repr
    shows the operation and parameters, never the headers, body or session."""

    operation: Operation
    params: Mapping[str, str] = NONE
    json: Any = None
    data: Mapping[str, str] | None = None
    content: bytes | None = None
    headers: Mapping[str, str] = NONE
    partner: bool = True
    session_token: str | None = None
    session_type: str | None = None
    idempotency_key: str | None = None
    submitted: Mapping[str, str] | None = None
    retry_statuses: frozenset[int] = RETRY_STATUSES
    timeout: float | None = None

    def __repr__(self) -> str:
        return f"Outgoing({self.operation.key!r}, {self.method} {self.path})"

    @property
    def method(self) -> str:
        return self.operation.method

    @property
    def path(self) -> str:
        """The path on the wire: the template, each parameter quoted as one segment."""
        return self.path_at(self.operation.template)

    def path_at(self, template: str) -> str:
        """``template`` (the operation's, or a dialect's for it) with this call's parameters,
        each quoted as one segment."""
        if not self.params:
            return template
        return fill(template, {name: seg(value) for name, value in self.params.items()})
