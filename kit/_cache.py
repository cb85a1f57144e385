"""The kit's per-user cache: files derived from others, kept so a new process reads instead of
deriving them again (the simulator's seeded keys, the register parsed from its TOML).

Everything kept here is a pure function of what names it: a file whose name is a digest of its
source is right or absent, never stale, and an unreadable or foreign one is derived again. The
directory is the system's cache folder for the user (:func:`user_cache_dir`: on Linux
``$XDG_CACHE_HOME/partner-api-kit``, ``~/.cache/partner-api-kit``); a file is written
whole or not at all, and a disk that cannot take it only costs the derivation next time. Nothing
sensitive is kept: no token, no partner secret, no decrypted data.

The cache is private, and checked before it is trusted: what it holds feeds the wire recorder's
redaction and the leak scan (the register's PII names, the KYC texts) and the simulator's keys.
Every folder of it, its own top folder included, is the user's and mode 0700; every file the
user's and mode 0600. A folder or file of the user's that is only readable by others (a cache an
older kit made) is made private in silence; one that belongs to another user, or that others can
write, is not used as found: a file is removed and derived again, a folder's files are removed
and the folder made private — each with a :class:`CacheWarning` — and a folder the user cannot
make theirs is not used at all (the data is derived and not kept). Where files have no POSIX
owner and mode (Windows: no ``os.getuid``), the folder in the user's profile is private by its
access rules, and owner and mode are not checked.

    >>> data = parsed_toml(register.data_dir() / "spec.toml")  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

from kit import _files as files
from kit._lazy import LazyPattern

__all__ = ["CacheWarning", "parsed_toml", "private_dir", "read_private", "user_cache_dir", "write_whole"]

#: The names of the files the cache writes (what a folder found open to others loses).
_OURS = LazyPattern(r"rsa-[0-9a-f]{32}\.pem|[\w.-]+-[0-9a-f]{32}\.json|\.tmp-.*")
_lock = threading.Lock()
_APP = "partner-api-kit"


class CacheWarning(UserWarning):
    """A folder or file of the cache was another user's or writable by others: not used as found."""


def user_cache_dir() -> Path:
    """The user's cache folder for the kit: on Windows and macOS the system's own, as
    ``platformdirs`` names it (``%LOCALAPPDATA%\\partner-api-kit\\Cache``,
    ``~/Library/Caches/partner-api-kit``); elsewhere ``$XDG_CACHE_HOME/partner-api-kit``, else
    ``~/.cache/partner-api-kit`` (platformdirs' answer too, without its import in every process)."""
    if sys.platform in ("win32", "darwin"):
        import platformdirs

        return Path(platformdirs.user_cache_dir(_APP, appauthor=False))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / _APP


def _uid() -> int | None:
    return os.getuid() if hasattr(os, "getuid") else None  # no owners to compare on Windows


def _warn(message: str) -> None:
    warnings.warn(message, CacheWarning, stacklevel=3)


def _clear(folder: Path) -> None:
    """Remove the cache's own files from ``folder`` and the folders in it (anyone may have
    replaced them)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if (folder / name).is_dir() and not (folder / name).is_symlink():
            _clear(folder / name)
        elif _OURS.fullmatch(name):
            with contextlib.suppress(OSError):  # left: read_private refuses what is not the user's
                os.unlink(folder / name)


def _private_folder(folder: Path, root: bool) -> bool:
    """``folder`` exists, is the user's, mode 0700 — made so, or ``False`` when it cannot be."""
    try:
        folder.mkdir(mode=0o700)
        os.chmod(folder, 0o700)  # whatever the umask
        return True
    except FileExistsError:
        pass
    except OSError:
        return False  # a read-only disk, a file in the way: no cache, and nothing to say
    try:
        found = os.stat(folder)
    except OSError:
        return False
    if not stat.S_ISDIR(found.st_mode):
        return False
    uid = _uid()
    if uid is None:
        return True  # no POSIX owner or mode to check (Windows): the profile's access rules hold
    if found.st_uid != uid:
        if root:  # a folder named by the environment, another user's: never ours to empty
            _warn(f"the cache folder {folder} belongs to another user: not used")
            return False
        _warn(f"the cache folder {folder} belonged to another user: made again")
        try:
            _clear(folder)
            folder.rmdir()
            folder.mkdir(mode=0o700)
            os.chmod(folder, 0o700)
        except OSError:
            return False
        return True
    if found.st_mode & 0o022:
        _warn(f"the cache folder {folder} was writable by others: its files removed, made private")
        _clear(folder)
    if stat.S_IMODE(found.st_mode) != 0o700:
        try:
            os.chmod(folder, 0o700)
        except OSError:
            return False
    return True


