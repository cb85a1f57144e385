"""Every error the kit raises, named after the API's problem codes (register entry A21).

Users never catch httpx or joserfc exceptions: transport failures become
:class:`TransportError`, answers with a problem body become an :class:`ApiError` subclass
chosen in one function, :func:`error_from_response`, through :data:`by_code` — which is read
from the classes: each carries the problem ``code`` it stands for. Each class has a ``hint``
(what to do next); messages say what was wrong and what to do.

The tree, rendered from the classes by :func:`tree` (a test keeps this copy current): each
class under its base, with the problem code it stands for::

    KitError
    ├── ConfigError
    │   ├── NotAvailable (also AttributeError)
    │   ├── FixturesError
    │   └── MissingExtra
    ├── ContractDrift
    ├── DeprecatedEndpoint
    ├── ApiVersionMismatch
    ├── TransportError
    ├── CryptoError
    ├── SensitiveDataError (also TypeError)
    ├── WebhookTimeout (also TimeoutError)
    ├── WebhookVerificationError
    │   ├── SignatureMissing
    │   ├── SignatureMalformed
    │   ├── SignatureInvalid
    │   │   └── UnknownSigningKey
    │   ├── EventMismatch
    │   ├── SignatureExpired
    │   └── DuplicateDelivery
    └── ApiError
        ├── OAuthError: invalid_request
        │   └── InvalidClient: invalid_client
        ├── InvalidPartnerToken: invalid-partner-token
        ├── SessionError
        │   ├── SessionRequired: session-required
        │   ├── InvalidSession: invalid-session
        │   ├── SessionExpired: session-expired
        │   ├── SessionSuperseded: session-superseded
        │   ├── SessionTypeNotAllowed: session-type-not-allowed
        │   ├── SessionNotBound: session-not-bound
        │   ├── DeviceNotRecognized: device-not-recognized
        │   ├── InvalidSessionTransition: invalid-session-transition
        │   ├── NonceInvalid: nonce-invalid
        │   └── InvalidDeviceKey: invalid-device-key
        ├── InvalidEncryptedData: invalid-encrypted-data
        ├── PiiMustBeEncrypted: pii-must-be-encrypted
        ├── BadRequestBody
        │   ├── MalformedJson: malformed-json
        │   ├── PayloadTooLarge: payload-too-large
        │   └── UnsupportedMediaType: unsupported-media-type
        ├── ValidationError: validation-error
        │   ├── UnknownField: unknown-field
        │   ├── InvalidAmount: invalid-amount
        │   ├── UnsupportedCurrency: unsupported-currency
        │   ├── WebhookUrlNotAllowed: webhook-url-not-allowed
        │   └── UnknownValue
        │       ├── UnknownSessionType: unknown-session-type
        │       ├── UnknownExpirationStrategy: unknown-expiration-strategy
        │       ├── UnknownPlatform: unknown-platform
        │       ├── UnknownProduct: unknown-product
        │       ├── UnknownCardType: unknown-card-type
        │       ├── UnknownCloseReason: unknown-close-reason
        │       └── UnknownEventType: unknown-event-type
        │           └── EventRenamed: event-renamed
        ├── TransferRejected
        │   ├── SelfTransfer: self-transfer
        │   ├── RecipientNotEligible: recipient-not-eligible
        │   └── InsufficientFunds: insufficient-funds
        ├── Conflict
        │   ├── CardAlreadyClosed: card-already-closed
        │   ├── CardNotActive: card-not-active
        │   ├── KycLocked: kyc-locked
        │   └── DocumentRequestNotOpen: document-request-not-open
        ├── IdempotencyError
        │   ├── IdempotencyKeyRequired: idempotency-key-required
        │   ├── IdempotencyKeyReused: idempotency-key-reused
        │   ├── IdempotencyKeyInvalid: idempotency-key-invalid
        │   └── IdempotencyKeyInUse: idempotency-key-in-use
        ├── NotFound: not-found
        │   ├── AccountNotFound: account-not-found
        │   ├── PersonNotFound: person-not-found
        │   ├── CardNotFound: card-not-found
        │   ├── TransferNotFound: transfer-not-found
        │   ├── DocumentRequestNotFound: document-request-not-found
        │   └── SubscriptionNotFound: subscription-not-found
        ├── InvalidControlToken: invalid-control-token
        ├── SnapshotInvalid: snapshot-invalid
        ├── OperationNotServed: operation-not-served
        ├── HostNotAllowed: host-not-allowed
        ├── OriginNotAllowed: origin-not-allowed
        ├── MethodNotAllowed: method-not-allowed
        ├── EndpointRemoved: endpoint-removed
        ├── EndpointDeprecated: endpoint-deprecated
        ├── UnsupportedApiVersion: unsupported-api-version
        ├── InvalidReferralCode: invalid-referral-code
        ├── RateLimited: rate-limited
        ├── ServiceUnavailable: service-unavailable
        │   ├── ServerBusy: server-busy
        │   └── InjectedFault: injected-fault
        └── ServerError: internal-error

Example::

    >>> from kit import errors
    >>> errors.by_code["card-already-closed"].__name__
    'CardAlreadyClosed'
    >>> errors.CardAlreadyClosed.code
    'card-already-closed'
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from kit import _codes
from kit import _env as env
from kit._operations import request_line

__all__ = [
    "GENERIC_CODES",
    "AccountNotFound",
    "ApiError",
    "ApiVersionMismatch",
    "BadRequestBody",
    "CardAlreadyClosed",
    "CardNotActive",
    "CardNotFound",
    "ConfigError",
    "Conflict",
    "ContractDrift",
    "CryptoError",
    "DeprecatedEndpoint",
    "DeviceNotRecognized",
    "DocumentRequestNotFound",
    "DocumentRequestNotOpen",
    "DuplicateDelivery",
    "EndpointDeprecated",
    "EndpointRemoved",
    "EventMismatch",
    "EventRenamed",
    "FixturesError",
    "HostNotAllowed",
    "IdempotencyError",
    "IdempotencyKeyInUse",
    "IdempotencyKeyInvalid",
    "IdempotencyKeyRequired",
    "IdempotencyKeyReused",
    "InjectedFault",
    "InsufficientFunds",
    "InvalidAmount",
    "InvalidClient",
    "InvalidControlToken",
    "InvalidDeviceKey",
    "InvalidEncryptedData",
    "InvalidPartnerToken",
    "InvalidReferralCode",
    "InvalidSession",
    "InvalidSessionTransition",
    "KitError",
    "KycLocked",
    "MalformedJson",
    "MethodNotAllowed",
    "MissingExtra",
    "NonceInvalid",
    "NotAvailable",
    "NotFound",
    "OAuthError",
    "OperationNotServed",
    "OriginNotAllowed",
    "PayloadTooLarge",
    "PersonNotFound",
    "PiiMustBeEncrypted",
    "RateLimited",
    "RecipientNotEligible",
    "SelfTransfer",
    "SensitiveDataError",
    "ServerBusy",
    "ServerError",
    "ServiceUnavailable",
    "SessionError",
    "SessionExpired",
    "SessionNotBound",
    "SessionRequired",
    "SessionSuperseded",
    "SessionTypeNotAllowed",
    "SignatureExpired",
    "SignatureInvalid",
    "SignatureMalformed",
    "SignatureMissing",
    "SnapshotInvalid",
    "SubscriptionNotFound",
    "TransferNotFound",
    "TransferRejected",
    "TransportError",
    "UnknownCardType",
    "UnknownCloseReason",
    "UnknownEventType",
    "UnknownExpirationStrategy",
    "UnknownField",
    "UnknownPlatform",
    "UnknownProduct",
    "UnknownSessionType",
    "UnknownSigningKey",
    "UnknownValue",
    "UnsupportedApiVersion",
    "UnsupportedCurrency",
    "UnsupportedMediaType",
    "ValidationError",
    "WebhookTimeout",
    "WebhookUrlNotAllowed",
    "WebhookVerificationError",
    "by_code",
    "error_from_response",
]


class KitError(Exception):
    """Base of every error the kit raises."""

    hint: str = ""  # a class says what to do; an instance may say more (kit._spoken)

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"{self.message} — {self.hint}" if self.hint else self.message

    def _repr_html_(self) -> str:
        """A readable card for notebooks: class, status and code (API errors), message, hint."""
        status, code = getattr(self, "status", None), getattr(self, "code", None)
        ref = f" <code>{html.escape(f'{status} {code}')}</code>" if code else ""
        hint = f"<br><i>{html.escape(self.hint)}</i>" if self.hint else ""
        return (
            f'<div style="border-left:4px solid #cf222e;padding:4px 8px">'
            f"<b>{html.escape(type(self).__name__)}</b>{ref}: {html.escape(self.message)}{hint}</div>"
        )


# --- client-side errors ---------------------------------------------------------------------


class ConfigError(KitError):
    """The client cannot be configured (a missing variable, an unknown option)."""

    hint = "check kit.connect()'s arguments and the PARTNER_API_* environment variables"


class NotAvailable(ConfigError, AttributeError):
    """A feature that only exists in another profile (``api.sim`` outside ``sim``)."""

    hint = "connect with kit.connect('sim') to use the simulator's control plane"


class FixturesError(ConfigError):
    """The sandbox fixtures file (``PARTNER_API_SANDBOX_FIXTURES``) cannot be used: unreadable,
    not TOML, or an entry of the wrong shape. The message names the entry, never its value."""

    hint = "see the format in docs/sandbox.md, Test personas (and kit._fixtures)"


class ContractDrift(KitError):
    """An answer differs from the contract (``data/openapi.json``); raised only by clients built
    with ``kit.connect(..., drift="raise")`` — by default drift is reported in ``api.drift``.

    ``drift`` holds the rows (:class:`kit._drift.Drift`): operation, field, expected, got.
    """

    hint = "the API no longer matches its contract: see api.drift, and tell the API's owner"

    def __init__(self, drift: Any) -> None:
        self.drift = tuple(drift)
        lines = "; ".join(str(d) for d in self.drift[:5])
        more = f" (and {len(self.drift) - 5} more)" if len(self.drift) > 5 else ""
        super().__init__(f"contract drift: {lines}{more}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.drift,))


class DeprecatedEndpoint(KitError):
    """The caller asked for a deprecated endpoint without allowing it."""

    hint = f"use the successor ({request_line('access_token')}), or connect(..., allow_deprecated=True)"


class ApiVersionMismatch(KitError):
    """The server answered under another API version than the client pinned (``svc-api-version``)."""

    hint = "the server ignores or overrides the pinned version; pin one it serves, or none"


class TransportError(KitError):
    """The server could not be reached or did not answer (after the retries)."""

    hint = "check that the base URL is right and the server is running; the call was retried"


class CryptoError(KitError):
    """Encrypted data from the server failed the device's checks (algorithm, kid, tag)."""

    hint = "the answer was not for this device's key; open a new session from this device"


