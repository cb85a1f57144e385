"""A noun by its count, for the kit's messages and reports: ``1 check``, ``2 checks``,
``3 register entries``.

    >>> counted(1, "check"), counted(2, "check"), counted(0, "entry", "entries")
    ('1 check', '2 checks', '0 entries')
"""

from __future__ import annotations

__all__ = ["counted", "plural"]


def plural(n: int, one: str, many: str | None = None) -> str:
    """``one`` when ``n`` is 1, else ``many`` (default: ``one`` and an ``s``)."""
    return one if n == 1 else many or one + "s"


def counted(n: int, one: str, many: str | None = None) -> str:
    """``n`` and its noun (:func:`plural`)."""
    return f"{n} {plural(n, one, many)}"
