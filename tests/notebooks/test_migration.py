"""``kit regress --versions``: the wires compared, each difference attributed to a change of 1.2.0
by its record in data/spec.toml (kit.regress.migration), and the report's first line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from kit import _choices
from kit._dialect import Dialect
from kit.regress import migration
from tests.support.recorded import recorded_call

ROOT = Path(__file__).resolve().parents[2]


def call(method: str, path: str, status: int, code: str | None = None, **extra: object) -> dict:
    """A recorded call, with the names it sent (none unless given)."""
    return recorded_call(method, path, status, code, **{"sent": [], **extra})


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
    assert by_where[("calls", "POST /oauth/accesstoken", "1")] == 1
    assert by_where[("calls", "POST /authorization/server_api/access_tokens", "0")] == 1
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
    named = "A16, A17, A18, A27, A29, A35, A65, A66"
    assert first == f"{len(diffs)} differences, 1 unexplained; {chosen} name a register entry ({named})"
    text = (tmp_path / "migration.md").read_text(encoding="utf-8")
    assert text == migration.report_markdown(["1.1.0", "1.2.0-20221215"], {"12_x.ipynb": diffs})
    assert text.splitlines()[0] == first
    by_kind = text.split("\n\n")[1]
    assert (
        by_kind
        == migration.breakdown(diffs)
        == (
            "By kind: 7 answers to the same call that differ (5 in status or code, 1 in a header, "
            "1 in a body field), 2 call counts (a call made under one version only) and 3 webhook "
            "event types."
        )
    ), "the second line adds up to the first: 7 + 2 + 3 = 12 (the first names the entries, once)"
    short = migration.report_markdown(["1.1.0", "1.2.0-20221215"], {"12_x.ipynb": diffs}, preamble=False)
    preamble = text.split("\n\n")[2]  # how to read it: a page showing it says so itself
    assert short.startswith(f"{first}\n\n{by_kind}\n\n### Change 1: ") and preamble not in short
    assert short.removeprefix(f"{first}\n\n{by_kind}\n\n") in text and "Changes seen" not in short
    assert "- change 7: POST /p2p/transfers: header svc-p2p-role: absent → sender [1.2.0: A18]" in text
    events = "- change 4: POST /accounts/{id}/events: answer 202 → 422 unknown-event-type"
    assert f"{events} [1.1.0: A27; 1.2.0: A17]" in text
    assert "- change 1: POST /oauth/accesstoken: calls 0 → 1\n" in text  # the spec's words alone
    assert "- unexplained: GET /cards/{id}: field absent → nickname" in text
    # each difference reads "change K: …" (or "unexplained: …"), whatever heading it sits under
    bullets = [line for line in text.splitlines() if line.startswith("- ") and line != "- no difference"]
    assert len(bullets) == len(diffs)
    assert all(re.match(r"- (change [1-9]|unexplained): ", line) for line in bullets), bullets
    quoted = "### Change 5: “POST /accounts/{account_id}/savings/close removed.”"
    assert text.index("### Change 1: “Added POST /oauth/accesstoken;") < text.index(quoted)
    assert text.index(quoted) < text.index("### Unexplained")
    assert "made only" not in text and "called → absent" not in text
    data = json.loads((tmp_path / "migration.json").read_text(encoding="utf-8"))
    assert data["summary"] == first and len(data["notebooks"]["12_x.ipynb"]) == len(diffs)
    assert data["by_kind"] == by_kind
    counts = (data["spec_words_only"], data["chosen"], data["unexplained"])
    assert counts == (len(diffs) - 1 - chosen, chosen, 1)


def test_a_page_quoting_the_spec_gets_each_change_as_a_quote_citing_its_statement() -> None:
    """``migration.md`` keeps each change in its heading; a notebook (``cite=``, the contract's
    address from it) quotes it as it quotes the spec: a blockquote ending "— the spec (id)"."""
    diffs = migration.compare(OLD, NEW)
    cited = migration.report_markdown(
        ["1.1.0", "1.2.0-20221215"], {"12_x.ipynb": diffs}, preamble=False, cite="../docs/contract.md"
    )
    assert "\n### Change 5\n\n> POST /accounts/{account_id}/savings/close removed.\n" in cited
    assert "> — the spec ([change.5](../docs/contract.md#change.5))\n\n- change 5: " in cited
    assert "### Change 5: " not in cited and cited.count("> — the spec (") == 8  # changes 1-8 seen
    plain = migration.report_markdown(["1.1.0", "1.2.0-20221215"], {"12_x.ipynb": diffs}, preamble=False)
    link = migration.compare(
        {"calls": [call("POST", "/authorization/server_api/access_tokens", 200)]},
        {
            "calls": [
                call(
                    "POST",
                    "/authorization/server_api/access_tokens",
                    200,
                    headers={"link": '</oauth/accesstoken>; rel="successor-version"'},
                )
            ]
        },
    )
    shown = migration.report_markdown(["1.1.0", "1.2.0-20221215"], {"x": link}, cite="../docs/contract.md")
    assert 'header link: absent → \\</oauth/accesstoken>; rel="successor-version"' in shown, "not a tag"
    assert [line for line in cited.splitlines() if line.startswith("- ")] == [
        line for line in plain.splitlines() if line.startswith("- ")
    ], "the same lines, only the headings differ"


def test_each_side_names_the_register_entry_that_gives_it_where_the_spec_does_not() -> None:
    """The spec never shows 1.1.0: its answers are A27's (the kit's 1.1.0), or an entry about
    1.1.0 that covers them (A65's savings close, A66's Refer-a-Friend path). 1.2.0's answers the
    spec does not word are their entries' (A29's 404, A18's header, A03's Deprecation). What the
    change list names on both sides (an endpoint replaced, an event renamed or added) is the spec's."""
    sides = {(d.kind, d.where, d.after): (d.before_by, d.after_by) for d in migration.compare(OLD, NEW)}
    assert sides[("code", "POST /accounts/{id}/events", "422 unknown-event-type")] == ("A27", "A17")
    assert sides[("code", "POST /cards/{id}/close", "200")] == ("A27", "A16")  # 422 unknown-field before
    assert sides[("code", "POST /accounts/{id}/savings/close", "404 endpoint-removed")] == ("A65", "A29")
    assert sides[("code", "GET /accounts/{id}/referral_code", "404 endpoint-removed")] == ("A66", "A29")
    assert sides[("calls", "POST /oauth/accesstoken", "1")] == (None, None)  # change 1: added, replacing
    assert sides[("event type", "webhook", "card.closed")] == (None, None)
    assert sides[("header", "POST /p2p/transfers", "svc-p2p-role: sender")] == (None, "A18")
    assert sides[("field", "GET /cards/{id}", "nickname")] == (None, None)
    legacy = migration.compare(
        {
            "calls": [call("POST", "/authorization/server_api/access_tokens", 200)] * 2
            + [call("POST", "/cards/{id}/close", 200)] * 2
        },
        {
            "calls": [
                call(
                    "POST",
                    "/authorization/server_api/access_tokens",
                    200,
                    headers={"deprecation": "@1671062400"},
                ),
                call("POST", "/cards/{id}/close", 200),
            ]
        },
    )
    assert [(d.kind, d.change, d.before_by, d.after_by) for d in legacy] == [
        ("header", 1, None, "A03"),  # the Deprecation header: A03's
        ("calls", 1, None, None),  # 2 → 1: the client takes its token at /oauth/accesstoken (the spec)
        ("calls", 2, "A27", None),  # 2 → 1: the no-reason fallback after 1.1.0's refusal (A27)
    ]
    # close_reason in a card answer: A35's card representation gives it (A16 names it too, for
    # the close's answer: the entry that gives the answer the field is in comes first)
    close_reason = [
        migration.compare(
            {"calls": [call(method, path, status, fields=["card_id"])]},
            {"calls": [call(method, path, status, fields=["card_id", "close_reason"])]},
        )
        for method, path, status in (
            ("GET", "/cards/{id}", 200),
            ("POST", "/accounts/{id}/cards", 201),
            ("POST", "/cards/{id}/close", 200),
        )
    ]
    assert [[(d.change, d.before_by, d.after_by) for d in found] for found in close_reason] == [
        [(2, "A27", "A35")],
        [(2, "A27", "A35")],
        [(2, "A27", "A16")],
    ]