class SensitiveDataError(KitError, TypeError):
    """A :class:`~kit.Sensitive` value was about to leave memory (pickle, JSON)."""

    hint = "keep sensitive values in memory; call .reveal() only where the value is used"


class WebhookTimeout(KitError, TimeoutError):
    """No matching webhook delivery arrived in time."""

    hint = (
        "the receiver subscribes on first use of api.webhooks: call api.webhooks.listen() before "
        "the action that emits the event; check api.webhooks.events and api.sim.deliveries() "
        "(retries happen only when the simulator clock advances)"
    )


class WebhookVerificationError(KitError):
    """A webhook delivery failed verification: reject it (answer 4xx, do not process)."""

    hint = f"reject the delivery; fetch {request_line('webhook_keys')} again if keys were rotated"


class SignatureMissing(WebhookVerificationError):
    """No ``svc-webhook-signature`` header."""


class SignatureMalformed(WebhookVerificationError):
    """The signature header is not a detached compact JWS (``header..signature``)."""


class SignatureInvalid(WebhookVerificationError):
    """Wrong algorithm, forbidden header, unknown ``kid``, or a signature that does not verify."""


class UnknownSigningKey(SignatureInvalid):
    """The signature's ``kid`` is not in the JWK set (fetch the keys again, once)."""


