"""``kit regress --versions``: the wires compared, each difference attributed to a change of 1.2.0
by its record in data/spec.toml (kit.regress.migration), and the report's first line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kit.regress import migration

ROOT = Path(__file__).resolve().parents[2]


def call(method: str, path: str, status: int, code: str | None = None, **extra: object) -> dict:
    return {
        "method": method,
        "path": path,
        "status": status,
        "code": code,
        "headers": {},
        "fields": [],
        "sent": [],
        **extra,
    }


OLD = {
    "version": "1.1.0",
    "calls": [
        call("POST", "/authorization/server_api/access_tokens", 200),
        call("POST", "/accounts/{id}/cards", 422, "unknown-card-type", sent=["temporary", "type"]),
        call("POST", "/cards/{id}/close", 422, "unknown-field", sent=["lost", "reason"]),
        call("POST", "/accounts/{id}/events", 202),
        call("POST", "/accounts/{id}/savings/close", 200),
        call("GET", "/accounts/{id}/referral_code", 200),
        call("POST", "/p2p/transfers", 201, fields=["amount"]),
        call("GET", "/cards/{id}", 200, fields=["card_id"]),
    ],
    "webhooks": [{"type": "person.document_request.created", "deprecation": None}],
}
NEW = {
    "version": "1.2.0-20221215",
    "calls": [
        call("POST", "/oauth/accesstoken", 200),
        call("POST", "/accounts/{id}/cards", 201, sent=["temporary", "type"]),
        call("POST", "/cards/{id}/close", 200, sent=["lost", "reason"]),
        call("POST", "/accounts/{id}/events", 422, "unknown-event-type"),
        call("POST", "/accounts/{id}/savings/close", 404, "endpoint-removed"),
        call("GET", "/accounts/{id}/referral_code", 404, "endpoint-removed"),
        call("POST", "/p2p/transfers", 201, fields=["amount"], headers={"svc-p2p-role": "sender"}),
        call("GET", "/cards/{id}", 200, fields=["card_id", "nickname"]),  # no change adds this field
    ],
    "webhooks": [
        {"type": "document_request.created", "deprecation": None},
        {"type": "card.closed", "deprecation": None},
    ],
}


def test_each_difference_is_attributed_to_the_change_whose_record_touches_it() -> None:
    diffs = migration.compare(OLD, NEW)
    by_where = {(d.kind, d.where, d.after): d.change for d in diffs}
    assert by_where[("path", "POST /oauth/accesstoken", "called")] == 1
    assert by_where[("path", "POST /authorization/server_api/access_tokens", "absent")] == 1
    assert by_where[("code", "POST /cards/{id}/close", "200")] == 2  # the field it sent: reason
    assert by_where[("code", "POST /accounts/{id}/cards", "201")] == 3  # the card type it sent
    assert by_where[("code", "POST /accounts/{id}/events", "422 unknown-event-type")] == 4
    assert by_where[("code", "POST /accounts/{id}/savings/close", "404 endpoint-removed")] == 5
    assert by_where[("event type", "webhook", "card.closed")] == 6
    assert by_where[("header", "POST /p2p/transfers", "svc-p2p-role: sender")] == 7  # A18's header
    assert by_where[("code", "GET /accounts/{id}/referral_code", "404 endpoint-removed")] == 8  # A66's paths
    assert by_where[("field", "GET /cards/{id}", "nickname")] is None  # nothing explains it


def test_the_report_first_line_counts_differences_and_unexplained(tmp_path: Path) -> None:
    diffs = migration.compare(OLD, NEW)
    first = migration.write_report(tmp_path, ["1.1.0", "1.2.0-20221215"], {"12_x.ipynb": diffs})
    chosen = sum(d.chosen for d in diffs)
    chose = f"{chosen} of the explained are the register's choice (A27, A66)"
    assert first == f"{len(diffs)} differences, 1 unexplained; {chose}"
    text = (tmp_path / "migration.md").read_text(encoding="utf-8")
    assert text.splitlines()[0] == first
    role = "header POST /p2p/transfers: svc-p2p-role: absent → svc-p2p-role: sender"
    assert f"- change 7: {role}" in text
    assert (
        "- change 4, simulated 1.1.0 (A27): code POST /accounts/{id}/events: 202 → 422 unknown-event-type"
        in text
    )
    assert "- unexplained: field GET /cards/{id}: absent → nickname" in text
    resting = "### Resting on the simulated version before (the register's reconstruction)"
    assert text.index("### Explained by the spec") < text.index(resting) < text.index("### Unexplained")
    assert "called → absent" not in text and "absent → called" not in text
    data = json.loads((tmp_path / "migration.json").read_text(encoding="utf-8"))
    assert data["summary"] == first and len(data["notebooks"]["12_x.ipynb"]) == len(diffs)
    counts = (data["explained_by_seed"], data["chosen"], data["unexplained"])
    assert counts == (len(diffs) - 1 - chosen, chosen, 1)


def test_what_the_seed_does_not_say_of_1_1_0_is_counted_as_the_registers_choice() -> None:
    """The seed says the event types were "specified" (not what came before), that a reason and a
    card type were added (not what 1.1.0 answered when sent them), and shows no Refer-a-Friend
    path: those differences are chosen; an endpoint added or removed, an event renamed or added,
    a header added are the seed's."""
    basis = {(d.kind, d.where, d.after): d.basis for d in migration.compare(OLD, NEW)}
    assert basis[("code", "POST /accounts/{id}/events", "422 unknown-event-type")] == "A27"  # change 4
    assert basis[("code", "POST /cards/{id}/close", "200")] == "A27"  # change 2: 422 unknown-field before
    assert basis[("code", "POST /accounts/{id}/cards", "201")] == "A27"  # change 3
    assert basis[("code", "GET /accounts/{id}/referral_code", "404 endpoint-removed")] == "A66"
    assert basis[("path", "POST /oauth/accesstoken", "called")] == "seed"  # change 1: added
    assert basis[("code", "POST /accounts/{id}/savings/close", "404 endpoint-removed")] == "seed"
    assert basis[("event type", "webhook", "card.closed")] == "seed"
    assert basis[("header", "POST /p2p/transfers", "svc-p2p-role: sender")] == "seed"
    assert basis[("field", "GET /cards/{id}", "nickname")] is None
    close_reason = migration.compare(
        {"calls": [call("GET", "/cards/{id}", 200, fields=["card_id"])]},
        {"calls": [call("GET", "/cards/{id}", 200, fields=["card_id", "close_reason"])]},
    )
    assert [(d.change, d.basis) for d in close_reason] == [(2, "A27")]  # 1.1.0's card: no reason


