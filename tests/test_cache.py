"""The per-user cache (``kit._cache``): the register parsed from its TOML is kept as JSON under a
digest of the file, read back exactly, derived again when damaged or foreign, never kept when JSON
would change it, and a disk that refuses it costs nothing but the parse."""

from __future__ import annotations

import datetime
import stat
import tomllib
from pathlib import Path

import pytest

from kit import _cache, register


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "partner-api-kit" / "data"


def test_the_register_read_through_the_cache_is_the_parsed_toml(cache: Path) -> None:
    source = register.data_dir() / "assumptions.toml"
    parsed = tomllib.loads(source.read_text(encoding="utf-8"))
    assert _cache.parsed_toml(source) == parsed  # a miss: parsed, then kept
    (kept,) = cache.iterdir()
    assert kept.name.startswith("assumptions-") and kept.suffix == ".json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and stat.S_IMODE(cache.stat().st_mode) == 0o700
    kept.write_text('{"assumption": [{"id": "kept"}]}')  # a hit is read, not parsed again
    assert _cache.parsed_toml(source) == {"assumption": [{"id": "kept"}]}


def test_a_changed_file_gets_a_new_entry_and_the_old_one_goes(cache: Path, tmp_path: Path) -> None:
    source = tmp_path / "facts.toml"
    source.write_text('answer = 42\nname = "one"\n')
    assert _cache.parsed_toml(source) == {"answer": 42, "name": "one"}
    first = {p.name for p in cache.iterdir()}
    source.write_text('answer = 42.0\nname = "two"\n')
    assert _cache.parsed_toml(source) == {"answer": 42.0, "name": "two"}
    assert isinstance(_cache.parsed_toml(source)["answer"], float)  # read back as kept: a float
    (second,) = {p.name for p in cache.iterdir()}
    assert second not in first


@pytest.mark.parametrize("damage", ["{not json", "[1, 2]", ""])
def test_a_damaged_or_foreign_entry_is_parsed_again(cache: Path, tmp_path: Path, damage: str) -> None:
    source = tmp_path / "facts.toml"
    source.write_text("answer = 42\n")
    _cache.parsed_toml(source)
    (kept,) = cache.iterdir()
    kept.write_text(damage)
    assert _cache.parsed_toml(source) == {"answer": 42}
    assert kept.read_text() == '{"answer": 42}'


def test_toml_that_json_would_change_is_never_kept(cache: Path, tmp_path: Path) -> None:
    source = tmp_path / "dated.toml"
    source.write_text("day = 2022-12-15\nspeed = inf\n")
    parsed = _cache.parsed_toml(source)
    assert parsed["day"] == datetime.date(2022, 12, 15) and parsed["speed"] == float("inf")
    assert not cache.exists() or not any(cache.iterdir())


def test_a_cache_that_cannot_be_written_costs_only_the_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    source = tmp_path / "facts.toml"
    source.write_text("answer = 42\n")
    assert _cache.parsed_toml(source) == {"answer": 42}
    assert blocked.read_text() == ""
