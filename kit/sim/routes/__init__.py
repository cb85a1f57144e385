"""The partner API's route modules, and the routes each declares known without importing it.

``kit.sim.lazyapp`` matches a request against :data:`INDEX` and imports a module when one of
its routes is first chosen: the first token and session of ``kit.connect("sim")`` load only
``oauth`` and ``sessions`` (issue 37). :func:`partner_routers` imports them all, in order, for
the FastAPI app, which checks that the index still names exactly the routes they declare
(``tests/sim/test_sim_fastpath.py`` checks it too).
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: The partner route modules, in the order requests are matched against their routes.
MODULES = ("oauth", "sessions", "onboarding", "cards", "events", "p2p", "webhooks", "documents", "removed")
_ANY = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE")
#: (module, methods, path template) of every partner route, in matching order.
INDEX: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("oauth", ("POST",), "/oauth/accesstoken"),
    ("oauth", ("POST",), "/authorization/server_api/access_tokens"),
    ("oauth", ("DELETE",), "/authorization/server_api/access_tokens"),
    ("oauth", ("GET", "HEAD", "OPTIONS", "PATCH", "PUT", "TRACE"), "/authorization/server_api/access_tokens"),
    ("sessions", ("GET",), "/sessions/user_session_initialization_data"),
    ("sessions", ("POST",), "/sessions"),
    ("sessions", ("DELETE",), "/sessions"),
    ("onboarding", ("POST",), "/accounts"),
    ("onboarding", ("POST",), "/accounts/{account_id}/persons"),
    ("onboarding", ("GET",), "/persons/{person_id}/kyc/questions"),
    ("onboarding", ("POST",), "/persons/{person_id}/kyc/answers"),
    ("cards", ("POST",), "/accounts/{account_id}/cards"),
    ("cards", ("GET",), "/cards/{card_id}"),
    ("cards", ("POST",), "/cards/{card_id}/close"),
    ("events", ("POST",), "/accounts/{account_id}/events"),
    ("p2p", ("POST",), "/p2p/transfers"),
    ("p2p", ("GET",), "/p2p/transfers/{transfer_id}"),
    ("webhooks", ("POST",), "/webhooks/subscriptions"),
    ("webhooks", ("GET",), "/webhooks/jwks"),
    ("documents", ("GET",), "/persons/{person_id}/document_requests"),
    ("documents", ("POST",), "/document_requests/{document_request_id}/submit"),
    ("removed", ("POST",), "/accounts/{account_id}/savings/close"),
    ("removed", _ANY, "/accounts/{account_id}/savings/close"),
    ("removed", ("GET",), "/accounts/{account_id}/referral_code"),
    ("removed", ("POST",), "/accounts/{account_id}/referrals"),
    ("removed", _ANY, "/accounts/{account_id}/referral_code"),
    ("removed", _ANY, "/accounts/{account_id}/referrals"),
)


def partner_module(name: str) -> ModuleType:
    """The partner route module ``name`` of :data:`MODULES`, imported on first call."""
    if name not in MODULES:
        raise KeyError(name)
    return importlib.import_module(f"{__name__}.{name}")


def partner_routers() -> tuple[ModuleType, ...]:
    """Every partner route module, in matching order (all imported)."""
    return tuple(partner_module(name) for name in MODULES)


def declared_index() -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """What :data:`INDEX` must be: the routes the modules declare (imports them all)."""
    return tuple(
        (name, tuple(route.declared_methods), route.path)
        for name, module in zip(MODULES, partner_routers(), strict=True)
        for route in module.router.declared
    )
