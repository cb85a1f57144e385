"""A fixture value inside the kit's own words is not a leak; printed as data it is (issue 59, 1).

The simulator's own fixtures reproduce what a partner met: ``kit serve --sandbox-fixtures F
--fixture-personas 9`` writes persona-09, born in 1990, whose KYC answer to "In which year were
you born?" is ``1990`` — and the register's A11, whose whole text a notebook may show (its
closing table shows the entry's summary), gives ``1990-01-01, 1990/1/31, 01/31/1990`` as
example dates. A partner's own fixtures add a persona
born on exactly such a date and a "last four digits" answer the register also holds (``6789``).
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from kit import _env as env
from kit import _fixtures as fixtures
from kit import register
from kit.notebook import register_table
from kit.notebook.relied import used_table
from kit.regress import leaks
from kit.regress.model import EXIT_FAILED, EXIT_OK
from tests.notebooks.helpers import ROOT, run_cli
from tests.notebooks.test_regress_drift import notebook

A11 = register.assumption("A11")["choice"]
YEAR, _, _ = register.value("A12")["question_texts"]
#: A partner's persona born on the register's own example date, answering with digits it holds.
PARTNER = {
    "persona_id": "partner-1",
    "first_name": "Ana",
    "last_name": "Partnerova",
    "date_of_birth": "1990-01-01",
    "national_id": "000-00-6789",
    "kyc": {YEAR: "1990", "last_four": "6789"},
}
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(autouse=True)
def _no_secret_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (env.CLIENT_SECRET, env.ACCESS_TOKEN, env.SIM_PARTNERS, env.SIM_CONTROL_TOKEN):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def sim_fixtures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a run with the fixtures ``kit serve --fixture-personas 9`` writes."""
    path = tmp_path_factory.mktemp("fixtures") / "sandbox.toml"
    assert fixtures.write_sim_fixtures(str(path), overwrite=False, personas=9) is None
    persona = fixtures.load(path).persona("persona-09")
    assert persona.kyc.reveal()[YEAR] == "1990"
    return {env.SANDBOX_FIXTURES: str(path)}


@pytest.fixture(scope="module")
def partner_fixtures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("partner") / "sandbox.toml"
    path.write_text(fixtures.render([PARTNER]), encoding="utf-8")
    return {env.SANDBOX_FIXTURES: str(path)}


def _notebook(*outputs: Mapping[str, Any]) -> dict[str, Any]:
    """A notebook of one cell whose outputs display ``outputs`` (MIME bundles)."""
    cell = new_code_cell("kit.notebook.entries_used()")
    cell.outputs = [new_output("display_data", data=dict(bundle)) for bundle in outputs]
    return dict(new_notebook(cells=[cell]))


def _kinds(text: str, environ: Mapping[str, str]) -> list[str]:
    return [f.kind for f in leaks.scan_text(text, environ=environ)]


def _fixture_values(found: list[leaks.Finding]) -> list[leaks.Finding]:
    # A70's text names the simulator's published client secret: another kind, not this rule's
    return [f for f in found if f.kind == "fixture-value"]


def _closing_table() -> dict[str, str]:
    table = used_table({"A11": {"checks"}, "A12": {"answers"}})
    return {"text/html": table._repr_html_(), "text/plain": repr(table)}


def test_the_stored_notebooks_leak_nothing_with_the_simulators_nine_personas(
    sim_fixtures: dict[str, str],
) -> None:
    assert len(NOTEBOOKS) == 15  # every flow notebook is scanned: 00 to 14
    found = {path.name: leaks.scan_notebook(path, environ=sim_fixtures) for path in NOTEBOOKS}
    assert {name: [str(f) for f in leaked] for name, leaked in found.items() if leaked} == {}


def test_the_register_as_a_notebook_shows_it_holds_no_fixture_value(
    sim_fixtures: dict[str, str], partner_fixtures: dict[str, str]
) -> None:
    every = register_table()
    shown = _notebook(
        _closing_table(),
        {"text/html": every._repr_html_(), "text/plain": repr(every)},
        {"application/json": {"A11": A11}},  # the entry's text as data of a JSON display
    )
    for environ in (sim_fixtures, partner_fixtures):
        assert _fixture_values(leaks.scan_notebook(shown, environ=environ)) == []
        assert _kinds(A11, environ) == []  # printed as text
        assert _kinds(" ".join(A11.split())[:400] + "\n" + A11[400:], environ) == []  # wrapped
        table = _closing_table()["text/html"]
        assert leaks.redact(table, environ=environ) == table