def test_the_same_wire_has_no_difference_and_ids_are_normalised() -> None:
    assert migration.compare(OLD, OLD) == []
    assert migration.normal_path("/accounts/acc_5ea792c644255bcf6a87/cards") == "/accounts/{id}/cards"


def test_the_migration_notebook_declares_both_versions() -> None:
    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    both = [p.name for p in notebooks if migration.runs_on_both(p)]
    assert migration.MIGRATION_NOTEBOOK in both
    assert "09_whats_new_in_1_2_0.ipynb" not in both


@pytest.mark.slow
def test_kit_regress_versions_writes_the_migration_report(tmp_path: Path) -> None:
    """The fresh run: on the simulator nothing is unexplained and changes 1-7 are each seen."""
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kit",
            "regress",
            "--versions",
            "1.1.0,1.2.0-20221215",
            "--out",
            str(out),
            "--jobs",
            "2",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    first = (out / "migration.md").read_text(encoding="utf-8").splitlines()[0]
    assert re.match(r"^[1-9][0-9]* differences, 0 unexplained; ", first), first
    data = json.loads((out / "migration.json").read_text(encoding="utf-8"))
    seen = {d["change"] for diffs in data["notebooks"].values() for d in diffs}
    assert set(range(1, 8)) <= seen, seen
