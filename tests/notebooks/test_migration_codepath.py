"""Notebook 13 shows the partner's code path it runs, and what to change that matches it.

- the partner's code is a story cell of the notebook, written as a partner would (try/except
  where a version refuses, no ``suppress``), and the notebook runs that very function under each
  version; the cell holds the partner's calls only (the recording harness,
  :func:`kit.regress.codepath.walk`, lives in the kit);
- every change the source marks (``# change N``) has a line in the notebook's recap;
- the tables the notebook shows (:func:`kit.regress.codepath.side_by_side`,
  :func:`~kit.regress.codepath.webhooks_side_by_side`) keep exactly what differs: every call
  :func:`kit.regress.migration.compare` finds a difference in, headers and fields included, each
  row named by the step that made the call (the client's own token request apart from the code's
  ``api.legacy_token()``), and one row per webhook type;
- the walk records each call's step from the code path as it runs (and each webhook's: the code's
  close, or the document request the harness opens), and what it met counts in the
  notebook's closing table: the answers of its plain httpx client and the entries the migration
  report names (A29, A66).
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

from kit.notebook import companion, relied
from kit.notebook.tags import CHECKS
from kit.regress import codepath, migration
from kit.regress.codepath import ABSENT, PartnerCode, side_by_side, step_label, webhooks_side_by_side
from tests.support.recorded import recorded_call

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "13_migrating_to_1_2_0.ipynb"


def _cells() -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return cells


def _code_cell(defining: str) -> dict[str, Any]:
    (cell,) = [c for c in _cells() if c["cell_type"] == "code" and defining in "".join(c["source"])]
    return cell


#: The partner's code as the notebook shows it: the one story cell defining it.
SOURCE = "".join(_code_cell("def partner_code(")["source"])


@pytest.fixture(scope="module")
def partner_code(tmp_path_factory: pytest.TempPathFactory) -> PartnerCode:
    """The notebook's ``partner_code``, from a file of that cell's source (the harness reads
    the lines of the code running, as it reads them from the notebook's kernel)."""
    path = tmp_path_factory.mktemp("notebook12") / "partner_code.py"
    path.write_text(SOURCE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("notebook12_partner_code", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    code: PartnerCode = module.partner_code
    return code


def _recap() -> str:
    (recap,) = [
        "".join(c["source"])
        for c in _cells()
        if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## Recap: what to change")
    ]
    return recap


def test_the_notebook_runs_the_partners_code_it_shows() -> None:
    cell = _code_cell("def partner_code(")
    assert CHECKS not in cell["metadata"].get("tags", []), "the partner's code is a story cell"
    walked = "".join(_code_cell("codepath.walk_versions(")["source"])
    assert "code=partner_code" in walked, "the harness runs the function the reader sees"
    assert "getsource" not in "".join("".join(c["source"]) for c in _cells()), "no code read back"


def test_the_code_shown_is_the_partners_calls_only() -> None:
    plumbing = ("record", "response_hook", "warnings", "emit", "connect", "event_hooks", "sim.", "codepath")
    assert not [word for word in plumbing if word in SOURCE], "the recording harness is walk()'s, not shown"
    assert "suppress" not in SOURCE, "a refusal is caught as a partner would: try/except"
    assert len(SOURCE.splitlines()) <= 30, "the partner's code, short"


def test_every_change_the_code_path_marks_has_a_line_in_the_recap() -> None:
    marked = {int(n) for n in re.findall(r"change (\d)", SOURCE)}
    items = [line for line in _recap().splitlines() if line.startswith("- **")]
    heads = [line.split(":**")[0] for line in items]  # "- **Cards (changes 2, 3):**"
    recapped = {int(n) for head in heads for n in re.findall(r"\b(\d)\b", head)}
    assert marked and marked <= recapped, f"changes marked in the code, not in the recap: {marked - recapped}"
    assert recapped == set(range(1, 10)), recapped


def test_side_by_side_keeps_the_calls_whose_answers_differ() -> None:
    calls = [
        recorded_call("POST", "/a", 200),
        recorded_call("POST", "/a", 200),
        recorded_call("GET", "/b", 200),
    ]
    calls.append(recorded_call("GET", "/c", 200))
    before = {"calls": calls, "webhooks": []}
    after = {
        "calls": [
            recorded_call(
                "POST", "/a", 200, headers={"deprecation": "@1", "link": '</x>; rel="successor-version"'}
            ),
            recorded_call("GET", "/b", 404, "endpoint-removed"),
            recorded_call("GET", "/c", 200, fields=["f"]),
        ],
        "webhooks": [],
    }
    table = side_by_side({"1.1.0": before, "1.2.0": after})
    assert table.to_dict("index") == {
        ("", "POST /a"): {"1.1.0": "200", "1.2.0": "200 + deprecation: @1 (1970-01-01) + link"},
        ("2nd time", "POST /a"): {"1.1.0": "200", "1.2.0": ABSENT},
        ("", "GET /b"): {"1.1.0": "200", "1.2.0": "404 endpoint-removed"},
        ("", "GET /c"): {"1.1.0": "200", "1.2.0": "200 + f"},
    }
    differing = {d.where for d in migration.compare(before, after)}
    assert {call for _, call in table.index} == differing, "the table lists every call the report does"
    one = side_by_side({"1.2.0": after})
    assert len(one) == 3, "one version: every call shown"


TOKEN, LEGACY = "POST /authorization/server_api/access_tokens", "api.legacy_token()"


def test_the_rows_say_which_step_made_eachrecorded_call() -> None:
    """1.1.0's client takes its token where the code's own legacy call goes; 1.2.0's takes it at
    /oauth/accesstoken: the code's call faces the code's call, never the client's token request."""
    old = [
        recorded_call("POST", TOKEN.split()[1], 200, step=codepath.CLIENT_TOKEN),
        recorded_call("POST", TOKEN.split()[1], 200, step=LEGACY),
        recorded_call("POST", "/accounts/{id}/events", 202, step="api.events.send(…)"),
        recorded_call("POST", "/accounts/{id}/events", 202, step="api.events.send(…)"),
    ]
    new = [
        recorded_call("POST", "/oauth/accesstoken", 200, step=codepath.CLIENT_TOKEN),
        recorded_call("POST", TOKEN.split()[1], 200, step=LEGACY, headers={"deprecation": "@1671062400"}),
        recorded_call("POST", "/accounts/{id}/events", 202, step="api.events.send(…)"),
        recorded_call("POST", "/accounts/{id}/events", 422, "unknown-event-type", step="api.events.send(…)"),
    ]
    table = side_by_side({"1.1.0": {"calls": old}, "1.2.0": {"calls": new}})
    assert list(table.itertuples(name=None)) == [
        ((codepath.CLIENT_TOKEN, "POST /oauth/accesstoken"), ABSENT, "200"),
        ((codepath.CLIENT_TOKEN, TOKEN), "200", ABSENT),
        ((LEGACY, TOKEN), "200", "200 + deprecation: @1671062400 (2022-12-15)"),
        (("api.events.send(…), 2nd time", "POST /accounts/{id}/events"), "202", "422 unknown-event-type"),
    ]


def test_the_harness_calls_are_counted_apart_and_marked_in_the_report() -> None:
    """The client's own token request is the harness's, not the partner's code: its count is
    not added to the code's ``api.legacy_token()`` at the same path, and its report line names
    the harness's step, so that a partner does not read it as a call of their code."""
    old = [
        recorded_call("POST", TOKEN.split()[1], 200, step=codepath.CLIENT_TOKEN),
        recorded_call("POST", TOKEN.split()[1], 200, step=LEGACY),
    ]
    new = [
        recorded_call("POST", "/oauth/accesstoken", 200, step=codepath.CLIENT_TOKEN),
        recorded_call("POST", TOKEN.split()[1], 200, step=LEGACY),
    ]
    wires = {"1.1.0": {"calls": old}, "1.2.0-20221215": {"calls": new}}
    found = codepath.differences(wires)
    assert [(d.where, d.before, d.after, d.made_by) for d in found] == [
        ("POST /oauth/accesstoken", "0", "1", codepath.CLIENT_TOKEN),
        (TOKEN, "1", "0", codepath.CLIENT_TOKEN),
    ]
    text = codepath.report(wires)
    assert f"- change 1: POST /oauth/accesstoken: calls 0 → 1 ({codepath.CLIENT_TOKEN})\n" in text
    assert f"- change 1: {TOKEN}: calls 1 → 0 ({codepath.CLIENT_TOKEN})\n" in text
    assert codepath.report({"1.2.0-20221215": {"calls": new}}).startswith("Nothing to compare: only 1.2.0")


def test_a_webhook_the_harness_caused_is_marked_as_its_calls_are() -> None:
    """The document request's webhooks come from the harness (it opens the request through the
    control plane), not from the partner's code: their report lines name the harness's step, as
    its token request's do; the card's webhook, which the code's close caused, is not marked."""
    close, opened = 'api.cards.close(…, reason="lost")', codepath.DOCUMENT_REQUEST
    old = {"calls": [], "webhooks": [{"type": "person.document_request.created", "step": opened}]}
    new = {
        "calls": [],
        "webhooks": [
            {"type": "document_request.created", "step": opened},
            {"type": "card.closed", "step": close},
        ],
    }
    text = codepath.report({"1.1.0": old, "1.2.0-20221215": new})
    assert f"- change 6: webhook: event absent → document_request.created ({opened})\n" in text
    assert f"event person.document_request.created → absent ({opened})\n" in text
    assert "- change 6: webhook: event absent → card.closed\n" in text


def test_calls_are_compared_with_the_call_made_at_the_same_step() -> None:
    """Paired by count, 1.2.0's one call would face 1.1.0's first (made elsewhere) and read as
    an answer that changed; paired by step, only the count differs."""
    old = [
        recorded_call("POST", "/x", 200, step="walk"),
        recorded_call("POST", "/x", 422, "unknown-field", step="code"),
    ]
    new = [recorded_call("POST", "/x", 422, "unknown-field", step="code")]
    found = migration.compare({"calls": old}, {"calls": new})
    assert [(d.kind, d.before, d.after) for d in found] == [("calls", "2", "1")]
    unstepped = migration.compare(
        {"calls": [recorded_call("POST", "/x", 200)] * 2}, {"calls": [recorded_call("POST", "/x", 201)]}
    )
    assert [(d.kind, d.before, d.after) for d in unstepped] == [("code", "200", "201"), ("calls", "2", "1")]


def test_a_deprecation_date_is_shown_with_its_day() -> None:
    assert migration.header_value("deprecation", "@1671062400") == "@1671062400 (2022-12-15)"
    assert migration.header_value("link", "@1671062400") == "@1671062400", "only Deprecation is a date"
    assert migration.header_value("deprecation", "?1") == "?1", "anything else as it came"
    found = migration.compare(
        {"calls": [recorded_call("POST", TOKEN.split()[1], 200)]},
        {"calls": [recorded_call("POST", TOKEN.split()[1], 200, headers={"deprecation": "@1671062400"})]},
    )
    assert [d.line() for d in found] == [
        f"change 1: {TOKEN}: header deprecation: absent → @1671062400 (2022-12-15) [1.2.0: A03]"
    ]


def test_a_step_is_the_line_of_code_shortened() -> None:
    card = 'card = api.cards.create(account_id, type="physical")  # x'
    assert step_label(card) == 'api.cards.create(…, type="physical")'
    assert step_label("api.legacy_token()  # change 1") == "api.legacy_token()"
    assert step_label('raw.get(f"/accounts/{account_id}/referral_code")') == "raw.get(…)"
    assert step_label("for event_type in names:") == "for event_type in names:"


def test_webhooks_side_by_side_has_one_row_per_step_and_event_type() -> None:
    """Each webhook stands by the step that made the server send it: the code's close, or the
    document request the harness opens through the control plane (not the partner's code)."""
    close, opened = 'api.cards.close(…, reason="lost")', codepath.DOCUMENT_REQUEST
    table = webhooks_side_by_side(
        {
            "1.1.0": {"webhooks": [{"type": "person.document_request.created", "step": opened}]},
            "1.2.0": {
                "webhooks": [
                    {"type": "document_request.created", "step": opened},
                    {"type": "card.closed", "step": close},
                    {"type": "card.closed", "deprecation": "@1", "step": close},
                    {"type": "card.expired"},
                ]
            },
        }
    )
    assert table.to_dict("index") == {
        ("", "card.expired"): {"1.1.0": ABSENT, "1.2.0": "1"},  # a wire naming no step
        (close, "card.closed"): {"1.1.0": ABSENT, "1.2.0": "2 + Deprecation"},
        (opened, "document_request.created"): {"1.1.0": ABSENT, "1.2.0": "1"},
        (opened, "person.document_request.created"): {"1.1.0": "1", "1.2.0": ABSENT},
    }, "the code's steps first, then the harness's"
    assert list(table.index.names) == [None, "event type"]
    assert opened.startswith("harness: ") and "control plane" in opened


def test_the_wire_keeps_the_step_of_each_webhook() -> None:
    hooks = [
        {"type": "card.closed", "deprecation": None, "step": "api.cards.close(…)"},
        {"type": "card.expired", "deprecation": "@1"},
    ]
    wire = migration.emit("1.2.0", [], hooks)[migration.WIRE_MIME]
    assert wire["webhooks"] == [
        {"type": "card.closed", "deprecation": None, "step": "api.cards.close(…)"},
        {"type": "card.expired", "deprecation": "@1"},
    ], "a mapping keeps its Deprecation and step"


def test_code_steps_are_the_lines_that_call_whatever_the_answers(partner_code: PartnerCode) -> None:
    """What the notebook's check asks of each version's run: a call from each of these lines."""
    steps = codepath.code_steps(partner_code)
    assert steps[0] == LEGACY and steps[-1] == 'api.p2p.transfer(…, amount="5.00")'
    called = {'api.cards.close(…, reason="lost")', "api.events.send(…)", "raw.post(…)", "raw.get(…)"}
    assert called <= set(steps)
    assert "api.cards.close(…)" not in steps, "the 1.1.0 fallback runs only where the reason is refused"
    assert len(steps) == len(set(steps)) == 8


@pytest.fixture
def walked(monkeypatch: pytest.MonkeyPatch, partner_code: PartnerCode) -> dict[str, dict[str, Any]]:
    """Both versions walked on the simulator, seen by a fresh companion."""
    fresh = companion.Companion()
    monkeypatch.setattr(companion, "COMPANION", fresh)
    monkeypatch.setattr(relied, "COMPANION", fresh)
    return codepath.walk_versions("sim", seed=7, versions=["1.1.0", "1.2.0-20221215"], code=partner_code)


def test_the_walk_records_each_calls_step_and_counts_what_it_met(
    walked: dict[str, dict[str, Any]], partner_code: PartnerCode
) -> None:
    old, new = walked["1.1.0"]["calls"], walked["1.2.0-20221215"]["calls"]
    assert (old[0]["path"], old[0]["step"]) == (TOKEN.split()[1], codepath.CLIENT_TOKEN)
    assert (new[0]["path"], new[0]["step"]) == ("/oauth/accesstoken", codepath.CLIENT_TOKEN)
    steps = {c["step"] for c in new}
    assert {LEGACY, 'api.cards.close(…, reason="lost")', "raw.post(…)", "raw.get(…)"} <= steps, steps
    assert "api.cards.close(…)" in {c["step"] for c in old} - steps, "the fallback ran under 1.1.0 only"
    both = steps & {c["step"] for c in old}
    assert set(codepath.code_steps(partner_code)) <= both, "every line called, both times"
    hooks = {(h["step"], h["type"]) for wire in walked.values() for h in wire["webhooks"]}
    assert hooks == {
        ('api.cards.close(…, reason="lost")', "card.closed"),
        (codepath.DOCUMENT_REQUEST, "document_request.created"),
        (codepath.DOCUMENT_REQUEST, "person.document_request.created"),
    }, hooks
    assert relied.used_ids()["A66"] == {relied.ANSWERS}, "the plain httpx client's answers count"
    codepath.differences(walked)
    used = relied.used_ids()
    assert used["A66"] == {relied.ANSWERS, relied.CHECKS} and relied.CHECKS in used["A29"]
    table = relied.entries_used()
    assert {"A29", "A66"} <= {e["id"] for e in table.groups[relied.CHECKS]}, "what its report rests on"
