"""What every resource shares: the client's requestor and path quoting."""

from __future__ import annotations

from urllib.parse import quote

from kit._requestor import Requestor


def seg(value: str) -> str:
    """An id as one path segment (quoted: an id can never change the path's shape)."""
    return quote(str(value), safe="")


class Resource:
    """Base of ``api.<resource>`` objects: each calls through the :class:`Requestor` it is given."""

    def __init__(self, requestor: Requestor) -> None:
        self._requestor = requestor

    def __repr__(self) -> str:
        return f"<{type(self).__name__} resource>"