class EventMismatch(WebhookVerificationError):
    """The signed ``svc_event_id`` is not the body's ``id`` (or the body is not an event)."""


class SignatureExpired(WebhookVerificationError):
    """The signature's ``iat`` is further than the allowed skew from now."""


class DuplicateDelivery(WebhookVerificationError):
    """An event id seen before: answer 2xx, but do not process it twice."""

    hint = "acknowledge it (2xx) and skip processing: the event was handled already"


# --- answers from the API -------------------------------------------------------------------


class ApiError(KitError):
    """The API answered with an error (RFC 9457 problem, or RFC 6749 for the token endpoint).

    Attributes: ``status``, ``code`` (the stable slug), ``detail`` (the server's fixed text),
    ``request_id`` (``svc-request-id``), ``problem`` (the whole body, a dict).

    On the class, ``code`` is the problem code the class is raised for (``aliases``: further
    codes; a family such as :class:`SessionError` has none of its own, ``""``); :data:`by_code`
    is read from these. On an instance, ``code`` is the code the server sent.
    """

    code: str = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    hint = "see the problem's detail; the request id identifies the call in the server's logs"

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        request_id: str | None = None,
        problem: Mapping[str, Any] | None = None,
        *,
        submitted: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.status = status
        self.code = code
        self.detail = detail
        self.request_id = request_id
        self.problem: dict[str, Any] = dict(problem or {})
        self.submitted = submitted
        self.retry_after = retry_after
        super().__init__(self.describe())

    def describe(self) -> str:
        """What went wrong, in words (the server's detail unless a subclass knows better)."""
        return self.detail or self.code

    def __str__(self) -> str:
        ref = f"{self.status} {self.code}"
        if self.request_id:
            ref += f", request {self.request_id}"
        return f"{self.message} — {self.hint} [{ref}]"

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild,
            (type(self), self.status, self.code, self.detail, self.request_id, self.problem),
        )


