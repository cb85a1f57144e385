"""One module per API resource; each class is an attribute of the client (``api.cards``…) and
calls through the client's :class:`~kit.requestor.Requestor`, never the client itself."""

from __future__ import annotations

from kit.resources.accounts import Accounts
from kit.resources.cards import Cards
from kit.resources.documents import DocumentRequests
from kit.resources.events import Events
from kit.resources.kyc import Kyc
from kit.resources.p2p import P2P
from kit.resources.persons import Persons
from kit.resources.sim import SimControl
from kit.resources.webhooks import Webhooks

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
