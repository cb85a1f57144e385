"""The per-user cache (``kit._cache``): the register parsed from its TOML is kept as JSON under a
digest of the file, read back exactly, derived again when damaged or foreign, never kept when JSON
would change it, and a disk that refuses it costs nothing but the parse."""

from __future__ import annotations

import datetime
import json
import os
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


# -- private, and checked before it is trusted -------------------------------------------------

SOURCE_TEXT = 'answer = 42\nname = "real"\n'
PLANTED = '{"answer": 0, "name": "planted"}'


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "facts.toml"
    path.write_text(SOURCE_TEXT)
    return path


def _kept_name(source: Path) -> str:
    import hashlib

    return f"{source.stem}-{hashlib.sha256(source.read_bytes()).hexdigest()[:32]}.json"


def test_every_folder_of_the_cache_is_private_and_a_normal_run_says_nothing(
    cache: Path, source: Path, recwarn: pytest.WarningsRecorder
) -> None:
    old = os.umask(0o022)  # the usual umask: folders 0755 unless made otherwise
    try:
        _cache.parsed_toml(source)
        _cache.parsed_toml(source)  # a hit
    finally:
        os.umask(old)
    top = cache.parent
    assert (_mode(top), _mode(cache), _mode(cache / _kept_name(source))) == (0o700, 0o700, 0o600)
    assert not [w for w in recwarn if issubclass(w.category, _cache.CacheWarning)]


def test_a_cache_an_older_kit_left_readable_is_made_private_in_silence(
    cache: Path, source: Path, recwarn: pytest.WarningsRecorder
) -> None:
    cache.mkdir(parents=True)
    kept = cache / _kept_name(source)
    kept.write_text('{"answer": 42, "name": "real"}')
    for path, mode in ((cache.parent, 0o755), (cache, 0o755), (kept, 0o644)):
        path.chmod(mode)
    assert _cache.parsed_toml(source) == {"answer": 42, "name": "real"}
    assert (_mode(cache.parent), _mode(cache), _mode(kept)) == (0o700, 0o700, 0o600)
    assert not [w for w in recwarn if issubclass(w.category, _cache.CacheWarning)]


@pytest.mark.parametrize("open_to_others", ["top", "data"])
def test_a_folder_others_can_write_is_emptied_made_private_and_said(
    cache: Path, source: Path, open_to_others: str
) -> None:
    cache.mkdir(parents=True)
    planted = cache / _kept_name(source)
    planted.write_text(PLANTED)
    planted.chmod(0o600)
    (cache.parent if open_to_others == "top" else cache).chmod(0o777)
    with pytest.warns(UserWarning, match="writable by others"):
        assert _cache.parsed_toml(source) == {"answer": 42, "name": "real"}
    assert (_mode(cache.parent), _mode(cache)) == (0o700, 0o700)
    assert json.loads(planted.read_text()) == {"answer": 42, "name": "real"}  # derived again


def test_a_file_others_can_write_is_derived_again_and_said(cache: Path, source: Path) -> None:
    _cache.parsed_toml(source)
    kept = cache / _kept_name(source)
    kept.write_text(PLANTED)
    kept.chmod(0o666)
    with pytest.warns(UserWarning, match="writable by others"):
        assert _cache.parsed_toml(source) == {"answer": 42, "name": "real"}
    assert _mode(kept) == 0o600 and json.loads(kept.read_text())["name"] == "real"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
@pytest.mark.parametrize("given_away", ["file", "data"])
def test_another_users_file_or_folder_is_not_trusted(cache: Path, source: Path, given_away: str) -> None:
    _cache.parsed_toml(source)
    kept = cache / _kept_name(source)
    kept.write_text(PLANTED)
    os.chown(kept if given_away == "file" else cache, 65534, 65534)
    with pytest.warns(UserWarning, match="another user"):
        assert _cache.parsed_toml(source) == {"answer": 42, "name": "real"}
    assert cache.stat().st_uid == kept.stat().st_uid == os.getuid()
