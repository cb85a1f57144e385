"""The partner API's operations: one data table, read without importing a route module.

Each :class:`Operation` names its key, the module that declares its endpoint, its methods and
its default path. ``kit.sim.table`` builds the route table of a simulator from it (per
personality, which may give an operation another path: ``Personality.paths()``), checks it
(collisions, the one precedence rule) and imports a module on the first request for one of its
operations: the first token and session of ``kit.connect("sim")`` load only ``oauth`` and
``sessions``. A module declares each of its operations by key (``kit.sim.table.Routes``); the
table refuses a key it does not know, and a module that leaves one of its keys undeclared.

The order of :data:`OPERATIONS` is the order of the OpenAPI document's operations; matching
does not depend on it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from kit import register
from kit.sim.headers import DEPRECATED, TOKEN_PATH
from kit.sim.versions import REFER_A_FRIEND_PATHS

#: Every method a request can name.
ALL_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE")


@dataclass(frozen=True)
class Operation:
    """A partner operation: ``key``, the route ``module`` declaring it, ``methods`` and the
    default ``path`` template. ``rest``: it takes the methods of its path that no other
    operation on the same template takes (a removed or deprecated path's own 404/405)."""

    key: str
    module: str
    methods: tuple[str, ...]
    path: str
    rest: bool = False


#: The deprecated token path (the spec's endpoint.2 and .3) and the methods it lists.
((LEGACY_PATH, _LEGACY_METHODS),) = DEPRECATED.items()
_LEGACY_OTHER = tuple(sorted(set(ALL_METHODS) - {"POST", "DELETE", *_LEGACY_METHODS}))
(_SAVINGS_CLOSE,) = [e["path"] for e in register.fact("removed_endpoints") if e["path"]]
_REFERRAL_CODE, _REFERRALS = REFER_A_FRIEND_PATHS

#: The default paths of the operations the spec does not show (A67; a personality may re-choose them).
_A67: dict[str, str] = register.value("A67")["paths"]
#: The partner operations, in the order of the OpenAPI document.
OPERATIONS: tuple[Operation, ...] = (
    Operation("access_token", "oauth", ("POST",), TOKEN_PATH),
    Operation("legacy_access_token", "oauth", ("POST",), LEGACY_PATH),
    Operation("legacy_revoke", "oauth", ("DELETE",), LEGACY_PATH),
    Operation("legacy_other_methods", "oauth", _LEGACY_OTHER, LEGACY_PATH, rest=True),
    Operation("init_data", "sessions", ("GET",), "/sessions/user_session_initialization_data"),
    Operation("create_session", "sessions", ("POST",), "/sessions"),
    Operation("end_session", "sessions", ("DELETE",), _A67["end_session"]),
    Operation("create_account", "onboarding", ("POST",), _A67["create_account"]),
    Operation("create_person", "onboarding", ("POST",), _A67["create_person"]),
    Operation("kyc_questions", "onboarding", ("GET",), _A67["kyc_questions"]),
    Operation("kyc_answers", "onboarding", ("POST",), _A67["kyc_answers"]),
    Operation("create_card", "cards", ("POST",), _A67["create_card"]),
    Operation("get_card", "cards", ("GET",), _A67["get_card"]),
    Operation("close_card", "cards", ("POST",), "/cards/{card_id}/close"),
    Operation("send_event", "events", ("POST",), "/accounts/{account_id}/events"),
    Operation("create_transfer", "p2p", ("POST",), _A67["create_transfer"]),
    Operation("get_transfer", "p2p", ("GET",), _A67["get_transfer"]),
    Operation("subscribe_webhooks", "webhooks", ("POST",), _A67["subscribe_webhooks"]),
    Operation("webhook_keys", "webhooks", ("GET",), _A67["webhook_keys"]),
    Operation("list_document_requests", "documents", ("GET",), _A67["list_document_requests"]),
    Operation("submit_document", "documents", ("POST",), _A67["submit_document"]),
    Operation("savings_close", "removed", ("POST",), _SAVINGS_CLOSE),
    Operation("savings_close_other", "removed", ALL_METHODS, _SAVINGS_CLOSE, rest=True),
    Operation("referral_code", "removed", ("GET",), _REFERRAL_CODE),
    Operation("create_referral", "removed", ("POST",), _REFERRALS),
    Operation("referral_code_other", "removed", ALL_METHODS, _REFERRAL_CODE, rest=True),
    Operation("referrals_other", "removed", ALL_METHODS, _REFERRALS, rest=True),
)
#: The operations by key.
BY_KEY: dict[str, Operation] = {op.key: op for op in OPERATIONS}
#: The partner route modules, in the order of the table.
MODULES: tuple[str, ...] = tuple(dict.fromkeys(op.module for op in OPERATIONS))


def partner_module(name: str) -> ModuleType:
    """The partner route module ``name`` of :data:`MODULES`, imported on first call."""
    if name not in MODULES:
        raise KeyError(name)
    return importlib.import_module(f"{__name__}.{name}")
