"""Contract drift against a stand-in sandbox that drifts: each drift named (operation, field or
header, expected, got), no value of an answer in the rows, nothing raised unless asked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import kit
import kit.notebook
from kit import register
from kit.errors import ContractDrift
from kit.lab.journeys import onboard
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
    done = onboard(api, persona="persona-05", expiration="sliding")
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
    named = {(r.operation, r.field, r.expected, r.got, r.kind) for r in rows.itertuples()}
    assert named == {
        ("GET /cards/{card_id}", "body.last4", "string", "integer", "body"),
        ("POST /accounts", "body.product", "present (required)", "missing", "body"),
        ("GET /webhooks/jwks", "header svc-api-version", VERSION, OTHER_VERSION, "version"),
        (
            "POST /accounts/{account_id}/events",
            "status",
            "one of 202, 400, 401, 403, 404, 409, 413, 415, 422",
            "200",
            "status",
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
