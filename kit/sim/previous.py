"""Models of the operations only 1.1.0 serves (A27): savings close (A65) and Refer a Friend
(A66), both removed in 1.2.0 (their paths then answer as removed endpoints do, A29)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from kit.sim.models import Strict


class EmptyBody(Strict):
    """A body with no fields (absent, ``{}`` or empty): any field is 422 unknown-field."""


class SavingsCloseOut(BaseModel):
    account_id: str
    savings_status: Literal["closed"]


class ReferralCodeOut(BaseModel):
    account_id: str
    referral_code: str


class ReferralCreate(Strict):
    referral_code: str = Field(max_length=64)


class ReferralOut(BaseModel):
    account_id: str
    referral_code: str
    status: Literal["accepted"]
