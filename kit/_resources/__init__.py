"""One module per API resource; each class is an attribute of the client (``api.cards``…) and
calls through the client's :class:`~kit._requestor.Requestor`, never the client itself."""

from __future__ import annotations

from kit._resources.accounts import Accounts
from kit._resources.cards import Cards
from kit._resources.documents import DocumentRequests
from kit._resources.events import Events
from kit._resources.kyc import Kyc
from kit._resources.p2p import P2P
from kit._resources.persons import Persons
from kit._resources.sim import SimControl
from kit._resources.webhooks import Webhooks

__all__ = [
    "P2P",
    "Accounts",
    "Cards",
    "DocumentRequests",
    "Events",
    "Kyc",
    "Persons",
    "SimControl",
    "Webhooks",
]
