"""The kit against a server that spells the wire its own way: ``kit serve --no-control --choices
data/choices/camel.toml`` (other paths, camelCase names, other header names, EdDSA webhook
signatures, generic codes, the form-post client authentication). With the same file,
``kit.connect("sandbox", choices=FILE)`` speaks it; without it, the first call the spec does not
show a path for fails and says which register key to re-choose."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import kit
from kit import errors, register
from kit.lab.journeys import onboard
from kit.webhooks import verify
from tests.sandbox.conftest import point_at
from tests.support.launcher import Served, serve_process

CAMEL = register.data_dir() / "choices" / "camel.toml"


@pytest.fixture(scope="module")
def camel_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    fixtures = tmp_path_factory.mktemp("camel") / "fixtures.toml"
    with serve_process(
        "--no-control", "--choices", str(CAMEL), "--sandbox-fixtures", str(fixtures)
    ) as served:
        yield served, fixtures


@pytest.fixture
def pointed(camel_sandbox: tuple[Served, Path], monkeypatch: pytest.MonkeyPatch) -> Served:
    served, fixtures = camel_sandbox
    point_at(monkeypatch, served.base_url, fixtures)
    return served


def test_the_whole_journey_in_the_second_dialect(pointed: Served) -> None:
    with (
        kit.connect("sandbox", choices=CAMEL, sleep=lambda _: None, record=True) as a,
        kit.connect("sandbox", choices=CAMEL, sleep=lambda _: None) as b,
    ):
        done, other = onboard(a, persona=0), onboard(b, persona=1)
        assert done.status == other.status == "established"
        a.webhooks.listen()
        card = a.cards.create(done.account_id, type="temporary")
        assert a.cards.close(card.card_id, reason="lost").status == "closed"
        assert a.cards.get(card.card_id).close_reason == "lost"
        sent = a.p2p.transfer(
            from_account_id=done.account_id, to_person_id=str(other.person_id), amount="2.50"
        )
        assert sent.viewer_role == "sender" and b.p2p.get(sent.transfer_id).viewer_role == "receiver"
        hook = a.webhooks.wait_for("card.closed", timeout=10)
        assert hook.data["card_id"] == card.card_id and hook.kid and hook.kid.startswith("sig-eddsa")
        with pytest.raises(errors.ApiError) as generic:
            a.cards.get("card_missing")
        # one code of theirs for several of ours (A64): the class they share, the codes named
        assert type(generic.value) is errors.ApiError and generic.value.code == "not-found"
        assert "card-not-found, document-request-not-found, endpoint-removed" in str(generic.value)
        assert a.drift.empty, a.drift
        paths = set(a.history["path"])
        assert f"/v2/payment-cards/{card.card_id}" in paths and f"/cards/{card.card_id}/close" in paths
        wire = str(a.wire(path="/v2/transfers", method="POST"))
        assert '"fromAccountId"' in wire and "x-partner-authorization: Token <partner-token>" in wire
        created = str(a.wire(path="/sessions", method="POST", where=lambda x: "ANONYMOUS" in str(x)))
        assert '"token": "<session-token>"' in created  # the dialect's name of the session token
        delivery = str(a.wire(kind="delivery"))
        assert "x-webhook-signature: <JWS alg=EdDSA" in delivery and '"cardId"' in delivery


def test_without_the_dialect_file_the_error_names_the_path_key(pointed: Served, tmp_path: Path) -> None:
    with kit.connect("sandbox", sleep=lambda _: None) as ours, pytest.raises(errors.InvalidClient):
        ours.token()  # the simulator's spelling: HTTP Basic, which this server refuses (A01)
    # The same file without its paths: everything but where the operations are
    text = CAMEL.read_text(encoding="utf-8")
    half = tmp_path / "half.toml"
    half.write_text(text.split("[A67.paths]", 1)[0] + "[A68]" + text.split("[A68]", 1)[1], encoding="utf-8")
    with kit.connect("sandbox", choices=half, sleep=lambda _: None) as api:
        api.sessions.create("anonymous")
        with pytest.raises(errors.ApiError) as missing:
            api.accounts.create()
    error = missing.value
    assert error.status == 404
    assert "POST /accounts is A67 paths.create_account" in str(error) and "kit choices template" in str(error)


def test_verify_takes_the_dialect_file(pointed: Served) -> None:
    with kit.connect("sandbox", choices=CAMEL, sleep=lambda _: None) as api:
        jwks = api.webhooks.jwks()
    assert jwks["keys"][0]["alg"] == "EdDSA"
    with pytest.raises(errors.SignatureMissing, match="X-Webhook-Signature"):
        verify(b"{}", {"svc-webhook-signature": "x..y"}, jwks, seen=set(), choices=CAMEL)
    eddsa = "eyJhbGciOiJFZERTQSJ9..c2ln"  # {"alg": "EdDSA"}: refused where ES256 is expected
    with pytest.raises(errors.SignatureInvalid, match="only ES256"):
        verify(b"{}", {"svc-webhook-signature": eddsa}, {"keys": []}, seen=set())


def test_without_its_field_names_a_missing_field_names_a68(pointed: Served, tmp_path: Path) -> None:
    no_names = tmp_path / "no-names.toml"
    snake = CAMEL.read_text(encoding="utf-8").replace('field_case = "camel"', 'field_case = "snake"')
    no_names.write_text(snake, encoding="utf-8")  # the renames kept, the case not
    with kit.connect("sandbox", choices=no_names, sleep=lambda _: None) as api:
        api.sessions.create("anonymous")
        account = api.accounts.create()
        assert account.account_id is None  # the answer says accountId: the kit reads account_id
        rows = api.drift[api.drift["field"] == "body.account_id"]
    assert len(rows) and set(rows["basis"]) == {"A68"}, api.drift
    assert "this answer has accountId: field names are A68's" in rows["expected"].iloc[0]
