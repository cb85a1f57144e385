"""What every resource shares: the client's requestor and path quoting, and :class:`Lazy`, which
builds a client's resource on its first use."""

from __future__ import annotations

import threading
from typing import Any, Generic, TypeVar, overload

from kit._lazy import attribute
from kit._outgoing import seg
from kit._requestor import Requestor

__all__ = ["Lazy", "Resource", "seg"]

R = TypeVar("R")


class Resource:
    """Base of ``api.<resource>`` objects: each calls through the :class:`Requestor` it is given."""

    def __init__(self, requestor: Requestor) -> None:
        self._requestor = requestor

    def __repr__(self) -> str:
        return f"<{type(self).__name__} resource>"


class Lazy(Generic[R]):
    """A client's resource (``api.cards``), built from the client's requestor on first use: its
    module is imported then, so that ``kit.connect`` imports only what its first calls need.

    ``module`` is the module under ``kit._resources``; ``name`` the class in it. Once built, the
    resource is the client's own attribute (this descriptor is not asked again).
    """

    _lock = threading.Lock()

    def __init__(self, module: str, name: str) -> None:
        self._where = (f"{__package__}.{module}", name)
        self._attr = ""

    def __set_name__(self, owner: type, attr: str) -> None:
        self._attr = attr

    @overload
    def __get__(self, client: None, owner: type) -> Lazy[R]: ...
    @overload
    def __get__(self, client: object, owner: type) -> R: ...
    def __get__(self, client: Any, owner: type) -> Any:
        if client is None:
            return self
        with self._lock:  # one resource per client, whichever thread asks first
            found = vars(client).get(self._attr)
            if found is None:
                found = attribute(*self._where)(client._requestor)
                vars(client)[self._attr] = found
        return found
