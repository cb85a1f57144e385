"""The sandbox fixtures file: its format, clear errors naming the entry (never a value), and
``kit serve --sandbox-fixtures`` writing one whose answers are the simulator's own."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from kit import _env as env
from kit import _fixtures as fixtures
from kit import register
from kit.cli import main as kit_main
from kit.cli import sim_fixtures_text
from kit.errors import ConfigError, FixturesError
from kit.lab.journeys import onboard

GOOD = """
[[persona]]
persona_id = "p-1"
first_name = "Quinn"
last_name = "Exampleton"
date_of_birth = 1961-07-09
national_id = "987-65-4321"

[persona.kyc]
birth_year = "1961"
"In which MONTH were   you born?" = "July"
national_id_last2 = "21"
"""
#: Values that must never appear in an error message.
VALUES = ("Quinn", "Exampleton", "1961-07-09", "987-65-4321", "July")


def _error(text: str) -> str:
    with pytest.raises(FixturesError) as caught:
        fixtures.parse(text, source="f.toml")
    message = str(caught.value)
    assert isinstance(caught.value, ConfigError)
    assert not [v for v in VALUES if v in message], message
    return message


def test_a_good_file_is_read_into_sensitive_values() -> None:
    found = fixtures.parse(GOOD)
    who = found.persona("p-1")
    assert found.persona(0) is who and len(found) == 1
    assert who.pii["first_name"].reveal() == "Quinn"
    assert who.pii["date_of_birth"].reveal() == "1961-07-09"  # a TOML date is accepted
    shown = repr(who) + repr(who.pii) + str(who.kyc)
    assert not [v for v in VALUES if v in shown]
    with pytest.raises(TypeError):
        pickle.dumps(who.kyc)


def test_answers_match_questions_by_id_then_by_text() -> None:
    who = fixtures.parse(GOOD).persona("p-1")
    questions = [
        {"question_id": "birth_year", "text": "Year?", "choices": ["1961", "1962"]},
        {"question_id": "m", "text": "In which month were you born?", "choices": ["July", "May"]},
        {"question_id": "national_id_last2", "text": "Digits?", "choices": ["21", "22"]},
    ]
    assert who.answers(questions).reveal() == [
        {"question_id": "birth_year", "choice": "1961"},
        {"question_id": "m", "choice": "July"},
        {"question_id": "national_id_last2", "choice": "21"},
    ]
    with pytest.raises(FixturesError, match="no KYC answer for question 'pet'"):
        who.answers([*questions, {"question_id": "pet", "text": "Your first pet?"}])


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (GOOD.replace('last_name = "Exampleton"\n', ""), "persona 1 ('p-1'): last_name is missing"),
        (GOOD.replace('persona_id = "p-1"\n', ""), "persona 1: persona_id is missing"),
        (GOOD.replace('"July"', '["July"]'), "persona 1 ('p-1'): kyc answer 2 must be a non-empty string"),
        (
            GOOD.replace('national_id_last2 = "21"', "national_id_last2 = 21"),
            "kyc answer 3 (question 'national_id_last2')",
        ),
        (
            GOOD.replace("date_of_birth = 1961-07-09", 'date_of_birth = "09/07/1961"'),
            "date_of_birth must be a date",
        ),
        (GOOD.replace("[persona.kyc]", "[persona.answers]"), "unknown field(s) 'answers'"),
        (GOOD.split("[persona.kyc]")[0], "persona 1 ('p-1'): kyc is missing"),
        (GOOD + GOOD, "persona 2 ('p-1'): persona_id is used twice"),
        ("title = 'mine'\n", "unknown top-level key(s) 'title'"),
        ("", "no persona"),
        (GOOD.replace('first_name = "Quinn"', 'first_name = "Quinn'), "f.toml is not valid TOML"),
        ("persona = 3\n", "no persona"),
    ],
)
def test_a_bad_file_names_the_entry_never_the_value(text: str, named: str) -> None:
    assert named in _error(text)


def test_the_environment_names_the_file(tmp_path: Path) -> None:
    assert fixtures.from_env({}) is None
    path = tmp_path / "f.toml"
    path.write_text(GOOD, encoding="utf-8")
    assert fixtures.from_env({env.SANDBOX_FIXTURES: str(path)}).persona(0).persona_id == "p-1"
    with pytest.raises(FixturesError, match="cannot be read"):
        fixtures.from_env({env.SANDBOX_FIXTURES: str(tmp_path / "missing.toml")})
    with pytest.raises(FixturesError, match=env.SANDBOX_FIXTURES):
        fixtures.required({})


def test_kit_serve_writes_the_simulators_personas_and_refuses_to_overwrite(tmp_path: Path) -> None:
    target = tmp_path / "sandbox.toml"
    target.write_text("mine", encoding="utf-8")
    assert kit_main(["serve", "--port", "0", "--sandbox-fixtures", str(target)]) == 2
    assert target.read_text(encoding="utf-8") == "mine"
    written = fixtures.parse(sim_fixtures_text())
    assert [p.persona_id for p in written.personas] == [p["persona_id"] for p in register.personas()][:3]
    everyone = fixtures.parse(sim_fixtures_text(None))
    assert [p.persona_id for p in everyone.personas] == [p["persona_id"] for p in register.personas()]


def test_kit_serve_publishes_three_personas_by_default_and_refuses_fewer_than_one(tmp_path: Path) -> None:
    """A sandbox may publish three test customers: the flow notebooks need no more."""
    target = str(tmp_path / "f.toml")
    assert kit_main(["serve", "--port", "0", "--fixture-personas", "0", "--sandbox-fixtures", target]) == 2
    assert not (tmp_path / "f.toml").exists()
    assert len(fixtures.parse(sim_fixtures_text(2)).personas) == 2


def test_the_written_file_is_owner_only(sandbox: object, fixtures_path: Path) -> None:
    assert fixtures_path.is_file()
    assert oct(os.stat(fixtures_path).st_mode & 0o777) == "0o600"


def test_the_written_answers_are_the_simulators_own() -> None:
    """Every persona's fixtures answers are those the simulator accepts (read on its control plane)."""
    import kit

    written = fixtures.parse(sim_fixtures_text())
    with kit.connect("sim") as api:
        for who in written.personas:
            compared: list[str] = []

            def answers(person_id: str, questions: list[dict[str, str]], who=who, seen=compared) -> list:  # type: ignore[no-untyped-def]
                chosen = who.answers(questions).reveal()
                assert sorted(map(str, chosen)) == sorted(map(str, api.sim.kyc_answers(person_id).reveal()))
                seen.append(who.persona_id)
                return chosen

            done = onboard(api, who.pii, answers=answers, promote_to_person=False)
            assert (done.status, compared) == ("established", [who.persona_id])


@pytest.mark.parametrize("odd", ["line one\nline two", 'say "x" \\ y', "tab\there", "del\x7fete", "café"])
def test_a_rendered_file_reads_back_whatever_its_values_hold(odd: str) -> None:
    """Every key and value goes through the one TOML escaper (``kit._tomltext``): a newline or
    a control character in a value still writes TOML that reads back as written."""
    import tomllib

    persona = {
        "persona_id": "p-1",
        "first_name": odd,
        "last_name": "Exampleton",
        "date_of_birth": "1961-07-09",
        "national_id": "987-65-4321",
        "kyc": {f"In which MONTH? {odd}": odd, "birth_year": "1961"},
    }
    (back,) = tomllib.loads(fixtures.render([persona], header="written by a test"))["persona"]
    assert back["first_name"] == odd
    assert back["kyc"] == {f"In which MONTH? {odd}": odd, "birth_year": "1961"}
