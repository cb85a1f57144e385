"""``api.export_har(path)``: HAR 1.2 files that validate against the HAR 1.2 JSON schema (the
npm ``har-schema`` package's schemas, in ``har_schema/``), holding every attempt as recorded."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT6

import kit

from .conftest import onboard

SCHEMAS = Path(__file__).resolve().parent / "har_schema"


def har_validator() -> jsonschema.Draft6Validator:
    resources = []
    for path in SCHEMAS.glob("*.json"):
        contents = json.loads(path.read_text(encoding="utf-8"))
        resources.append((path.name, Resource.from_contents(contents, default_specification=DRAFT6)))
    registry: Registry[Any] = Registry().with_resources(resources)
    schema = json.loads((SCHEMAS / "har.json").read_text(encoding="utf-8"))
    return jsonschema.Draft6Validator(
        schema, registry=registry, format_checker=jsonschema.Draft6Validator.FORMAT_CHECKER
    )


def validate_har(path: Path) -> dict[str, Any]:
    """The HAR at ``path``, after checking it against the HAR 1.2 schema."""
    har = json.loads(path.read_text(encoding="utf-8"))
    errors = sorted(har_validator().iter_errors(har), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    return dict(har)


def test_the_schema_check_can_fail(tmp_path: Path) -> None:
    broken = tmp_path / "broken.har"
    broken.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "x"}, "entries": [{}]}}))
    with pytest.raises(AssertionError):
        validate_har(broken)


def test_an_exported_har_validates_and_holds_every_attempt(
    make_client: Callable[..., kit.Client], tmp_path: Path
) -> None:
    api = make_client(record=True)
    customer = onboard(api)
    api.webhooks.listen()
    api.sim.add_fault("POST", "/accounts/{account_id}/cards", status=503, times=1)
    card = api.cards.create(customer.account_id, type="temporary")
    api.cards.close(card.card_id, reason="lost")
    api.webhooks.wait_for("card.closed", timeout=10)

    path = tmp_path / "nested" / "run.har"
    written = api.export_har(path)
    har = validate_har(path)
    log = har["log"]
    assert log["version"] == "1.2"
    assert log["creator"] == {"name": "partner-api-kit", "version": kit.__version__}
    assert api.wire_log is not None
    attempts = [a for e in api.wire_log.exchanges() for a in e.attempts]
    assert written == len(log["entries"]) == len(attempts)
    starts = [e["startedDateTime"] for e in log["entries"]]
    assert starts == sorted(starts)

    cards = [
        e
        for e in log["entries"]
        if e["request"]["url"].endswith("/cards") and e["request"]["method"] == "POST"
    ]
    assert [e["response"]["status"] for e in cards] == [503, 201]
    assert [e["comment"].split("; ")[1] for e in cards] == ["attempt 1 of 2", "attempt 2 of 2"]
    assert cards[0]["request"]["postData"]["mimeType"] == "application/json"
    assert json.loads(cards[1]["response"]["content"]["text"])["card_id"] == card.card_id
    deliveries = [e for e in log["entries"] if e["comment"].startswith("webhook delivery received")]
    assert len(deliveries) >= 1 and all(e["request"]["method"] == "POST" for e in deliveries)

    text = path.read_text(encoding="utf-8")
    partner = api._requestor.auth.token
    assert partner is not None and partner.reveal() not in text
    assert "sim-secret" not in text and "eyJ" not in text


def test_a_flow_step_is_named_in_the_comment(make_client: Callable[..., kit.Client], tmp_path: Path) -> None:
    api = make_client(record=True)
    assert api.wire_log is not None
    with api.wire_log.step("open an anonymous session"):
        api.sessions.create("anonymous", expiration="sliding")
    api.export_har(tmp_path / "steps.har")
    entries = validate_har(tmp_path / "steps.har")["log"]["entries"]
    sessions = [e for e in entries if e["request"]["url"].endswith("/sessions")]
    assert sessions and sessions[0]["comment"].endswith("step: open an anonymous session")