def _rebuild(cls: type[ApiError], *args: Any) -> ApiError:
    return cls(*args)


class OAuthError(ApiError):
    """An RFC 6749 §5.2 error from a token endpoint (``code`` is its ``error``)."""

    code = "invalid_request"
    aliases = ("invalid_grant", "unauthorized_client", "unsupported_grant_type", "invalid_scope")
    hint = "check the client id and secret (PARTNER_API_CLIENT_ID / _SECRET)"


class InvalidClient(OAuthError):
    """401 ``invalid_client``: unknown client or wrong secret."""

    code = "invalid_client"


class InvalidPartnerToken(ApiError):
    """401: the partner token is missing, unknown, revoked or expired."""

    code = "invalid-partner-token"
    hint = "the client re-fetches the token once by itself; if this persists, check credentials"


class SessionError(ApiError):
    """A problem with the device session (``svc-session-id``)."""

    hint = "open a session: api.sessions.create('anonymous') and promote it"


class SessionRequired(SessionError):
    code = "session-required"
    hint = "this endpoint needs a session: api.sessions.create(...) or .open(...) first"


class InvalidSession(SessionError):
    code = "invalid-session"
    hint = "the session is unknown or was ended; create a new one with api.sessions.create(...)"


class SessionExpired(SessionError):
    code = "session-expired"
    hint = "the session expired; open a new one (api.sessions.open(...) for a bound device)"


class SessionSuperseded(SessionError):
    code = "session-superseded"
    hint = "the session was promoted; use the newer session (api.session shows it)"


class SessionTypeNotAllowed(SessionError):
    code = "session-type-not-allowed"
    hint = "this endpoint needs another session type; promote with api.sessions.promote(...)"


class SessionNotBound(SessionError):
    code = "session-not-bound"
    hint = (
        "the session is not this account's or person's (an anonymous one is bound to none): "
        "promote it with api.sessions.promote(...), or use a session of this account/person"
    )


