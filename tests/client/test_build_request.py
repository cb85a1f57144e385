"""``api.build_request``: a request of one's own, built in the server's spelling and not sent."""

from __future__ import annotations

import pytest

import kit
from kit.errors import KitError

CAMEL = kit.register.data_dir() / "choices" / "camel.toml"


@pytest.mark.parametrize("choices", [None, CAMEL], ids=["own", "camel"])
def test_a_person_sent_in_clear_by_hand_is_refused_in_any_dialect(choices) -> None:  # type: ignore[no-untyped-def]
    """The request carries the dialect's path, names, token header and the current session;
    nothing is sent nor recorded until it is sent by hand, and the server refuses the PII."""
    with kit.connect("sim", choices=choices, sleep=lambda _: None) as api:
        api.sessions.create("anonymous")
        account = api.accounts.create()
        api.sessions.promote("account", account_id=account.account_id)
        calls = len(api.history)
        request = api.build_request(
            "create_person", {"account_id": account.account_id}, json={"national_id": "000-00-0000"}
        )
        assert len(api.history) == calls
        with api.config.http_client() as http:
            answer = http.send(request)
        assert len(api.history) == calls
        assert "svc-session-id" in request.headers
        assert not {"idempotency-key", "x-idempotency-key"} & set(request.headers)
        person = api.persons.create(
            account.account_id, first_name="A", last_name="B", date_of_birth="1990-01-01", national_id="1"
        )
    assert (answer.status_code, answer.json()["code"]) == (422, "pii-must-be-encrypted"), answer.text
    assert "000-00-0000" not in answer.text
    assert request.url.path.endswith("/people" if choices else "/persons")
    assert person.status == "kyc_pending"


def test_an_unknown_operation_is_refused_naming_the_known_ones() -> None:
    with kit.connect("sim", sleep=lambda _: None) as api, pytest.raises(KitError, match="create_person"):
        api.build_request("create_persons")
