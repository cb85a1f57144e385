"""The conformance report's verdict per register entry, from real traffic: a client speaking
HTTP to ``kit serve --no-control --choices camel.toml``, its recorded wire judged against the
dialect it expected (everything confirmed) and against the simulator's own (camel's names and
paths contradict it), the entries nothing spoke to never exercised, and no secret in a row."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import kit
from kit import _choices as choices
from kit import register
from kit._dialect import DEFAULT, Dialect
from kit.errors import ApiError
from kit.lab.journeys import onboard
from kit.notebook.conformity import build
from kit.regress import conformance, exercised, leaks
from tests.sandbox.conftest import CLIENT_SECRET, point_at
from tests.support.launcher import serve_process

CAMEL = register.data_dir() / "choices" / "camel.toml"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[exercised.Call], list[str]]]:
    """A journey's wire against the camel server: its calls, and the secrets the client used."""
    fixtures = tmp_path_factory.mktemp("camel") / "fixtures.toml"
    with (
        serve_process("--no-control", "--choices", str(CAMEL), "--sandbox-fixtures", str(fixtures)) as served,
        pytest.MonkeyPatch.context() as patch,
    ):
        point_at(patch, served.base_url, fixtures)
        with kit.connect("sandbox", choices=CAMEL, sleep=lambda _: None, record=True) as api:
            done = onboard(api, persona=0)
            card = api.cards.create(done.account_id, type="temporary")
            unknown = card.card_id[:-1] + ("0" if card.card_id[-1] != "0" else "1")
            with pytest.raises(ApiError):
                api.cards.get(unknown)  # a 404 problem: a code of A64
            api.cards.close(card.card_id, reason="lost")
            secrets = [v for v, kind in api.wire_log.redactor._known.items() if "token" in kind]
            calls = exercised.calls(api.wire_log.exchanges(), "journey")
    yield calls, [*secrets, CLIENT_SECRET]


def _rows(calls: list[exercised.Call], dialect: Dialect) -> dict[str, exercised.Verdict]:
    return {r.id: r for r in exercised.judge(calls, dialect)}


def test_what_the_server_chose_as_expected_is_confirmed_by_an_exchange(
    recorded: tuple[list[exercised.Call], list[str]],
) -> None:
    calls, _ = recorded
    camel = Dialect.of(choices.load(CAMEL))
    rows = _rows(calls, camel)
    for entry in ("A01", "A02", "A28", "A64", "A67", "A68"):
        assert rows[entry].verdict == "confirmed", rows[entry]
        assert rows[entry].exchange is not None and rows[entry].exchange.status is not None
    a67 = rows["A67"].exchange
    assert a67 is not None and a67.source == "journey" and a67.number >= 1 and a67.har_entry >= 0
    assert rows["A67"].shown.startswith("paths.") and a67.path.startswith("/")
    assert rows["A64"].exchange is not None and rows["A64"].exchange.status == 404
    assert rows["A01"].shown == "client_auth: a token request by post answered 200"
    assert rows["A24"].verdict == "never exercised" and rows["A24"].exchange is None  # no delivery
    assert {r.verdict for r in rows.values()} <= set(exercised.VERDICTS)
    assert list(rows) == [str(a["id"]) for a in register.assumptions()]


def test_what_the_server_chose_otherwise_is_contradicted(
    recorded: tuple[list[exercised.Call], list[str]],
) -> None:
    calls, _ = recorded
    rows = _rows(calls, DEFAULT)  # a run that expected the simulator's own spelling
    assert rows["A68"].verdict == "contradicted" and "camel" not in rows["A68"].shown
    assert rows["A68"].shown.startswith("member ") and "snake case" in rows["A68"].shown
    assert rows["A68"].exchange is not None
    assert rows["A02"].verdict == "never exercised"  # no call carried Authorization: Bearer


def test_a_check_of_the_table_speaks_for_its_entry_without_an_exchange() -> None:
    from kit.notebook.conformity import Seen

    table = build([Seen("A15", "choice", "passed", "05 cell 3 — check 'reasons'")])
    rows = {r.id: r for r in exercised.judge([], DEFAULT, table)}
    assert rows["A15"].verdict == "confirmed" and rows["A15"].check == "05 cell 3 — check 'reasons'"
    assert rows["A15"].exchange is None and rows["A67"].verdict == "never exercised"


def test_the_files_carry_the_rows_and_no_secret(
    recorded: tuple[list[exercised.Call], list[str]], tmp_path: Path
) -> None:
    calls, secrets = recorded
    table = build([])
    md, js = conformance.write(table, tmp_path, calls=calls, dialect=Dialect.of(choices.load(CAMEL)))
    data: dict[str, Any] = json.loads(js.read_text(encoding="utf-8"))
    rows = {r["id"]: r for r in data["verdicts"]}
    assert set(rows["A67"]) == {"id", "topic", "verdict", "shown", "exchange"}
    assert set(rows["A67"]["exchange"]) == {"source", "call", "har_entry", "method", "path", "status"}
    assert rows["A67"]["verdict"] == "confirmed" and rows["A24"]["exchange"] is None
    text = md.read_text(encoding="utf-8")
    assert "## Per entry: what the traffic showed" in text
    assert text.splitlines()[0] == data["summary"]
    for written in (md, js):
        content = written.read_text(encoding="utf-8")
        assert secrets and not [s for s in secrets if s in content]
        assert not leaks.scan_file(written, secrets=secrets)