def test_the_same_wire_has_no_difference_and_ids_are_normalised() -> None:
    assert migration.compare(OLD, OLD) == []
    assert migration.normal_path("/accounts/acc_5ea792c644255bcf6a87/cards") == "/accounts/{id}/cards"


def test_the_migration_notebook_declares_both_versions() -> None:
    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    both = [p.name for p in notebooks if migration.runs_on_both(p)]
    assert migration.MIGRATION_NOTEBOOK in both
    assert "10_whats_new_in_1_2_0.ipynb" not in both


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


def _camel_answers(request: httpx.Request) -> httpx.Response:
    """A server in the second dialect (data/choices/camel.toml): its paths, names and headers."""
    if request.url.path == "/v2/transfers":
        body = {"transferId": "p2p_0a1b2c", "viewerRole": "sender"}
        return httpx.Response(201, json=body, headers={"X-Transfer-Role": "sender", "X-Request-Id": "req_1"})
    if request.url.path.endswith("/close"):
        return httpx.Response(200, json={"cardId": "card_0a1b2c", "closeReason": "lost", "status": "closed"})
    return httpx.Response(404, json={"code": "not-found"})  # generic: it stands for six of the kit's codes


def _rows(dialect: Dialect | None) -> list[dict]:
    rows: list[dict] = []
    hooks = {"response": [migration.response_hook(rows, dialect=dialect)]}
    transport = httpx.MockTransport(_camel_answers)
    with httpx.Client(base_url="http://sandbox.test", transport=transport, event_hooks=hooks) as raw:
        raw.post("/v2/transfers", json={"fromAccountId": "acc_0a1b2c", "amount": {"value": "5.00"}})
        raw.post("/cards/card_0a1b2c/close", json={"reason": "lost"})
        raw.get("/v2/payment-cards/card_0a1b2c")
    return rows


def test_a_dialects_answers_are_recorded_in_the_kits_spelling_and_attributed() -> None:
    camel = Dialect.of(_choices.load(ROOT / "data" / "choices" / "camel.toml"))
    transfer, close, missing = _rows(camel)
    assert (transfer["path"], transfer["headers"]) == ("/p2p/transfers", {"svc-p2p-role": "sender"})
    assert transfer["fields"] == ["transfer_id", "viewer_role"]
    assert transfer["sent"] == ["amount", "from_account_id"]
    assert close["fields"] == ["card_id", "close_reason", "status"]
    assert (missing["path"], missing["code"]) == ("/cards/{id}", "not-found")  # generic: stays as it came
    assert _rows(None)[0]["path"] == "/v2/transfers"  # without the dialect: the wire's own spelling

    older = [{**transfer, "headers": {}}, {**close, "fields": ["card_id", "status"]}]
    before = {"version": "1.1.0", "calls": older}
    after = {"version": "1.2.0-20221215", "calls": [transfer, close]}
    owners = {(d.kind, d.where): d.change for d in migration.compare(before, after)}
    assert owners == {("header", "POST /p2p/transfers"): 7, ("field", "POST /cards/{id}/close"): 2}
