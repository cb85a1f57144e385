"""Bad input never yields a 5xx and never changes state (A21), over generated bodies."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.sim.helpers.contract import PROBLEM_CT
from tests.sim.helpers.control import snapshot
from tests.sim.helpers.journeys import journey
from tests.sim.helpers.properties import PROPERTY
from tests.sim.helpers.resources import create_card
from tests.sim.helpers.wire import post_raw

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)
FIELDS = [
    "type",
    "reason",
    "event_type",
    "occurred_at",
    "details",
    "url",
    "events",
    "product",
    "amount",
    "memo",
    "from_account_id",
    "to_person_id",
    "session_type",
    "expiration_strategy",
    "encrypted_data",
]
bodies = st.one_of(
    json_values,
    st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=4),
)


@pytest.fixture
def world(http: httpx.Client, token: str) -> dict[str, Any]:
    j = journey(http, token=token)
    card = create_card(http, token, j.account_id)
    return {"j": j, "card": card}


def _check(resp: httpx.Response) -> None:
    assert resp.status_code < 500, resp.text
    if resp.status_code >= 400:
        assert resp.headers["content-type"].startswith(PROBLEM_CT), resp.text
        body = resp.json()
        assert body["type"] == "urn:partner-api-kit:problem:" + body["code"]


@pytest.mark.parametrize("route", ["close", "events", "cards", "subscriptions", "p2p", "sessions"])
def test_generated_bodies_never_5xx(
    http: httpx.Client, token: str, world: dict[str, Any], route: str
) -> None:
    j, card = world["j"], world["card"]
    path, session = {
        "close": (f"/cards/{card['card_id']}/close", None),
        "events": (f"/accounts/{j.account_id}/events", None),
        "cards": (f"/accounts/{j.account_id}/cards", None),
        "subscriptions": ("/webhooks/subscriptions", None),
        "p2p": ("/p2p/transfers", j.person_session),
        "sessions": ("/sessions", None),
    }[route]
    card_path = f"/cards/{card['card_id']}"
    counter = iter(range(10_000))

    @PROPERTY
    @given(body=bodies)
    def run(body: Any) -> None:
        before = snapshot(http, token, (card_path,))
        raw = json.dumps(body).encode()
        resp = post_raw(http, path, raw, token=token, session=session, idem=f"fz-{next(counter)}")
        _check(resp)
        if resp.status_code >= 400:
            assert snapshot(http, token, (card_path,)) == before

    run()
