"""The kit against a server that chose differently: ``kit serve --no-control --choices
data/choices/other.toml --sandbox-fixtures F`` (UUID ids, no ``svc-assumptions``, no optional
fields, sessions required on cards, other codes, a shorter close-reason list). The client goes
on: a customer onboarded, a card issued and closed, a P2P transfer, nothing crashing on the
fields the server does not send."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import kit
from kit import register
from kit.errors import ApiError
from kit.lab.journeys import onboard
from tests.sandbox.conftest import point_at
from tests.support.launcher import Served, serve_process

OTHER = register.data_dir() / "choices" / "other.toml"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


@pytest.fixture(scope="module")
def other_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    fixtures = tmp_path_factory.mktemp("other") / "fixtures.toml"
    with serve_process(
        "--no-control", "--choices", str(OTHER), "--sandbox-fixtures", str(fixtures)
    ) as served:
        yield served, fixtures


def test_a_customer_a_card_and_a_transfer_on_the_other_choices(
    other_sandbox: tuple[Served, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    served, fixtures = other_sandbox
    point_at(monkeypatch, served.base_url, fixtures)
    with (
        kit.connect("sandbox", sleep=lambda _: None) as sender,
        kit.connect("sandbox", sleep=lambda _: None) as to,
    ):
        done = onboard(sender, persona=0)
        other = onboard(to, persona=1)
        assert done.status == other.status == "established"
        assert UUID.match(done.account_id) and UUID.match(str(done.person_id))

        card = sender.cards.create(done.account_id, type="temporary")
        assert UUID.match(card.card_id) and card.status == "active"
        assert card.created_at is None and card.last4 is None  # not sent: absent, not a crash
        with pytest.raises(ApiError) as refused:
            sender.cards.close(card.card_id, reason="damaged")  # ours, not this server's
        allowed = refused.value.problem.get("allowed")
        assert refused.value.code == "invalid-close-reason" and allowed == [
            "lost",
            "stolen",
            "customer_request",
        ]
        closed = sender.cards.close(card.card_id, reason=allowed[0])
        assert closed.status == "closed" and closed.close_reason == "lost"

        transfer = sender.p2p.transfer(
            from_account_id=done.account_id, to_person_id=str(other.person_id), amount="12.50"
        )
        assert UUID.match(transfer.transfer_id) and transfer.status == "completed"
        assert transfer.created_at is None
        seen = to.p2p.get(transfer.transfer_id)
        assert seen.transfer_id == transfer.transfer_id and seen.viewer_role == "receiver"
