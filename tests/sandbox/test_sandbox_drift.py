"""Contract drift against a stand-in sandbox that drifts: each drift named (operation, field or
header, expected, got), no value of an answer in the rows, nothing raised unless asked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import kit
import kit.notebook
from kit import register
from kit.errors import ApiError, ContractDrift
from kit.lab.journeys import onboard
from kit.notebook import text_line
from tests.sandbox.conftest import point_at
from tests.sandbox.proxy import OTHER_VERSION, DriftingProxy, Rule
from tests.support.launcher import Served

VERSION = str(register.spec()["version"])
#: The four drifts of the stand-in: a type, a required field, the version, an undocumented status.
RULES = [
    Rule("GET", r"/cards/[^/]+", retype="last4"),
    Rule("POST", r"/accounts", drop="product"),
    Rule("GET", r"/webhooks/jwks", version=OTHER_VERSION),
    Rule("POST", r"/accounts/[^/]+/events", status=200),
]


@pytest.fixture
def drifting(
    sandbox: Served, fixtures_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[DriftingProxy]:
    with DriftingProxy(sandbox.base_url, RULES) as proxy:
        point_at(monkeypatch, proxy.base_url, fixtures_path)
        yield proxy


def _journey(api: kit.Client) -> dict[str, str]:
    done = onboard(api, persona="persona-03", expiration="sliding")  # a sandbox publishes three
    card = api.cards.create(done.account_id, type="temporary")
    fetched = api.cards.get(card.card_id)
    api.events.send(done.account_id, "password.changed")
    api.webhooks.jwks()
    return {"last4": str(fetched.last4), "account_id": done.account_id}


def test_each_drift_is_named_with_operation_field_expected_and_got(drifting: DriftingProxy) -> None:
    before = len(kit.notebook.findings())
    with kit.notebook.connect("sandbox") as api:
        seen = _journey(api)
        rows = api.drift
    named = {(r.operation, r.field, r.expected, r.got, r.kind, r.basis) for r in rows.itertuples()}
    assert named == {
        ("GET /cards/{card_id}", "body.last4", "string", "integer", "body", "A35"),
        ("POST /accounts", "body.product", "present (required)", "missing", "body", "A10"),
        ("GET /webhooks/jwks", "header svc-api-version", VERSION, OTHER_VERSION, "version", "version.1"),
        (
            "POST /accounts/{account_id}/events",
            "status",
            "one of 202, 400, 401, 403, 404, 409, 413, 415, 422",
            "200",
            "status",
            "A17",
        ),
    }
    assert rows["request_id"].str.startswith("req_").all()
    text = rows.to_string()
    assert seen["last4"] not in text and seen["account_id"] not in text  # no value of an answer
    assert len(kit.notebook.findings()) - before == len(rows)  # the companion saw them through its hook


def test_drift_raises_only_when_asked(drifting: DriftingProxy) -> None:
    with kit.connect("sandbox", drift="raise") as api:
        with pytest.raises(ContractDrift) as caught:
            api.webhooks.jwks()
        assert "GET /webhooks/jwks: header svc-api-version" in str(caught.value)
    with kit.connect("sandbox", drift="off") as api:
        api.webhooks.jwks()
        assert api.drift.empty


def test_the_sandbox_itself_keeps_the_contract(connect: object) -> None:
    with kit.connect("sandbox") as api:
        _journey(api)
        assert api.drift.empty, api.drift.to_string()


def test_a_departure_from_the_seed_is_drift_and_one_from_a_choice_differs(
    sandbox: Served, fixtures_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The basis of each row comes from kit._contract's table: an endpoint the seed names
    answering 404 is drift (its statement); a header, a status or a field the seed does not show
    differs from the register entry that chose it."""
    rules = [
        Rule("GET", r"/sessions/user_session_initialization_data", status=404),  # seed: endpoint.4
        Rule("GET", r"/webhooks/jwks", status=404),  # a path the seed does not show: A21 (an error)
        Rule("GET", r"/cards/[^/]+", drop="created_at"),  # a field the seed does not show: A35
    ]
    with DriftingProxy(sandbox.base_url, rules) as proxy:
        point_at(monkeypatch, proxy.base_url, fixtures_path)
        with kit.notebook.connect("sandbox") as api:
            with pytest.raises(ApiError):
                api.sessions.init_data()
            with pytest.raises(ApiError):
                api.webhooks.jwks()
            rows = list(api.drift.itertuples())
    found = {(r.operation, r.field, r.basis) for r in rows}
    assert ("GET /sessions/user_session_initialization_data", "status", "endpoint.4") in found
    assert ("GET /webhooks/jwks", "status", "A21") in found
    seed = [r for r in rows if not r.basis.startswith("A")]
    assert [(r.operation, r.basis) for r in seed] == [
        ("GET /sessions/user_session_initialization_data", "endpoint.4")
    ]
    lines = [text_line(d) for d in kit.notebook.findings()[-len(rows) :]]
    assert any(
        line.startswith("contract drift: GET /sessions/user_session_initialization_data") for line in lines
    )
    assert any(line.startswith("≠ differs from A21 (contract): GET /webhooks/jwks") for line in lines)


def test_a_card_without_created_at_is_a_difference_and_the_model_keeps_it_absent(
    sandbox: Served, fixtures_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with DriftingProxy(sandbox.base_url, [Rule("GET", r"/cards/[^/]+", drop="created_at")]) as proxy:
        point_at(monkeypatch, proxy.base_url, fixtures_path)
        with kit.notebook.connect("sandbox") as api:
            done = onboard(api, persona="persona-02", expiration="sliding")
            card = api.cards.get(api.cards.create(done.account_id, type="virtual").card_id)
            rows = list(api.drift.itertuples())
    assert card.created_at is None
    assert "<td style='text-align:left'>-</td>" in card._repr_html_()
    assert [(r.field, r.basis) for r in rows] == [("body.created_at", "A35")]
