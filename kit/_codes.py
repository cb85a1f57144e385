"""The problem codes of the wire, in one place: what the simulator answers, what ``kit.errors``
classes a caller handles them by.

The simulator (``kit.sim.problems``) takes a code only as a :data:`ProblemCode` (a problem+json
``code``) or an :data:`OAuthCode` (an RFC 6749 ``error`` of the token endpoints), so mypy refuses
one spelled anywhere else; ``kit.errors`` checks when it is imported that each code here has its
class and each class's code is here. A partner's own codes are A64's (a choice overlay).

    >>> "card-not-found" in SIMULATED
    True
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["CLIENT_ONLY", "GENERIC", "KNOWN", "SIMULATED", "OAuthCode", "ProblemCode"]

#: The ``code`` of every problem+json answer the simulator can give.
ProblemCode = Literal[
    "account-not-found",
    "card-already-closed",
    "card-not-active",
    "card-not-found",
    "device-not-recognized",
    "document-request-not-found",
    "document-request-not-open",
    "endpoint-deprecated",
    "endpoint-removed",
    "event-renamed",
    "host-not-allowed",
    "http-error",
    "idempotency-key-in-use",
    "idempotency-key-invalid",
    "idempotency-key-required",
    "idempotency-key-reused",
    "injected-fault",
    "insufficient-funds",
    "internal-error",
    "invalid-amount",
    "invalid-control-token",
    "invalid-device-key",
    "invalid-encrypted-data",
    "invalid-partner-token",
    "invalid-referral-code",
    "invalid-session",
    "invalid-session-transition",
    "kyc-locked",
    "malformed-json",
    "method-not-allowed",
    "nonce-invalid",
    "not-found",
    "operation-not-served",
    "origin-not-allowed",
    "payload-too-large",
    "person-not-found",
    "pii-must-be-encrypted",
    "rate-limited",
    "recipient-not-eligible",
    "self-transfer",
    "server-busy",
    "session-expired",
    "session-not-bound",
    "session-required",
    "session-superseded",
    "session-type-not-allowed",
    "snapshot-invalid",
    "transfer-not-found",
    "unknown-card-type",
    "unknown-close-reason",
    "unknown-event-type",
    "unknown-expiration-strategy",
    "unknown-field",
    "unknown-platform",
    "unknown-product",
    "unknown-session-type",
    "unsupported-api-version",
    "unsupported-currency",
    "unsupported-media-type",
    "validation-error",
    "webhook-url-not-allowed",
]
#: The RFC 6749 §5.2 ``error`` codes the simulator's token endpoints answer.
OAuthCode = Literal[
    "invalid_client",
    "invalid_request",
    "invalid_scope",
    "unsupported_grant_type",
]

#: Every code the simulator answers.
SIMULATED: frozenset[str] = frozenset(get_args(ProblemCode)) | frozenset(get_args(OAuthCode))
#: Codes a partner server may answer that the simulator never does (RFC 6749's others, and two
#: problems of a server the simulator does not play: an outage, a subscription looked up).
CLIENT_ONLY: frozenset[str] = frozenset(
    {"invalid_grant", "unauthorized_client", "service-unavailable", "subscription-not-found"}
)
#: Codes that name no particular problem ("an HTTP error"): a client classes them by status.
GENERIC: frozenset[str] = frozenset({"http-error"})
#: Every code a ``kit.errors`` class stands for (the generic ones aside).
KNOWN: frozenset[str] = (SIMULATED | CLIENT_ONLY) - GENERIC
