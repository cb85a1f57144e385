"""One representation per resource: a kept record is shown by its ``Representation`` model, whose
fields are both the OpenAPI schema (``data/openapi.json``) and the body read from the record."""

from __future__ import annotations

import json
from dataclasses import fields
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import pytest

from kit.sim import records as state
from kit.sim import representations as models
from kit.sim.models import From, Money, Representation, money

ROOT = Path(__file__).resolve().parents[2]
AT = datetime(2025, 1, 6, 9, 30, tzinfo=UTC)
DEVICE = ("dev-1", "thumb")

#: One record of each kept kind, with every optional field set (a closed card, a completed request).
RECORDS: dict[type[Representation], Any] = {
    models.AccountOut: state.Account("acc_1", "p", "spending", Decimal("7"), AT, DEVICE),
    models.PersonOut: state.Person("per_1", "p", "acc_1", AT, [], {}),
    models.CardOut: state.Card(
        "card_1", "p", "acc_1", "virtual", "0042", "2028-01-31", AT, AT, "closed", "lost", AT
    ),
    models.EventOut: state.InboundEvent("evt_1", "p", "acc_1", "card.swiped", None, AT),
    models.TransferOut: state.Transfer(
        "p2p_1", "p", "acc_1", "acc_2", "per_1", "per_2", Decimal("12.5"), "USD", None, AT
    ),
    models.SubscriptionOut: state.Subscription("sub_1", "p", "http://127.0.0.1:9/hook", ["card.closed"], AT),
    models.DocumentRequestOut: state.DocumentRequest(
        "doc_1", "p", "per_1", "acc_1", "proof_of_address", AT, "completed", AT
    ),
}


def test_every_representation_has_a_record_here() -> None:
    assert set(RECORDS) == {c for c in Representation.__subclasses__() if c.__module__ == models.__name__}


@pytest.mark.parametrize("model", list(RECORDS), ids=lambda m: m.__name__)
def test_the_wire_form_is_the_stored_schema(model: type[Representation]) -> None:
    """The body has the schema's required properties, in its order, and validates against it."""
    schema = json.loads((ROOT / "data" / "openapi.json").read_text(encoding="utf-8"))
    declared = schema["components"]["schemas"][model.__name__]
    body = model.wire(RECORDS[model])
    assert list(body) == declared["required"]
    assert list(body) == [name for name in declared["properties"] if name in declared["required"]]
    model.model_validate(body)  # the types of the schema
    json.dumps(body)  # and nothing a JSON encoder cannot send


def test_times_and_money_are_converted_from_the_record() -> None:
    transfer = models.TransferOut.wire(RECORDS[models.TransferOut])
    assert transfer["amount"] == {"value": "12.50", "currency": "USD"}
    assert transfer["created_at"] == "2025-01-06T09:30:00Z"
    assert "viewer_role" not in transfer  # the read adds it (A18): the record has no role
    doc = models.DocumentRequestOut.wire(RECORDS[models.DocumentRequestOut])
    assert doc["completed_at"] == "2025-01-06T09:30:00Z"
    open_doc = state.DocumentRequest("doc_2", "p", "per_1", "acc_1", "proof_of_address", AT)
    assert models.DocumentRequestOut.wire(open_doc)["completed_at"] is None


def test_no_representation_shows_the_partner_or_internal_fields() -> None:
    for model, record in RECORDS.items():
        kept = {f.name for f in fields(record)}
        assert "partner" in kept and "partner" not in model.wire(record), model.__name__


def test_a_field_the_record_does_not_keep_is_refused_when_declared() -> None:
    with pytest.raises(TypeError, match="Card has no colour"):

        class _Coloured(Representation, record=state.Card):
            card_id: str
            colour: str

    with pytest.raises(TypeError, match="Card has no currency"):

        class _Priced(Representation, record=state.Card):
            created_at: Annotated[Money, From(money, also=("currency",))]
