"""What every resource shares: a reference to its client and path quoting."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:
    from kit.client import Client


def seg(value: str) -> str:
    """An id as one path segment (quoted: an id can never change the path's shape)."""
    return quote(str(value), safe="")


class Resource:
    """Base of ``api.<resource>`` objects."""

    def __init__(self, api: Client) -> None:
        self._api = api

    def __repr__(self) -> str:
        return f"<{type(self).__name__} resource>"
