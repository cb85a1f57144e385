"""Request and response models of the wire contract, for validation and OpenAPI.

Enumerated fields are plain strings here and checked against the register by the routes,
so that each has its own problem code and an ``allowed`` list (``unknown-close-reason``…).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kit import register

_A = register.value
#: The bounds of request fields (A47): the register's values, never literals here.
_SIZE = _A("A47")
MONEY_PATTERN = _A("A19")["pattern"]
if TYPE_CHECKING:
    TokenType = str
else:  # the one token type the register names (A01), a constant of the schema
    TokenType = Literal[_A("A01")["token_type"]]


def _enum(values: list[str], description: str = "") -> Any:
    return Field(json_schema_extra={"enum": list(values)}, description=description)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Lenient(BaseModel):
    """Plaintexts: unknown fields inside a decrypted payload are ignored (the wire contract)."""

    model_config = ConfigDict(extra="ignore")


class Problem(BaseModel):
    type: str
    title: str
    status: int
    detail: str
    code: str
    errors: list[dict[str, str]] | None = None
    allowed: list[str] | None = None


class OAuthErrorBody(BaseModel):
    error: str
    error_description: str


class Money(Strict):
    value: str = Field(description="A decimal string; on input " + MONEY_PATTERN)
    currency: str = Field(description="ISO 4217; USD only")


# --- partner level -------------------------------------------------------------------------
class TokenResponse(BaseModel):
    access_token: str
    token_type: TokenType
    expires_in: int
    scope: str


class InitData(BaseModel):
    jwks: dict[str, list[dict[str, Any]]]
    enc: list[str]
    nonce: str
    nonce_expires_at: str


# --- sessions ------------------------------------------------------------------------------
class SessionCreate(Strict):
    session_type: str = _enum(_A("A05")["session_types"])
    expiration_strategy: str = _enum(_A("A06")["strategies"])
    encrypted_data: str = Field(description="Compact JWE of the session plaintext")


class Device(Lenient):
    device_id: str = Field(min_length=1, max_length=_SIZE["device_id_max_chars"])
    platform: str = _enum(_A("A05")["platforms"])
    model: str = Field(max_length=_SIZE["device_model_max_chars"])
    os_version: str = Field(max_length=_SIZE["os_version_max_chars"])


class SessionPlaintext(Lenient):
    nonce: str
    device: Device
    device_jwks: dict[str, Any]
    account_id: str | None = None
    person_id: str | None = None


class SessionCreated(BaseModel):
    session_token: str | None = None
    encrypted_session_token: str | None = None
    session_type: str
    expiration_strategy: str
    expires_at: str
    device_id: str


# --- onboarding ----------------------------------------------------------------------------
class AccountCreate(Strict):
    product: str = _enum(_A("A10")["products"])


class AccountOut(BaseModel):
    account_id: str
    product: str
    status: str
    balance: Money
    created_at: str


class PersonCreate(Strict):
    encrypted_pii: str = Field(description="Compact JWE of the person's PII")


class PiiPlaintext(Lenient):
    first_name: str = Field(min_length=1, max_length=_SIZE["name_max_chars"])
    last_name: str = Field(min_length=1, max_length=_SIZE["name_max_chars"])
    date_of_birth: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    national_id: str = Field(min_length=1, max_length=_SIZE["national_id_max_chars"])


class PersonOut(BaseModel):
    person_id: str
    account_id: str
    status: str


class KycQuestionsOut(BaseModel):
    encrypted_questions: str


class KycAnswersCreate(Strict):
    encrypted_answers: str


class KycAnswer(Lenient):
    question_id: str
    choice: str


class KycAnswersPlaintext(Lenient):
    answers: list[KycAnswer]


class KycResult(BaseModel):
    person_id: str
    status: str
    attempts_left: int


# --- cards ---------------------------------------------------------------------------------
class CardCreate(Strict):
    type: str = _enum(_A("A13")["types"])


class CardClose(Strict):
    reason: str | None = Field(default=None, json_schema_extra={"enum": [*_A("A15")["reasons"], None]})


class CardOut(BaseModel):
    card_id: str
    account_id: str
    type: str
    status: str
    last4: str
    expires_on: str
    close_reason: str | None
    created_at: str


# --- inbound events ------------------------------------------------------------------------
class EventCreate(Strict):
    event_type: str = _enum(register.spec()["inbound_event_types"])
    occurred_at: str | None = None
    details: dict[str, Any] | None = None


class EventOut(BaseModel):
    event_id: str
    event_type: str
    account_id: str
    occurred_at: str | None
    received_at: str


# --- P2P -----------------------------------------------------------------------------------
class TransferCreate(Strict):
    from_account_id: str
    to_person_id: str
    amount: dict[str, Any] = Field(description='{"value": "12.50", "currency": "USD"}')
    memo: str | None = Field(default=None, max_length=_SIZE["memo_max_chars"])


class TransferOut(BaseModel):
    transfer_id: str
    status: str
    from_account_id: str
    to_person_id: str
    amount: Money
    memo: str | None
    created_at: str
    viewer_role: str | None = None


# --- webhooks and document requests -------------------------------------------------------
class SubscriptionCreate(Strict):
    url: str = Field(max_length=_SIZE["webhook_url_max_chars"])
    events: list[str] = Field(
        min_length=1,
        max_length=_SIZE["events_per_subscription_max"],
        json_schema_extra={"items": {"enum": list(register.spec()["webhook_events"])}},
    )


class SubscriptionOut(BaseModel):
    subscription_id: str
    url: str
    events: list[str]


class Jwks(BaseModel):
    keys: list[dict[str, Any]]


class DocumentRequestOut(BaseModel):
    document_request_id: str
    person_id: str
    account_id: str
    status: str
    document_type: str
    created_at: str
    completed_at: str | None


class DocumentRequestList(BaseModel):
    document_requests: list[DocumentRequestOut]


class DocumentSubmit(Strict):
    encrypted_document: str


# --- control plane -------------------------------------------------------------------------
class ResetIn(Strict):
    seed: int | None = None


class AdvanceIn(Strict):
    seconds: int = Field(ge=0, le=_SIZE["clock_advance_max_seconds"])


class FundIn(Strict):
    amount: dict[str, Any]


class FaultIn(Strict):
    method: str
    path: str
    status: int | None = Field(default=503, ge=_SIZE["fault_status_min"], le=_SIZE["fault_status_max"])
    rate: float = Field(default=1.0, ge=0, le=1)
    times: int | None = Field(default=None, ge=1)
    when: Literal["before_commit", "after_commit"] = "before_commit"
    retry_after: int | None = Field(default=None, ge=0, le=_SIZE["fault_retry_after_max_seconds"])
    latency_ms: int | None = Field(default=None, ge=0, le=_SIZE["fault_latency_max_ms"])