class DeviceNotRecognized(SessionError):
    code = "device-not-recognized"
    hint = (
        "this device is not bound to that account or person; promote from an anonymous session "
        "on the device that created it instead of opening one directly"
    )


class InvalidSessionTransition(SessionError):
    code = "invalid-session-transition"
    hint = (
        "promote one step at a time (anonymous → account → person) from the current session; "
        "person needs established KYC"
    )


class NonceInvalid(SessionError):
    code = "nonce-invalid"
    hint = "fetch fresh init data (the client does this per session request) and try again"


class InvalidDeviceKey(SessionError):
    code = "invalid-device-key"
    hint = "the device key must be a public EC P-256 JWK; reconnect to get a fresh device"


class InvalidEncryptedData(ApiError):
    code = "invalid-encrypted-data"
    hint = "encrypt to a key from fresh init data (kid set, RSA-OAEP-256 or ECDH-ES+A256KW, A256GCM)"


class PiiMustBeEncrypted(ApiError):
    code = "pii-must-be-encrypted"
    hint = "send personal data only inside encrypted_* fields (the client's methods do this)"


class BadRequestBody(ApiError):
    hint = "send a JSON object body (Content-Type: application/json) under 64 KiB"


class MalformedJson(BadRequestBody):
    code = "malformed-json"


class PayloadTooLarge(BadRequestBody):
    code = "payload-too-large"


class UnsupportedMediaType(BadRequestBody):
    code = "unsupported-media-type"


class ValidationError(ApiError):
    """422: the body does not match the schema; ``errors`` lists JSON Pointers."""

    code = "validation-error"
    hint = "fix the fields named in .errors and send again"

    @property
    def errors(self) -> list[dict[str, Any]]:
        """``[{"field": "/reason", "message": …}]`` as the server reported them."""
        return list(self.problem.get("errors") or [])

    def describe(self) -> str:
        fields = ", ".join(str(e.get("field", "?")) for e in self.errors)
        return f"{self.detail} (fields: {fields})" if fields else self.detail


class UnknownField(ValidationError):
    code = "unknown-field"
    hint = "remove the fields named in .errors; this endpoint does not accept them"


class InvalidAmount(ValidationError):
    code = "invalid-amount"
    hint = "amounts are positive decimal strings with at most two decimals, e.g. '12.50'"


class UnsupportedCurrency(ValidationError):
    code = "unsupported-currency"
    hint = "only USD is supported"


class WebhookUrlNotAllowed(ValidationError):
    code = "webhook-url-not-allowed"
    hint = "subscribe a loopback URL, or start the server allowing this host"


class UnknownValue(ValidationError):
    """An enumerated value outside its list; ``allowed`` lists the accepted ones."""

    noun: ClassVar[str] = "value"
    hint = "use one of the allowed values"

    @property
    def allowed(self) -> list[str]:
        return [str(v) for v in self.problem.get("allowed") or []]

    def describe(self) -> str:
        what = f"{self.noun} {self.submitted!r}" if self.submitted is not None else self.noun
        allowed = ", ".join(self.allowed) or "(not given)"
        return f"{what} is not allowed; allowed: {allowed}"


class UnknownSessionType(UnknownValue):
    code = "unknown-session-type"
    noun = "session type"


class UnknownExpirationStrategy(UnknownValue):
    code = "unknown-expiration-strategy"
    noun = "expiration strategy"


class UnknownPlatform(UnknownValue):
    code = "unknown-platform"
    noun = "platform"


class UnknownProduct(UnknownValue):
    code = "unknown-product"
    noun = "product"


class UnknownCardType(UnknownValue):
    code = "unknown-card-type"
    noun = "card type"


class UnknownCloseReason(UnknownValue):
    code = "unknown-close-reason"
    noun = "close reason"


class UnknownEventType(UnknownValue):
    code = "unknown-event-type"
    noun = "event type"


