"""Money (register A19) on input: ``^\\d+(\\.\\d{1,2})?$`` (ASCII digits, never rounded), two decimals out."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from hypothesis import given
from hypothesis import strategies as st

from tests.sim.helpers.control import balance, fund
from tests.sim.helpers.journeys import p2p_transfer
from tests.sim.helpers.properties import PROPERTY
from tests.sim.helpers.wire import assert_problem

PATTERN = r"\A[0-9]+(\.[0-9]{1,2})?\Z"


def test_valid_amounts_move_exactly_that_much(http: httpx.Client, pair: tuple[Any, Any]) -> None:
    a, b = pair
    fund(http, a.account_id, "99999.00")
    counter = iter(range(10_000))

    @PROPERTY
    @given(value=st.from_regex(r"\A(0|[1-9][0-9]{0,2})(\.[0-9]{1,2})?\Z"))
    def run(value: str) -> None:
        before_a = Decimal(balance(http, a.account_id))
        before_b = Decimal(balance(http, b.account_id))
        resp = p2p_transfer(http, a, b.person_id, value, idem=f"m-{next(counter)}")
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
        resp = p2p_transfer(http, a, b.person_id, value, idem=f"x-{next(counter)}")
        assert_problem(resp, 422, "invalid-amount", not_echo=())
        assert balance(http, a.account_id) == "500.00"

    run()
