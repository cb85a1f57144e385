"""The request bodies and the few answers of the areas past a first session: onboarding and KYC,
cards, inbound events, P2P, webhooks, document requests and the control plane.

They are :mod:`kit.sim.models`' kind (same bases, same register bounds, A47), kept apart so that
``kit.connect("sim")`` builds none of them: only the routes that take them import this module,
on their first request (``kit.sim.table``). A kept record's representation is in
:mod:`kit.sim.representations`, where the personality chooses its optional fields (A62).
"""

# No ``from __future__ import annotations``, as in kit.sim.models (pydantic would compile each string).
from typing import Any, Literal

from pydantic import Field

from kit import register
from kit.sim.models import Lenient, Model, Strict, enum_field
from kit.sim.representations import DocumentRequestOut

_SIZE = register.value("A47")


# --- onboarding and KYC --------------------------------------------------------------------
class AccountCreate(Strict):
    product: str = enum_field(register.value("A10")["products"])


class PersonCreate(Strict):
    encrypted_pii: str = Field(description="Compact JWE of the person's PII")


class PiiPlaintext(Lenient):
    first_name: str = Field(min_length=1, max_length=_SIZE["name_max_chars"])
    last_name: str = Field(min_length=1, max_length=_SIZE["name_max_chars"])
    date_of_birth: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    national_id: str = Field(min_length=1, max_length=_SIZE["national_id_max_chars"])


class KycQuestionsOut(Model):
    encrypted_questions: str


class KycAnswersCreate(Strict):
    encrypted_answers: str


class KycAnswer(Lenient):
    question_id: str
    choice: str


class KycAnswersPlaintext(Lenient):
    answers: list[KycAnswer]


class KycResult(Model):
    person_id: str
    status: str
    attempts_left: int


# --- cards ---------------------------------------------------------------------------------
class CardCreate(Strict):
    type: str = enum_field(register.value("A13")["types"])


class CardClose(Strict):
    reason: str | None = Field(
        default=None, json_schema_extra={"enum": [*register.value("A15")["reasons"], None]}
    )


# --- inbound events --------------------------------------------------------------------------
class EventCreate(Strict):
    event_type: str = enum_field(register.fact("inbound_event_types"))
    occurred_at: str | None = None
    details: dict[str, Any] | None = None


# --- P2P -------------------------------------------------------------------------------------
class TransferCreate(Strict):
    from_account_id: str
    to_person_id: str
    amount: dict[str, Any] = Field(description='{"value": "12.50", "currency": "USD"}')
    memo: str | None = Field(default=None, max_length=_SIZE["memo_max_chars"])


# --- webhooks and document requests ----------------------------------------------------------
class SubscriptionCreate(Strict):
    url: str = Field(max_length=_SIZE["webhook_url_max_chars"])
    events: list[str] = Field(
        min_length=1,
        max_length=_SIZE["events_per_subscription_max"],
        json_schema_extra={"items": {"enum": list(register.fact("webhook_events"))}},
    )


class Jwks(Model):
    keys: list[dict[str, Any]]


class DocumentRequestList(Model):
    document_requests: list[DocumentRequestOut]


class DocumentSubmit(Strict):
    encrypted_document: str


# --- control plane ---------------------------------------------------------------------------
class ResetIn(Strict):
    seed: int | None = Field(default=None, ge=-(2**63), le=2**63 - 1)  # 64-bit, as a state keeps (A71)


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