@pytest.mark.parametrize(
    "printed",
    [
        "persona-09 answered 1990",
        "<table><tr><td>persona-09</td><td>1990</td></tr></table>",
        '{"question": "year", "choice": "1990"}',
        "born 1990/02/11",  # the persona's date of birth, in any of its forms
        "answers: 1990.",
    ],
)
def test_a_personas_answer_printed_as_data_is_a_leak(printed: str, sim_fixtures: dict[str, str]) -> None:
    assert _kinds(printed, sim_fixtures) == ["fixture-value"]
    table = _closing_table()["text/html"]
    assert _kinds(f"{table}\n{printed}\n{table}", sim_fixtures) == ["fixture-value"]  # it alone


def test_a_value_printed_beside_the_register_text_is_found_and_only_it(
    sim_fixtures: dict[str, str], partner_fixtures: dict[str, str]
) -> None:
    answers = pd.DataFrame({"question": ["year"], "answer": ["1990"]})
    shown = _notebook(_closing_table(), {"text/html": answers.to_html(), "text/plain": repr(answers)})
    found = leaks.scan_notebook(shown, environ=sim_fixtures)
    assert [(f.kind, f.location.partition(", line")[0]) for f in found] == [
        ("fixture-value", "notebook: cell 1 output 2 text/html"),
        ("fixture-value", "notebook: cell 1 output 2 text/plain"),
    ]
    quoted = html.escape(A11)  # the register's words, then the partner's persona as data
    assert _kinds(f"{quoted}<td>6789</td><td>born 1990-01-01</td>", partner_fixtures) == [
        "fixture-value",
        "fixture-value",
    ]
    assert _kinds(f"last four: 6789 — {A11}", partner_fixtures) == ["fixture-value"]


def test_a_short_value_joined_to_a_date_or_path_by_a_slash_is_not_standing_alone(
    sim_fixtures: dict[str, str],
) -> None:
    assert _kinds("dates 1990/1/31 and 01/31/1990 and /kyc/1990 here", sim_fixtures) == []
    assert _kinds("the answer (1990) / 1990 / 1990/", sim_fixtures) == ["fixture-value"] * 3


def test_every_deliberate_kind_is_still_found_inside_the_kit_s_words(sim_fixtures: dict[str, str]) -> None:
    start = A11.index("1990/1/31")
    before, after = A11[:start], A11[start:]
    session = "ses_" + "Q" * 43
    assert _kinds(f"{before}{YEAR} {after}", sim_fixtures) == ["kyc-question"]
    assert _kinds(f"{before}{session} {after}", sim_fixtures) == ["session-token"]
    assert _kinds(f"{before}1950-03-14 {after}", {}) == ["persona-dob"]
    assert _kinds(f"{before}1950-03-14 {after}", sim_fixtures) == ["fixture-value"]  # persona-01's
    # encoded as data: found once decoded; the register's own words, encoded, are not a leak
    data = base64.b64encode(b"choice=1990&question=year").decode()
    assert _kinds(f"state={data}", sim_fixtures) == ["fixture-value"]
    own = base64.b64encode(A11[start - 80 : start + 80].encode()).decode()
    assert _kinds(f"state={own}", sim_fixtures) == []
    assert _kinds(json.dumps({"note": A11})[1:-1].replace("/", "\\/"), sim_fixtures) == []


@pytest.mark.slow  # kit regress runs: ≈7 s
def test_kit_regress_passes_the_closing_table_and_fails_the_persona_printed(
    sim_fixtures: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(env.SANDBOX_FIXTURES, sim_fixtures[env.SANDBOX_FIXTURES])
    shows = (  # the closing table, and A11's whole text, example dates included, as a reader prints it
        "import kit.notebook\nprint(kit.register.assumption('A11')['choice'])\n"
        "kit.notebook.register_table(['A11', 'A12'])"
    )
    notebook(tmp_path / "ok", "01_register.ipynb", shows)
    code, stdout, stderr = run_cli("--notebooks", str(tmp_path / "ok"), "--out", str(tmp_path / "out"))
    assert code == EXIT_OK, stdout + stderr
    assert "1990/1/31" in (tmp_path / "out" / "01_register.ipynb").read_text(encoding="utf-8")
    prints = (  # the first answer, the birth year's (the question's text would be a leak itself)
        "from kit import _fixtures\n"
        "print('answered', list(_fixtures.required().persona('persona-09').kyc.reveal().values())[0])"
    )
    notebook(tmp_path / "leaks", "01_register.ipynb", shows, prints)
    code, stdout, stderr = run_cli("--notebooks", str(tmp_path / "leaks"), "--out", str(tmp_path / "out2"))
    assert code == EXIT_FAILED, stdout + stderr
    assert re.search(r"leak: fixture-value \(1 finding", stdout), stdout
