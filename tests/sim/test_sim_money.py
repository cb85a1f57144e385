"""§3 money on input: ``^\\d+(\\.\\d{1,2})?$`` (ASCII digits, never rounded), two decimals out."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.sim.helpers import assert_problem, balance, call, journey, money

PATTERN = r"\A[0-9]+(\.[0-9]{1,2})?\Z"
PROPERTY = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def pair(http: httpx.Client, token: str) -> tuple[Any, Any]:
    return journey(http, token=token), journey(http, persona_index=1, token=token)


def test_valid_amounts_move_exactly_that_much(http: httpx.Client, pair: tuple[Any, Any]) -> None:
    a, b = pair
    http.post(f"/_sim/accounts/{a.account_id}/fund", json={"amount": money("99999.00")})
    counter = iter(range(10_000))

    @PROPERTY
    @given(value=st.from_regex(r"\A(0|[1-9][0-9]{0,2})(\.[0-9]{1,2})?\Z"))
    def run(value: str) -> None:
        before_a = Decimal(balance(http, a.account_id))
        before_b = Decimal(balance(http, b.account_id))
        resp = call(
            http,
            "POST",
            "/p2p/transfers",
            token=a.token,
            session=a.person_session,
            idem=f"m-{next(counter)}",
            json_body={
                "from_account_id": a.account_id,
                "to_person_id": b.person_id,
                "amount": money(value),
            },
        )
        if Decimal(value) == 0:
            assert_problem(resp, 422, "invalid-amount")
            return
        assert resp.status_code == 201, (value, resp.text)
        shown = resp.json()["amount"]["value"]
        assert Decimal(shown) == Decimal(value), "never rounded"
        assert len(shown.split(".")[1]) == 2, "two decimals on output"
        assert Decimal(balance(http, a.account_id)) == before_a - Decimal(value)
        assert Decimal(balance(http, b.account_id)) == before_b + Decimal(value)

    run()


def test_strings_outside_the_pattern_are_invalid_amount(http: httpx.Client, pair: tuple[Any, Any]) -> None:
    import re

    a, b = pair
    counter = iter(range(10_000))

    @PROPERTY
    @given(value=st.text(max_size=8).filter(lambda v: re.match(PATTERN, v) is None))
    def run(value: str) -> None:
        resp = call(
            http,
            "POST",
            "/p2p/transfers",
            token=a.token,
            session=a.person_session,
            idem=f"x-{next(counter)}",
            json_body={
                "from_account_id": a.account_id,
                "to_person_id": b.person_id,
                "amount": money(value),
            },
        )
        assert_problem(resp, 422, "invalid-amount", not_echo=())
        assert balance(http, a.account_id) == "500.00"

    run()
