"""Notebook 12 shows the partner's code path it runs, and what to change that matches it.

- the notebook renders ``partner_code_path``'s source at run time, and its stored rendering is
  the kit's current source (it cannot drift from what runs); that source is the partner's calls
  only (the recording harness, :func:`kit.regress.codepath.walk`, lives beside it);
- every change the source marks (``# change N``) has a line in the notebook's recap;
- the tables the notebook shows (:func:`kit.regress.codepath.side_by_side`,
  :func:`~kit.regress.codepath.webhooks_side_by_side`) keep exactly what differs: every call
  :func:`kit.regress.migration.compare` finds a difference in, headers and fields included.
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

from kit.regress import migration
from kit.regress.codepath import ABSENT, partner_code_path, side_by_side, webhooks_side_by_side

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "12_migrating_to_1_2_0.ipynb"
SOURCE = inspect.getsource(partner_code_path)


def _cells() -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return cells


def _recap() -> str:
    (recap,) = [
        "".join(c["source"]) for c in _cells()
        if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## Recap: what to change")
    ]
    return recap


def test_the_notebook_shows_the_code_path_as_the_kit_holds_it() -> None:
    (cell,) = [c for c in _cells() if "inspect.getsource(partner_code_path)" in "".join(c["source"])]
    shown = [
        "".join(o["data"]["text/markdown"]) for o in cell["outputs"] if "text/markdown" in o.get("data", {})
    ]
    assert shown == [f"```python\n{SOURCE}```"], "re-run the notebook: its stored source is not the kit's"


def test_the_code_shown_is_the_partners_calls_only() -> None:
    plumbing = ("record", "response_hook", "warnings", "emit", "connect", "event_hooks", "sim.")
    assert not [word for word in plumbing if word in SOURCE], "the recording harness is walk()'s, not shown"
    assert len(SOURCE.splitlines()) <= 25, "the partner's code, short"


def test_every_change_the_code_path_marks_has_a_line_in_the_recap() -> None:
    marked = {int(n) for n in re.findall(r"change (\d)", SOURCE)}
    heads = [line.split(":**")[0] for line in _recap().splitlines()]  # "- **Cards (changes 2, 3):**"
    recapped = {int(n) for head in heads for n in re.findall(r"\b(\d)\b", head)}
    assert marked and marked <= recapped, f"changes marked in the code, not in the recap: {marked - recapped}"
    assert recapped == set(range(1, 10)), recapped


def _call(method: str, path: str, status: int, code: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"method": method, "path": path, "status": status, "code": code,
            "headers": {}, "fields": [], **extra}


def test_side_by_side_keeps_the_calls_whose_answers_differ() -> None:
    calls = [_call("POST", "/a", 200), _call("POST", "/a", 200), _call("GET", "/b", 200)]
    calls.append(_call("GET", "/c", 200))
    before = {"calls": calls, "webhooks": []}
    after = {
        "calls": [
            _call("POST", "/a", 200, headers={"deprecation": "@1", "link": '</x>; rel="successor-version"'}),
            _call("GET", "/b", 404, "endpoint-removed"),
            _call("GET", "/c", 200, fields=["f"]),
        ],
        "webhooks": [],
    }
    table = side_by_side({"1.1.0": before, "1.2.0": after})
    assert table.to_dict("index") == {
        ("POST /a", 1): {"1.1.0": "200", "1.2.0": "200 + deprecation: @1 + link"},
        ("POST /a", 2): {"1.1.0": "200", "1.2.0": ABSENT},
        ("GET /b", 1): {"1.1.0": "200", "1.2.0": "404 endpoint-removed"},
        ("GET /c", 1): {"1.1.0": "200", "1.2.0": "200 + f"},
    }
    differing = {d.where for d in migration.compare(before, after)}
    assert {call for call, _ in table.index} == differing, "the table lists every call the report does"
    one = side_by_side({"1.2.0": after})
    assert len(one) == 3, "one version: every call shown"


def test_webhooks_side_by_side_lists_each_versions_types() -> None:
    table = webhooks_side_by_side(
        {"1.1.0": {"webhooks": [{"type": "x.old"}]}, "1.2.0": {"webhooks": [{"type": "b"}, {"type": "a"}]}}
    )
    assert table.to_dict("list") == {"1.1.0": ["x.old", ABSENT], "1.2.0": ["a", "b"]}