class EventRenamed(UnknownEventType):
    """A pre-1.2.0 webhook event name; ``renamed`` maps old names to new ones."""

    code = "event-renamed"
    hint = "use the 1.2.0 names (document_request.*); refusing the old ones is the server's choice (A23)"

    @property
    def renamed(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in (self.problem.get("renamed") or {}).items()}

    def describe(self) -> str:
        pairs = ", ".join(f"{old!r} is now {new!r}" for old, new in self.renamed.items())
        return f"event names were corrected in 1.2.0: {pairs or self.detail}"


class TransferRejected(ApiError):
    """422: a P2P business rule refused the transfer; no money moved."""

    hint = "no money moved; fix the transfer and send it again with a new idempotency key"


class SelfTransfer(TransferRejected):
    code = "self-transfer"
    hint = "the recipient's account is the source account; choose another recipient"


class RecipientNotEligible(TransferRejected):
    code = "recipient-not-eligible"
    hint = "the recipient must be an established person (KYC done, not locked)"


class InsufficientFunds(TransferRejected):
    code = "insufficient-funds"
    hint = "the balance is too low; lower the amount (in the sim: api.sim.fund(account_id, …))"


class Conflict(ApiError):
    """409: the resource's state does not allow this."""

    hint = "read the resource again and check its status"


class CardAlreadyClosed(Conflict):
    code = "card-already-closed"
    hint = "the card is closed already; nothing to do"


class CardNotActive(Conflict):
    code = "card-not-active"
    hint = "the card is expired; issue a new card with api.cards.create(...)"


class KycLocked(Conflict):
    code = "kyc-locked"
    hint = "three KYC attempts failed: the person is locked; onboard again or contact support"


class DocumentRequestNotOpen(Conflict):
    code = "document-request-not-open"
    hint = "the document request was completed already; list open ones with document_requests.list"


class IdempotencyError(ApiError):
    hint = "use a new Idempotency-Key for a different request"


class IdempotencyKeyRequired(IdempotencyError):
    code = "idempotency-key-required"
    hint = "send an Idempotency-Key header (the client generates one for every POST)"


class IdempotencyKeyReused(IdempotencyError):
    code = "idempotency-key-reused"
    hint = "this key was used for another request; use a new key for a different body or path"


class IdempotencyKeyInvalid(IdempotencyError):
    code = "idempotency-key-invalid"
    hint = "an Idempotency-Key has 1 to 255 characters (the client generates a valid one)"


class IdempotencyKeyInUse(IdempotencyError):
    code = "idempotency-key-in-use"
    hint = "the first request with this key is still in flight; wait and retry the same call"


class NotFound(ApiError):
    code = "not-found"
    hint = "check the id (ids belong to the partner that created them)"


class AccountNotFound(NotFound):
    code = "account-not-found"


class PersonNotFound(NotFound):
    code = "person-not-found"


class CardNotFound(NotFound):
    code = "card-not-found"


class TransferNotFound(NotFound):
    code = "transfer-not-found"
    hint = "only the sender and the receiver can see a transfer; check the id and the session"


class DocumentRequestNotFound(NotFound):
    code = "document-request-not-found"


class SubscriptionNotFound(NotFound):
    code = "subscription-not-found"


class InvalidControlToken(ApiError):
    """401 from the simulator's control plane (``/_sim``) without its control token."""

    code = "invalid-control-token"
    hint = (
        "off loopback the control plane needs the token kit serve was given "
        f"({env.SIM_CONTROL_TOKEN}): kit.connect('sim', base_url=..., control_token=...)"
    )


class SnapshotInvalid(ApiError):
    """400 from ``POST /_sim/restore``: not a kit state snapshot, or one of another version."""

    code = "snapshot-invalid"
    hint = "restore a snapshot taken with api.sim.snapshot() or kit state snapshot, by this kit's version"


class OperationNotServed(ApiError):
    """422 from ``POST /_sim/faults``: no partner operation of this simulator serves the fault's
    method and path (A45), so it would never fire; nothing is added."""

    code = "operation-not-served"
    hint = (
        "name a method and path this simulator serves (a dialect file's path for an operation it "
        "moves), or api.sim.add_fault(operation=KEY), which looks the path up"
    )


