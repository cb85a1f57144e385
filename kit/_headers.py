"""The names of the wire's headers: the one home the client and the simulator read them from.

The spec shows one header name, ``svc-session-id``; every other is a register entry's choice
(A02, A18, A20, A24, A27, A28), which a dialect may re-choose: :meth:`HeaderNames.of` gives the
names a dialect speaks, :data:`HEADERS` the register's own. The control plane's headers, its
token (:data:`CONTROL_TOKEN`) and a snapshot's state format (:data:`STATE_VERSION`), are the
simulator's own, never a dialect's.

HTTP's own headers (``Authorization`` as RFC 6749's client authentication and RFC 9110 name
it, ``Content-Type``, ``Accept``, ``Allow``, ``Cache-Control``, ``Deprecation``, ``Link``,
``Retry-After``, ``WWW-Authenticate``…) are the standards' names, not the wire's choices: the
modules that use them spell them.

    >>> HEADERS.session_id, HEADERS.p2p_role
    ('svc-session-id', 'svc-p2p-role')

This module is in the base room: it imports only :mod:`kit._dialect`.
"""

# No ``from __future__ import annotations`` here: a NamedTuple evaluates its field annotations
# when the class is made, and a string annotation is compiled there (``typing.ForwardRef``).
from typing import NamedTuple

from kit._dialect import DEFAULT, Dialect

__all__ = ["CONTROL_TOKEN", "HEADERS", "STATE_VERSION", "HeaderNames"]


class HeaderNames(NamedTuple):
    """The names of the headers of the partner API, each from its register entry."""

    #: The partner token (A02's header).
    authorization: str
    #: The session presented (A28 ``session_id``; the spec's ``svc-session-id``).
    session_id: str
    #: The key that makes a POST safe to send again (A20).
    idempotency_key: str
    #: An answer replayed for an idempotency key (A20 ``replayed_header``).
    replayed: str
    #: The request's id, quoted in errors (A28 ``request_id``).
    request_id: str
    #: The register entries an answer says it applied (A28 ``assumptions``).
    assumptions: str
    #: A sliding session's new expiry (A28 ``session_expires_at``).
    session_expires_at: str
    #: The API version pinned and served (A27).
    api_version: str
    #: Whether a person sees a transfer as its sender or receiver (A18).
    p2p_role: str
    #: A webhook delivery's detached JWS (A24).
    signature: str

    @classmethod
    def of(cls, dialect: Dialect = DEFAULT) -> "HeaderNames":
        """The names ``dialect`` gives (the register's own by default)."""
        answers = dialect.values["A28"]
        return cls(
            authorization=str(dialect.chosen("A02", "header")),
            session_id=str(answers["session_id"]),
            idempotency_key=str(dialect.chosen("A20", "header")),
            replayed=str(dialect.chosen("A20", "replayed_header")),
            request_id=str(answers["request_id"]),
            assumptions=str(answers["assumptions"]),
            session_expires_at=str(answers["session_expires_at"]),
            api_version=str(dialect.chosen("A27", "header")),
            p2p_role=str(dialect.chosen("A18", "role_header")),
            signature=str(dialect.chosen("A24", "header")),
        )


#: The register's own names (a client speaking a dialect has its own: ``Transport.names``).
HEADERS = HeaderNames.of()

#: The request header that carries the control token (``KIT_SIM_CONTROL_TOKEN``) to the control
#: plane (``/_sim``, A45), the simulator's own header.
CONTROL_TOKEN = "svc-control-token"
#: The version of the kit's state format a snapshot of the control plane was written in
#: (``GET /_sim/snapshot``'s answer), the simulator's own header.
STATE_VERSION = "svc-state-version"
