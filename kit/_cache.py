"""The kit's per-user cache: files derived from others, kept so a new process reads instead of
deriving them again (the simulator's seeded keys, the register parsed from its TOML).

Everything kept here is a pure function of what names it: a file whose name is a digest of its
source is right or absent, never stale, and an unreadable or foreign one is derived again. The
directory is ``$XDG_CACHE_HOME/partner-api-kit`` (``~/.cache/partner-api-kit``), mode 0700; a file
is written whole or not at all (mode 0600), and a disk that cannot take it only costs the
derivation next time. Nothing sensitive is kept: no token, no partner secret, no decrypted data.

    >>> data = parsed_toml(register.data_dir() / "spec.toml")  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

__all__ = ["parsed_toml", "user_cache_dir", "write_whole"]


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/partner-api-kit``, else ``~/.cache/partner-api-kit``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "partner-api-kit"


def write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (mode 0600, directories 0700); a read-only
    or full disk is no error: the caller derived the data and only does not keep it."""
    import tempfile  # only when something is kept: not on every process's start

    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)  # mode 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)  # also whole against a concurrent writer
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


def parsed_toml(path: Path) -> dict[str, Any]:
    """``tomllib.load`` of ``path``, kept as JSON under a digest of the file's bytes.

    The register and the spec facts are read by every process that connects; Python's TOML
    parser takes ~10 ms for them, JSON well under one. Only TOML that JSON holds exactly (no
    dates or times, as in ``data/``) is kept; anything else is parsed every time."""
    raw = path.read_bytes()
    kept = user_cache_dir() / "data" / f"{path.stem}-{hashlib.sha256(raw).hexdigest()[:32]}.json"
    try:
        found = json.loads(kept.read_bytes())
        if isinstance(found, dict):
            return found
    except (OSError, ValueError):
        pass  # not kept yet, or not ours: parse it
    import tomllib  # only here: a kept copy spares every later process the parser's import too

    data = tomllib.loads(raw.decode("utf-8"))
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):  # a date, a time or a non-finite float: JSON would change it
        return data
    if json.loads(text) == data:
        for older in kept.parent.glob(f"{path.stem}-*.json"):  # an earlier version of the file
            older.unlink(missing_ok=True)
        write_whole(kept, text.encode("utf-8"))
    return data