class HostNotAllowed(ApiError):
    """400 from a simulator whose guards do not take the request's ``Host`` (A70)."""

    code = "host-not-allowed"
    hint = (
        "this server answers only requests naming it in Host: use its own address, or start "
        "kit serve with --allowed-host NAME for the name you reach it by (a reverse proxy's)"
    )


class OriginNotAllowed(ApiError):
    """403 from the simulator's control plane for a request sent from another origin (A70)."""

    code = "origin-not-allowed"
    hint = "the control plane takes no request from a web page of another origin; call it from code"


class MethodNotAllowed(ApiError):
    code = "method-not-allowed"
    hint = "this path does not take this method"


class EndpointRemoved(ApiError):
    code = "endpoint-removed"
    hint = "this endpoint was removed in 1.2.0; there is no replacement to call"


class EndpointDeprecated(ApiError):
    code = "endpoint-deprecated"
    hint = f"the server refuses deprecated endpoints (strict mode); use {request_line('access_token')}"


class UnsupportedApiVersion(ApiError):
    """400: the server does not serve the version named in ``svc-api-version``."""

    code = "unsupported-api-version"
    hint = "pin one of the versions the server names: kit.connect(..., api_version=...)"

    @property
    def supported(self) -> list[str]:
        return [str(v) for v in self.problem.get("supported") or []]


class InvalidReferralCode(ApiError):
    code = "invalid-referral-code"
    hint = "Refer a Friend (1.1.0 only): send another account's referral code"


class RateLimited(ApiError):
    code = "rate-limited"
    hint = (
        "too many requests; slow down, try again after retry_after seconds (the client retries a "
        "call it may send twice, never a session request: its nonce is spent)"
    )


class ServiceUnavailable(ApiError):
    code = "service-unavailable"
    hint = "the service is unavailable; the client retried with backoff; try again later"


class ServerBusy(ServiceUnavailable):
    """503 from a simulator answering as many requests at once as it takes (A72)."""

    code = "server-busy"
    hint = "the simulator is at its limit of requests at once; the client retried; send fewer at once"


class InjectedFault(ServiceUnavailable):
    code = "injected-fault"
    hint = "a fault injected in the simulator; api.sim.clear_faults() removes them"


class ServerError(ApiError):
    code = "internal-error"
    hint = "the server failed; report the request id"


def tree(root: type[KitError] = KitError) -> str:
    """The classes under ``root``, rendered: each under its first base, in the order defined,
    with its other bases (``also``) and the problem code it stands for. The module docstring
    holds a copy (a test keeps it current).

        >>> print(tree(SessionError).splitlines()[1])
        ├── SessionRequired: session-required
    """
    lines = [_label(root)]

    def walk(cls: type[KitError], prefix: str) -> None:
        children = [c for c in cls.__subclasses__() if c.__bases__[0] is cls and c.__module__ == __name__]
        for i, child in enumerate(children):
            last = i == len(children) - 1
            lines.append(f"{prefix}{'└── ' if last else '├── '}{_label(child)}")
            walk(child, prefix + ("    " if last else "│   "))

    walk(root, "")
    return "\n".join(lines)


def _label(cls: type[KitError]) -> str:
    also = [base.__name__ for base in cls.__bases__[1:]]
    code = vars(cls).get("code")
    return cls.__name__ + (f" (also {', '.join(also)})" if also else "") + (f": {code}" if code else "")


def _by_code() -> dict[str, type[ApiError]]:
    """Every class's own ``code`` (and ``aliases``), read from the classes themselves; each
    one of ``kit._codes.KNOWN``, and each of those a class's."""
    found: dict[str, type[ApiError]] = {}
    todo: list[type[ApiError]] = [ApiError]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        for code in (vars(cls).get("code"), *vars(cls).get("aliases", ())):
            if code and found.setdefault(code, cls) is not cls:
                raise RuntimeError(f"problem code {code!r} has two classes")
    if set(found) != _codes.KNOWN:
        raise RuntimeError(f"kit._codes and the classes differ: {sorted(set(found) ^ _codes.KNOWN)}")
    return dict(sorted(found.items()))


