"""The files the kit writes for its user: created new, never written through a link.

``kit regress`` writes its reports, executed notebooks and HAR files into a folder, ``kit
notebooks copy`` editable notebooks into another, ``--write-choices`` an overlay, ``kit serve
--sandbox-fixtures`` its personas and ``api.export_har`` a wire log, each where the user said
(the per-user cache keeps its files with it too); anyone who can write in that folder
could have left a symbolic link there (a dangling one included) under the name the kit is about
to write. So no output is opened by its name: :func:`write` and :func:`created` make a new file
beside it (``O_EXCL``, never a link) and move it onto the name with ``os.replace``, which
replaces a link found there instead of following it, or, with ``replace=False``, create the name
itself with ``O_EXCL | O_NOFOLLOW``, which refuses whatever is there, a link included.

One rule for the mode: a file the kit writes is its user's alone, mode 0600 whatever the umask,
as the per-user cache's files and the simulator's snapshots and state keys are. Reports and
executed notebooks may hold what the leak scan is about to find, and a HAR file holds every
exchange. ``chmod`` a file to share it.

    >>> write(Path(folder) / "summary.md", "# kit regress\\n")  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = ["MODE", "created", "write"]

#: The mode of every file the kit writes for its user (the umask is not asked).
MODE = 0o600
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation
_TEMP_PREFIX = ".tmp-"  # the per-user cache knows its own leftovers by it (kit._cache)


def _private(fd: int) -> None:
    if hasattr(os, "fchmod"):  # not on Windows, where the umask does not apply either
        os.fchmod(fd, MODE)


@contextlib.contextmanager
def created(path: str | os.PathLike[str], *, replace: bool = True) -> Iterator[BinaryIO]:
    """A new file for ``path``, open for writing in binary, mode :data:`MODE`; it takes the name
    ``path`` when the block ends without an exception (whole: a reader never sees part of it),
    and is removed when the block raises.

    ``replace``: whatever ``path`` names is replaced, a file or a link (the link itself, never
    what it points to); with ``False`` the file is made at ``path`` itself, and anything there, a
    dangling link included, is :class:`FileExistsError`.

    Raises:
        FileExistsError: ``replace=False`` and ``path`` names something.
        OSError: the folder cannot be written, or ``path`` is a folder.
    """
    target = Path(path)
    if not replace:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY, MODE)
        made = target
    else:
        import tempfile  # only when a file is written

        fd, name = tempfile.mkstemp(dir=target.parent, prefix=_TEMP_PREFIX, suffix=f"-{target.name}")
        made = Path(name)
    try:
        _private(fd)
        with os.fdopen(fd, "wb") as f:
            yield f
        if replace:
            os.replace(made, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(made)
        raise


def write(path: str | os.PathLike[str], data: str | bytes, *, replace: bool = True) -> Path:
    """Write ``data`` (a ``str`` as UTF-8) to ``path`` as :func:`created` does; the path.

    Raises:
        FileExistsError: ``replace=False`` and ``path`` names something.
        OSError: the file cannot be written.
    """
    with created(path, replace=replace) as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)
    return Path(path)
