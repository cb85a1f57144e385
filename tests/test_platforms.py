"""The kit imports where the POSIX-only parts of the standard library are missing (Windows), and a
feature that needs one says so; the per-user cache is the system's own folder off Linux.

Windows itself cannot be tested here. A child interpreter is made to look like it: before anything
of the kit is imported, ``import fcntl``, ``import resource`` (and the other modules Windows does
not have) raise ``ImportError`` in a module of the kit, and ``os`` has no ``getuid`` or
``geteuid``. Every module of the kit must then import (but the ``__main__`` modules and the kernel
launcher of ``kit regress``: scripts, run, not imported), and what cannot work says why.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import kit._cache
from kit._cache import CacheWarning, parsed_toml, user_cache_dir

ROOT = Path(__file__).resolve().parent.parent

#: Runs first in the child: the POSIX-only modules Windows lacks, gone for the kit's imports (an
#: import statement of a kit module, even of a module another library loaded already, fails), and
#: ``os`` without the functions Windows lacks.
WINDOWS_LIKE = r"""
import builtins, os

POSIX_ONLY = {"fcntl", "resource", "pwd", "grp", "termios", "tty", "pty", "syslog"}
_import = builtins.__import__

def windows_like_import(name, globals=None, locals=None, fromlist=(), level=0):
    importer = (globals or {}).get("__name__") or ""
    if level == 0 and name.partition(".")[0] in POSIX_ONLY and importer.partition(".")[0] == "kit":
        raise ImportError(f"No module named {name!r} (as on Windows)", name=name)
    return _import(name, globals, locals, fromlist, level)

builtins.__import__ = windows_like_import
for name in ("getuid", "geteuid"):
    delattr(os, name)
"""

#: Then: every module of the kit, and each feature that needs a POSIX module.
CHILD = r"""
import json, pkgutil, importlib, tempfile, os
from pathlib import Path

import kit

seen = {"failed": {}}
names = [m.name for m in pkgutil.walk_packages(kit.__path__, "kit.")]
for name in names:
    if name.endswith(".__main__") or name == "kit.regress._kernel_launcher":  # run, never imported
        continue
    try:
        importlib.import_module(name)
    except Exception as exc:
        seen["failed"][name] = f"{type(exc).__name__}: {exc}"
seen["imported"] = len(names)

from kit.lab.populations.shard import peak_rss_mb
seen["peak_rss_mb"] = repr(peak_rss_mb())

from kit.sim.durable import StateFile
from kit.sim.statefile import StateFileError
folder = Path(tempfile.mkdtemp())
try:
    StateFile.open(str(folder / "team.kitstate"))
except StateFileError as exc:
    seen["state_file"] = str(exc)
seen["left_in_folder"] = sorted(os.listdir(folder))

from kit.sim.atrest import KEY_SUFFIX, Sealer
state = str(folder / "other.kitstate")
Path(state + KEY_SUFFIX).write_bytes(b"k" * 32)
sealer = Sealer.beside(state)  # an owner it cannot check: a new key
seen["sealer_replaced_key"] = Path(state + KEY_SUFFIX).read_bytes() != b"k" * 32
print(json.dumps(seen))
"""


def _windows_like(tmp_path: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = subprocess.run(
        [sys.executable, "-c", WINDOWS_LIKE + CHILD],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    seen: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return seen


@pytest.mark.slow  # every module imported in a fresh interpreter: ≈4 s
def test_without_posix_modules_every_module_imports_and_the_state_file_says_why(tmp_path: Path) -> None:
    seen = _windows_like(tmp_path)
    assert seen["failed"] == {}
    assert isinstance(seen["imported"], int) and seen["imported"] > 100
    assert seen["peak_rss_mb"] == "nan"  # a population's figures, without the worker's memory
    assert seen["state_file"] == (
        "kit serve --state needs Linux or macOS (the state file is locked with flock): "
        "run kit serve without --state here"
    )
    assert seen["left_in_folder"] == []  # refused before anything was created
    assert seen["sealer_replaced_key"] is True


def test_on_posix_a_shard_reports_its_peak_memory() -> None:
    from kit.lab.populations.shard import peak_rss_mb

    peak = peak_rss_mb()
    assert not math.isnan(peak) and peak > 1.0


def test_on_linux_the_cache_is_under_xdg_cache_home_else_home_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert user_cache_dir() == tmp_path / "partner-api-kit"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_cache_dir() == tmp_path / "home" / ".cache" / "partner-api-kit"


@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_on_windows_and_macos_the_cache_is_the_system_folder_platformdirs_names(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, platform: str
) -> None:
    import platformdirs

    asked: list[tuple[object, ...]] = []

    def system_folder(appname: str, appauthor: object = None, *args: object, **kwargs: object) -> str:
        asked.append((appname, appauthor, *args, *kwargs.items()))
        return str(tmp_path / "system" / appname)

    monkeypatch.setattr(platformdirs, "user_cache_dir", system_folder)
    monkeypatch.setattr(sys, "platform", platform)
    assert user_cache_dir() == tmp_path / "system" / "partner-api-kit"
    assert asked == [("partner-api-kit", False)]  # no vendor folder above the kit's


def test_without_posix_owners_a_cache_is_used_whatever_its_mode_bits_say(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Windows reports every folder 0777 and every file 0666: the cache is used, silently."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delattr(os, "getuid")
    source = tmp_path / "facts.toml"
    source.write_text('name = "x"\n', encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parsed_toml(source)
        kept = next((tmp_path / "partner-api-kit" / "data").glob("facts-*.json"))
        os.chmod(kept.parent, 0o777)
        os.chmod(kept, 0o666)
        kept.write_text('{"name": "kept"}', encoding="utf-8")
        assert parsed_toml(source) == {"name": "kept"}
    assert not [w for w in caught if issubclass(w.category, CacheWarning)]
    assert kit._cache._uid() is None
