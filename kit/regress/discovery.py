"""Which notebooks a run executes: every ``[0-9][0-9]_*.ipynb``, or those a selection names.

Example::

    >>> [p.name for p in discover("notebooks", ["00", "01_*"])]  # doctest: +SKIP
    ['00_quickstart.ipynb', '01_partner_token.ipynb']
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from kit.regress.model import RegressError

__all__ = ["DEFAULT_PATTERN", "discover"]

DEFAULT_PATTERN = "[0-9][0-9]_*.ipynb"
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