def private_dir(directory: Path, root: Path) -> bool:
    """Make ``directory`` and every folder from ``root`` down to it exist, the user's and
    mode 0700 (a few ``stat`` calls when they are); ``False`` when one cannot be (then nothing
    is read or kept). ``root`` is the cache's own top folder (``user_cache_dir()``, or a
    folder the environment names); the folders above it are left as they are, created 0700
    when missing.

    Raises:
        ValueError: ``directory`` is not ``root`` or below it.
    """
    parts = directory.relative_to(root).parts
    with _lock:
        try:
            root.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            return False
        folders = [root, *(root.joinpath(*parts[: i + 1]) for i in range(len(parts)))]
        return all(_private_folder(folder, folder == root) for folder in folders)


def read_private(path: Path) -> bytes | None:
    """The bytes of a cache file when it is a regular file of the user's that no one else can
    write (made 0600 if it was readable by others), else ``None``: none yet, a link, or another
    user's or an open one (removed, with a :class:`CacheWarning`, to be derived again)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            return None
        uid = _uid()
        if uid is not None and (found.st_uid != uid or found.st_mode & 0o022):
            _warn(f"the cache file {path} was another user's or writable by others: derived again")
            with contextlib.suppress(OSError):
                os.unlink(path)
            return None
        if uid is not None and stat.S_IMODE(found.st_mode) != 0o600:
            os.fchmod(fd, 0o600)
        return f.read()


def write_whole(path: Path, data: bytes, root: Path | None = None) -> None:
    """Write ``data`` to ``path`` whole or not at all (mode 0600, in private folders from
    ``root``, default the file's folder, down: :func:`private_dir`); a read-only or full disk,
    or a folder that is not the user's, is no error: the caller derived the data and only does
    not keep it."""
    if not private_dir(path.parent, root or path.parent):
        return
    with contextlib.suppress(OSError):
        files.write(path, data)  # whole against a concurrent writer too


def parsed_toml(path: Path) -> dict[str, Any]:
    """``tomllib.load`` of ``path``, kept as JSON under a digest of the file's bytes.

    The register and the spec facts are read by every process that connects, and JSON parses
    faster than TOML (benchmarks/bench.py FIXES: "per-user JSON copy"). Only TOML that JSON
    holds exactly (no dates or times, as in ``data/``) is kept; anything else is parsed every
    time."""
    raw = path.read_bytes()
    root = user_cache_dir()
    kept = root / "data" / f"{path.stem}-{hashlib.sha256(raw).hexdigest()[:32]}.json"
    usable = private_dir(kept.parent, root)
    try:
        found = json.loads(read_private(kept) or b"null") if usable else None
        if isinstance(found, dict):
            return found
    except ValueError:
        pass  # not ours: parse it
    import tomllib  # only here: a kept copy spares every later process the parser's import too

    data = tomllib.loads(raw.decode("utf-8"))
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):  # a date, a time or a non-finite float: JSON would change it
        return data
    if usable and json.loads(text) == data:
        for older in kept.parent.glob(f"{path.stem}-*.json"):  # an earlier version of the file
            older.unlink(missing_ok=True)
        write_whole(kept, text.encode("utf-8"), root)
    return data
