"""Choice overlays (kit._choices): validation names entry and key; effective values."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit import _choices as choices
from kit import _env as env
from kit import register
from kit._choices import ChoicesError


def _refused(data: dict[str, object]) -> ChoicesError:
    with pytest.raises(ChoicesError) as caught:
        choices.parse(data)
    assert isinstance(caught.value, ValueError)
    return caught.value


def test_an_overlay_overrides_only_its_keys() -> None:
    overlay = choices.parse({"A14": {"months": 24}, "A15": {"reasons": ["lost", "stolen"]}})
    assert overlay.chosen("A14", "months") == 24
    assert overlay.chosen("A14", "temporary_days") == register.value("A14")["temporary_days"]
    assert overlay.value("A15") == {**register.value("A15"), "reasons": ["lost", "stolen"]}
    assert overlay.entries() == ["A14", "A15"]
    assert overlay.changes("A13") == {}
    # an entry the overlay leaves alone is the register's
    assert choices.effective("A13", overlay) == register.value("A13")
    assert choices.effective("A14") == register.value("A14")


def test_the_empty_overlay_is_the_register() -> None:
    assert not choices.EMPTY
    assert choices.EMPTY.value("A06") == register.value("A06")
    assert choices.parse({}).entries() == []


def test_a_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "o.toml"
    path.write_text('description = "shorter cards"\n[A14]\nmonths = 24\n', encoding="utf-8")
    overlay = choices.load(path)
    assert overlay.chosen("A14", "months") == 24
    assert overlay.description == "shorter cards"
    assert overlay.source == str(path)


def test_an_unknown_entry_is_named() -> None:
    error = _refused({"A999": {"x": 1}})
    assert (error.entry, error.key) == ("A999", "")
    assert "no such entry" in str(error)
    error = _refused({"cards": {"months": 1}})
    assert error.entry == "cards" and "not a register entry id" in str(error)


def test_an_unknown_key_is_named_with_the_known_ones() -> None:
    error = _refused({"A14": {"years": 3}})
    assert (error.entry, error.key) == ("A14", "years")
    assert "months" in str(error) and "temporary_days" in str(error)


@pytest.mark.parametrize(
    ("entry", "key", "value", "expected"),
    [
        ("A14", "months", "24", "expected an integer"),
        ("A14", "months", 2.5, "expected an integer"),
        ("A14", "months", True, "expected an integer"),
        ("A15", "reasons", "lost", "expected a list"),
        ("A15", "reasons", ["lost", 3], "item 1: expected a string"),
        ("A28", "request_id", ["svc-request-id"], "expected a string"),
    ],
)
def test_a_wrong_type_is_named(entry: str, key: str, value: object, expected: str) -> None:
    error = _refused({entry: {key: value}})
    assert (error.entry, error.key) == (entry, key)
    assert expected in str(error) and "the register's type" in str(error)


def test_an_entry_with_no_value_cannot_be_overlaid() -> None:
    without = next(a["id"] for a in register.assumptions() if not a.get("value"))
    error = _refused({without: {"anything": 1}})
    assert error.entry == without and "no value to re-choose" in str(error)


def test_an_entry_must_be_a_table() -> None:
    error = _refused({"A14": 24})
    assert error.entry == "A14" and "expected a table" in str(error)


@pytest.mark.parametrize(
    ("entry", "key", "value", "statement"),
    [
        ("A13", "types", ["physical", "virtual"], "card.1"),
        ("A05", "session_types", ["anonymous", "person"], "session.1"),
        ("A27", "version", "2.0.0", "version.1"),
        ("A28", "session_id", "x-session", "session.4"),
    ],
)
def test_a_value_the_seed_contradicts_is_refused(entry: str, key: str, value: object, statement: str) -> None:
    error = _refused({entry: {key: value}})
    assert (error.entry, error.key) == (entry, key)
    assert "the seed contradicts it" in str(error) and statement in str(error)


def test_a_value_the_seed_allows_passes() -> None:
    overlay = choices.parse(
        {"A13": {"types": ["temporary", "virtual"]}, "A28": {"request_id": "x-request-id"}}
    )
    assert overlay.chosen("A13", "types") == ["temporary", "virtual"]


def test_every_problem_is_reported_at_once() -> None:
    error = _refused({"A14": {"years": 3, "months": "x"}, "A999": {}})
    assert {(p.entry, p.key) for p in error.problems} == {("A14", "years"), ("A14", "months"), ("A999", "")}
    assert "and 2 more" in str(error)


def test_a_file_that_is_not_toml_or_missing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[A14\n", encoding="utf-8")
    with pytest.raises(ChoicesError, match="is not TOML") as caught:
        choices.load(bad)
    assert str(bad) in str(caught.value)
    with pytest.raises(ChoicesError, match="cannot be read"):
        choices.load(tmp_path / "missing.toml")


def test_the_file_error_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "o.toml"
    path.write_text("[A14]\nyears = 3\n", encoding="utf-8")
    with pytest.raises(ChoicesError, match=r"\[A14\] years: .* in .*o\.toml"):
        choices.load(path)


def test_from_env_reads_the_named_variable(tmp_path: Path) -> None:
    path = tmp_path / "o.toml"
    path.write_text("[A14]\nmonths = 12\n", encoding="utf-8")
    assert env.SIM_CHOICES == "KIT_SIM_CHOICES"
    assert choices.from_env({}) is None
    found = choices.from_env({env.SIM_CHOICES: str(path)})
    assert found is not None and found.chosen("A14", "months") == 12
    expected = choices.from_env({env.EXPECT_CHOICES: str(path)}, env.EXPECT_CHOICES)
    assert expected is not None and expected.chosen("A14", "months") == 12


def test_chosen_names_an_unknown_key() -> None:
    with pytest.raises(KeyError, match="A14 has no value key 'years'"):
        choices.EMPTY.chosen("A14", "years")
