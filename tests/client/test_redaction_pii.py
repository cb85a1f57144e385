"""The recorder redacts personal data by the rule the simulator refuses it by (A11, by meaning:
``kit._pii``), so what a partner sends in clear by mistake (an inbound event's ``details``) never
reaches a wire log or a HAR file."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

import kit
import kit.errors
from kit import _pii, _redaction
from kit._redaction import Redactor
from kit._wire import as_dict

from .conftest import onboard


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
        ("note", "born 14 March 1950"),
        ("ni", "AB123456C"),
        ("tax", "12-3456789"),
        ("note", "id 000000001"),
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


def test_a_refused_event_leaves_no_personal_data_in_the_history_nor_the_wire_log(
    make_client: Callable[..., kit.Client],
) -> None:
    """What the simulator refuses by A11 (422), the client's records redact by the same rule."""
    api = make_client(record=True)
    customer = onboard(api)
    sent = {"note": "born 14 March 1950", "ni": "AB123456C", "tax": "12-3456789", "memo": "id 000000001"}
    for name, value in sent.items():
        with pytest.raises(kit.errors.PiiMustBeEncrypted):
            api.events.send(customer.account_id, "password.changed", details={name: value})
    assert api.wire_log is not None
    recorded = [
        json.loads(exchange.attempts[0].request.body or "{}")
        for exchange in api.wire_log.exchanges()
        if exchange.path.endswith("/events")
    ]
    assert [r["details"] for r in recorded] == [{name: "<pii>"} for name in sent]
    shown = json.dumps([as_dict(e) for e in api.wire_log.exchanges()]) + api.history.to_string()
    for value in sent.values():
        assert value.split(" ", 1)[-1] not in shown, value