#: Problem code (or RFC 6749 ``error``) → the class raised for it (derived from the classes).
by_code: dict[str, type[ApiError]] = _by_code()

#: Codes that name no particular problem ("an HTTP error"): the class follows the status.
GENERIC_CODES = _codes.GENERIC

_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequestBody,
    401: InvalidPartnerToken,
    403: SessionError,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    410: EndpointDeprecated,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    422: ValidationError,
    429: RateLimited,
    503: ServiceUnavailable,
}


def _class_for(status: int, code: str) -> type[ApiError]:
    if code in by_code:
        return by_code[code]
    if code.endswith("-not-found"):
        return NotFound
    if code.startswith("unknown-"):
        return UnknownValue
    if status >= 500:
        return ServiceUnavailable if status == 503 else ServerError
    return _BY_STATUS.get(status, ApiError)


def _shared_class(classes: list[type[ApiError]]) -> type[ApiError]:
    """The nearest class every one of ``classes`` is (``ApiError`` at the least)."""
    for candidate in classes[0].__mro__:
        if issubclass(candidate, ApiError) and all(issubclass(c, candidate) for c in classes):
            return candidate
    return ApiError


def error_from_response(
    status: int,
    body: Any,
    *,
    request_id: str | None = None,
    retry_after: float | None = None,
    submitted: Mapping[str, str] | None = None,
    meaning: Callable[[str], tuple[str, ...]] | None = None,
) -> ApiError:
    """Build the error for an answer: the one place a class is chosen.

    ``body`` is the parsed JSON (a problem, an RFC 6749 error, or anything else);
    ``submitted`` maps problem codes to the non-sensitive value the caller sent for that
    field (``{"unknown-event-type": "password.reset"}``), quoted in the message. ``meaning``
    gives the kit's codes a server's code stands for (a dialect's A64,
    :meth:`kit._dialect.Dialect.codes_from_wire`): the class is theirs, or, when one code
    stands for several, the nearest class they share, and the message names them.

    Example::

        >>> e = error_from_response(409, {"code": "card-already-closed", "detail": "Closed."})
        >>> type(e).__name__, e.status
        ('CardAlreadyClosed', 409)
    """
    problem: dict[str, Any] = dict(body) if isinstance(body, Mapping) else {}
    if "code" in problem:
        code = str(problem["code"])
        detail = str(problem.get("detail") or problem.get("title") or code)
        ours = meaning(code) if meaning is not None else (code,)
        cls = _shared_class([_class_for(status, c) for c in ours])
        if len(ours) > 1:
            detail += f" (this server's {code} stands for the kit's {', '.join(ours)}: A64)"
    elif "error" in problem:  # RFC 6749 §5.2
        code = str(problem["error"])
        detail = str(problem.get("error_description") or code)
        cls = by_code.get(code, OAuthError)
        if not issubclass(cls, OAuthError):
            cls = OAuthError
    else:
        code = f"http-{status}"
        detail = f"the server answered {status} without a problem body"
        cls = _class_for(status, code)
    return cls(
        status,
        code,
        detail,
        request_id,
        problem,
        submitted=(submitted or {}).get(code),
        retry_after=retry_after,
    )


class MissingExtra(ConfigError):
    """A part of the kit used without its extra installed (``kit.connect("sim")`` without ``[sim]``).

    The message names the part, the extra and the command that installs it, and the modules
    missing; ``extra`` holds the extra's name. Raised by :func:`kit._extras.require` where each
    part starts (``kit.connect("sim")``, ``kit serve``, ``import kit.lab``…).

    Example::

        >>> str(MissingExtra("sim", "kit serve", ("fastapi",))).split(" — ")[0]
        "kit serve needs the 'sim' extra: pip install 'partner-api-kit[sim]' (missing: fastapi)"
    """

    hint = "'partner-api-kit[all]' installs every part"

    def __init__(self, extra: str, what: str, missing: tuple[str, ...]) -> None:
        self.extra = extra
        super().__init__(
            f"{what} needs the {extra!r} extra: pip install 'partner-api-kit[{extra}]' "
            f"(missing: {', '.join(missing)})"
        )
