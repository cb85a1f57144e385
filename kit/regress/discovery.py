"""Which notebooks a run executes: every ``[0-9][0-9]_*.ipynb``, or those a selection names;
the notebooks shipped with the kit (:func:`packaged`) and editable copies of them (:func:`copy`).

The wheel holds the repository's ``notebooks/`` as ``kit/_notebooks`` (pyproject's hatch
``force-include``); in a checkout (an editable install) they are the repository's own
``notebooks/``.

Example::

    >>> [p.name for p in discover("notebooks", ["00", "01_*"])]  # doctest: +SKIP
    ['00_quickstart.ipynb', '01_partner_token.ipynb']
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from kit import _files as files
from kit.regress.model import RegressError

__all__ = ["DEFAULT_PATTERN", "copy", "discover", "packaged"]

DEFAULT_PATTERN = "[0-9][0-9]_*.ipynb"
#: The folder beside the notebooks that holds the screenshots they show (``make screenshots``).
IMAGES = "images"
_GLOB_CHARS = "*?["


def discover(notebooks_dir: str | os.PathLike[str], selection: Sequence[str] = ()) -> list[Path]:
    """The notebooks to run, sorted: all ``[0-9][0-9]_*.ipynb``, or those a selection names.

    A selection item is a file name (``04_onboarding_kyc.ipynb``), a name without
    ``.ipynb``, a prefix (``04``) or a glob (``'0[5-7]_*'``), matched in ``notebooks_dir``.
    Files starting with ``_`` or ``.`` (the template, checkpoints) are only picked by an item
    that starts with ``_`` itself.

    Example::

        >>> [p.name for p in discover("notebooks", ["00", "01_*"])]  # doctest: +SKIP
        ['00_quickstart.ipynb', '01_partner_token.ipynb']

    Raises:
        RegressError: no such folder, or an item (or the default pattern) matches nothing.
    """
    folder = Path(notebooks_dir)
    if not folder.is_dir():
        raise RegressError(f"no notebooks folder at {str(folder)!r}; pass --notebooks DIR")
    if not selection:
        found = sorted(p for p in folder.glob(DEFAULT_PATTERN) if p.is_file())
        if not found:
            raise RegressError(f"no notebook matches {DEFAULT_PATTERN} in {str(folder)!r}")
        return found
    chosen: set[Path] = set()
    for item in selection:
        matches = _matches(folder, Path(item).name)
        if not matches:
            raise RegressError(f"no notebook matches {item!r} in {str(folder)!r}")
        chosen.update(matches)
    return sorted(chosen)


def _matches(folder: Path, name: str) -> list[Path]:
    """The notebooks one selection item names: the exact file first, else a prefix or glob."""
    is_glob = any(c in name for c in _GLOB_CHARS)
    candidates = [] if is_glob else [name, f"{name}.ipynb"]
    exact = [folder / c for c in candidates if c.endswith(".ipynb") and (folder / c).is_file()]
    if exact:
        return exact
    hidden_ok = name.startswith("_")
    return [
        p
        for p in folder.glob(name if is_glob else f"{name}*")
        if p.is_file() and p.suffix == ".ipynb" and (hidden_ok or not p.name.startswith(("_", ".")))
    ]


def packaged() -> Path:
    """The notebooks shipped with the kit: ``kit/_notebooks`` in an installed wheel, else the
    checkout's ``notebooks/`` (an editable install).

    Example::

        >>> packaged().name in ("_notebooks", "notebooks")  # doctest: +SKIP
        True

    Raises:
        RegressError: neither is there (pass ``--notebooks DIR``).
    """
    here = Path(__file__).resolve().parent.parent
    for folder in (here / "_notebooks", here.parent / "notebooks"):
        if folder.is_dir() and any(folder.glob(DEFAULT_PATTERN)):
            return folder
    raise RegressError("this installation ships no notebooks: pass --notebooks DIR")


def copy(destination: str | os.PathLike[str]) -> list[Path]:
    """Editable copies of the kit's notebooks (the template too) in ``destination`` (created
    when missing), with the screenshots they show (``images/``); the files written, sorted.
    Nothing is replaced, and nothing is written through a link found there, even one to
    nowhere (each copy is a new file, mode 0600: :mod:`kit._files`).

    Example::

        >>> [p.name for p in copy("my-notebooks")][:2]  # doctest: +SKIP
        ['00_quickstart.ipynb', '01_partner_token.ipynb']

    Raises:
        RegressError: a notebook's name is already taken there, by a file or a link (each
            named), or the folder cannot be written.
    """
    source, target = packaged(), Path(destination)
    shown = [*source.glob("*.ipynb"), *source.glob(f"{IMAGES}/*.png")]  # the screenshots they show
    names = sorted(p.relative_to(source).as_posix() for p in shown if not p.name.startswith("."))
    images = any(name.startswith(f"{IMAGES}/") for name in names)
    there = [name for name in names if os.path.lexists(target / name)]
    if images and (target / IMAGES).is_symlink():  # its files would be written where it points
        there.insert(0, IMAGES)
    if there:
        raise RegressError(f"{str(target)!r} already holds {', '.join(there)}: nothing copied")
    try:
        target.mkdir(parents=True, exist_ok=True)
        if images:
            (target / IMAGES).mkdir(mode=0o700, exist_ok=True)
        return [files.write(target / name, (source / name).read_bytes(), replace=False) for name in names]
    except FileExistsError as exc:  # made between the look and the copy
        taken = Path(str(exc.filename)).name
        raise RegressError(f"{str(target)!r} already holds {taken}: copy stopped") from None
    except OSError as exc:
        raise RegressError(f"cannot copy the notebooks to {str(target)!r}: {exc.strerror or exc}") from None
