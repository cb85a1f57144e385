"""The recorder redacts personal data by the rule the simulator refuses it by (A11, by meaning:
``kit._pii``), so what a partner sends in clear by mistake (an inbound event's ``details``) never
reaches a wire log or a HAR file."""

from __future__ import annotations

import pytest

from kit import _pii, _redaction
from kit._redaction import Redactor


def test_one_rule_for_refusing_and_redacting() -> None:
    assert _redaction.is_pii_name is _pii.is_pii_name


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("ssn", "123-45-6789"),
        ("socialSecurityNo", "123456789"),
        ("customer_date_of_birth", "1990-01-01"),
        ("ssn_last4", "6789"),
        ("memo", "my ssn is 123456789"),
        ("note", "born 1990-01-01 in Ohio"),
        ("reference", "000-12-3456"),
    ],
)
def test_personal_data_in_clear_is_redacted_wherever_it_stands(field: str, value: str) -> None:
    recorded = Redactor().json({"details": {field: value}})
    assert recorded == {"details": {field: "<pii>"}}


@pytest.mark.parametrize(
    ("field", "value"), [("dob_verified", True), ("start_date", "2025-01-06"), ("last4", "1234")]
)
def test_what_only_qualifies_personal_data_is_kept(field: str, value: object) -> None:
    assert Redactor().json({field: value}) == {field: value}
