"""Notebook 12 shows the partner's code path it runs, and a migration guide that matches it.

- the notebook renders ``partner_code_path``'s source at run time, and its stored rendering is
  the kit's current source (it cannot drift from what runs);
- every line its guide names ("The line in the code path") is a line of that source, and every
  change the source marks (``# change N``) has a row in the guide;
- the tables the notebook shows (:func:`kit.regress.codepath.side_by_side`,
  :func:`~kit.regress.codepath.webhooks_side_by_side`, :func:`~kit.regress.codepath.by_change`)
  keep only what differs and say what explains each difference: the spec, or the simulated
  1.1.0 (a register entry), never the spec's word for the kit's reconstruction.
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

from kit.regress.attribution import Difference
from kit.regress.codepath import ABSENT, by_change, partner_code_path, side_by_side, webhooks_side_by_side

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "12_migrating_to_1_2_0.ipynb"
SOURCE = inspect.getsource(partner_code_path)


def _cells() -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return cells


def _guide_rows() -> list[list[str]]:
    (guide,) = [
        "".join(c["source"]) for c in _cells()
        if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("### What changes for 1.2.0")
    ]
    rows = [line.strip("|").split(" | ") for line in guide.splitlines() if re.match(r"\| \d ", line)]
    assert rows, "the guide has a table of changes"
    return rows


def test_the_notebook_shows_the_code_path_as_the_kit_holds_it() -> None:
    (cell,) = [c for c in _cells() if "inspect.getsource(partner_code_path)" in "".join(c["source"])]
    shown = [
        "".join(o["data"]["text/markdown"]) for o in cell["outputs"] if "text/markdown" in o.get("data", {})
    ]
    assert shown == [f"```python\n{SOURCE}```"], "re-run the notebook: its stored source is not the kit's"


def test_every_line_the_guide_names_is_in_the_code_path() -> None:
    for row in _guide_rows():
        line = row[1].strip()
        if line == "—":
            continue
        (code,) = re.findall(r"`([^`]+)`", line)
        assert code.removesuffix("...)") in SOURCE, f"the guide names {code!r}, not in partner_code_path"


def test_every_change_the_code_path_marks_has_a_row_in_the_guide() -> None:
    marked = {int(n) for n in re.findall(r"# change (\d)", SOURCE)}
    guided = {int(row[0].split()[0]) for row in _guide_rows()}
    assert marked and marked <= guided, f"changes marked in the code but not in the guide: {marked - guided}"
    assert guided == set(range(1, 10)), guided


def _call(method: str, path: str, status: int, code: str | None = None) -> dict[str, Any]:
    return {"method": method, "path": path, "status": status, "code": code}


def test_side_by_side_keeps_the_calls_whose_answers_differ() -> None:
    calls = [_call("POST", "/a", 200), _call("POST", "/a", 200), _call("GET", "/b", 200)]
    before = {"calls": calls, "webhooks": []}
    after = {"calls": [_call("POST", "/a", 200), _call("GET", "/b", 404, "endpoint-removed")], "webhooks": []}
    table = side_by_side({"1.1.0": before, "1.2.0": after})
    assert table.to_dict("index") == {
        ("POST /a", 2): {"1.1.0": "200", "1.2.0": ABSENT},
        ("GET /b", 1): {"1.1.0": "200", "1.2.0": "404 endpoint-removed"},
    }
    one = side_by_side({"1.2.0": after})
    assert len(one) == 2, "one version: every call shown"


def test_webhooks_side_by_side_lists_each_versions_types() -> None:
    table = webhooks_side_by_side(
        {"1.1.0": {"webhooks": [{"type": "x.old"}]}, "1.2.0": {"webhooks": [{"type": "b"}, {"type": "a"}]}}
    )
    assert table.to_dict("list") == {"1.1.0": ["x.old", ABSENT], "1.2.0": ["a", "b"]}


def test_by_change_says_what_explains_each_difference() -> None:
    differences = [
        Difference("code", "POST /x", "200", "404", 5, "seed"),
        Difference("code", "POST /y", "422", "201", 3, "A27"),
        Difference("code", "POST /y", "422", "200", 3, "A27"),
        Difference("field", "GET /z", "absent", "f", None),
    ]
    table = by_change(differences).reset_index()
    assert table[["change", "explained by", "differences"]].values.tolist() == [
        [3, "simulated 1.1.0 (A27)", 2],
        [5, "the spec", 1],
        ["unexplained", "unexplained", 1],
    ]
    assert by_change([]).reset_index()["explained by"].tolist() == [ABSENT]
