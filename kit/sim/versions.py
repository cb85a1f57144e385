"""The versions the simulator serves, and each change of 1.2.0 as one gate (A27).

A request names its version in ``svc-api-version`` (absent: the server's default); an unknown
one is refused before routing (step 0 of the order of checks, :func:`refusal`, asked by
``kit.sim.middleware``). Every other difference between 1.1.0 and 1.2.0-20221215 is one change
of the spec's list, and each change's version logic sits in its section below, and only there:
routes, the pipeline and the webhook engine ask these functions, never compare versions
themselves. What each change touches is its record in ``data/spec.toml`` (``change.N``); what
the spec leaves open about the version before is the register's (A27, A65, A66).

    >>> in_force(2, "1.1.0"), in_force(2, CURRENT)
    (False, True)
    >>> card_types("1.1.0")
    ['physical', 'virtual']

Own gates, not cadwyn: cadwyn migrates requests and responses between versions through
FastAPI's routing and pydantic models, but the simulator's partner routes are served past both
(``kit.sim.table``) and read their bodies themselves, so its migrations would never run on
them; a gate per change, asked where the behaviour is, costs nothing on 1.2.0's path.
"""

from __future__ import annotations

import copy
from typing import Any
from urllib.parse import parse_qsl

from starlette.types import Scope

from kit import register
from kit._operations import BY_KEY
from kit.sim.asgi import first
from kit.sim.headers import API_VERSION, ROLE
from kit.sim.models import Strict

_SPEC = {
    k: register.fact(k)
    for k in ("version", "change", "webhook_events", "removed_endpoints", "deprecated_endpoints")
}
_VALUE = register.value("A27")
#: The request and response header naming the version.
HEADER: str = API_VERSION
_HEADER_BYTES = HEADER.encode("latin-1")
#: The spec's version (version.1), the default.
CURRENT: str = _SPEC["version"]
#: Every version served, oldest first.
SUPPORTED: tuple[str, ...] = tuple(_VALUE["versions"])
#: The version before 1.2.0, as the kit names it (the spec names none: A27).
(PREVIOUS,) = [v for v in SUPPORTED if v != CURRENT]
_CHANGES = {c["number"]: c for c in _SPEC["change"]}
#: The changes of 1.2.0 and the versions each is in force in. Change 9 renames categories, names
#: in the documentation: "Category names do not change paths." (its record's ``on_the_wire``).
IN_FORCE: dict[int, frozenset[str]] = {n: frozenset({CURRENT}) for n in _CHANGES}


def in_force(change: int, version: str) -> bool:
    """Whether change ``change`` of 1.2.0 holds under ``version``."""
    return version in IN_FORCE[change]


# --- step 0: which version serves a request ---------------------------------------------------


def requested(scope: Scope) -> str | None:
    """The version the request names in ``svc-api-version``, or None when it names none."""
    value = first(scope, _HEADER_BYTES)
    return None if value is None else value.strip()


#: The query parameter naming the version of the OpenAPI document and its pages (A48), for a
#: browser page (Swagger UI's version selector), which sends no ``svc-api-version``.
DOCUMENT_QUERY = "version"


def requested_document(scope: Scope) -> str | None:
    """The version a request for the OpenAPI document names: the header, else ``?version=``."""
    asked = requested(scope)
    if asked is None:
        for name, value in parse_qsl(scope.get("query_string", b"").decode("latin-1")):
            if name == DOCUMENT_QUERY:
                return value.strip()
    return asked


def of(scope_state: dict[str, Any] | Any) -> str:
    """The version serving a request, from its ``request.state`` (or scope ``state`` dict)."""
    if isinstance(scope_state, dict):
        return str(scope_state.get("api_version", CURRENT))
    return str(getattr(scope_state, "api_version", CURRENT))


def refusal_detail(served: tuple[str, ...] = SUPPORTED) -> str:
    """What an unknown version is told (never echoing what was sent): the versions ``served``."""
    return f"This API version is not served; {HEADER} must be one of: {', '.join(served)}."


# --- change 1: the OAuth token endpoint; the legacy token endpoints deprecated ------------------


def token_endpoint_exists(version: str) -> bool:
    """``POST /oauth/accesstoken`` was added in 1.2.0: under 1.1.0 it is a plain 404."""
    return in_force(1, version)


def token_endpoint(version: str) -> str:
    """The operation issuing the partner token under ``version``, as its answers name it: 1.2.0's
    ``POST /oauth/accesstoken``, or the one it replaced (change.1's ``previously``)."""
    added = _SPEC["deprecated_endpoints"][0]["replaced_by"]
    return added if token_endpoint_exists(version) else str(_CHANGES[1]["previously"][added])


def legacy_deprecated(version: str) -> bool:
    """The legacy token endpoints carry ``Deprecation`` (and may be refused, 410 in strict mode)
    only from 1.2.0: under 1.1.0 they are the token endpoints."""
    return in_force(1, version)


# --- change 2: the close reason ------------------------------------------------------------------


class CardClosePrevious(Strict):
    """The close body of 1.1.0: nothing (a ``reason`` is 422 unknown-field)."""


def close_takes_reason(version: str) -> bool:
    return in_force(2, version)


#: The card fields a version before change 2 does not show (A27: ``card_fields_hidden``).
HIDDEN_CARD_FIELDS: tuple[str, ...] = tuple(_VALUE["card_fields_hidden"])


def close_summary(version: str) -> str:
    """What the close operation does under ``version``: a reason and card.closed are 1.2.0's."""
    if close_takes_reason(version):
        return "Close a card, optionally with a reason (1.2.0); emits card.closed"
    return "Close a card (no reason; no webhook: card.closed is new in 1.2.0)"


# --- change 3: the temporary card type ------------------------------------------------------------

_ADDED_TYPES = set(_CHANGES[3]["added"])


def card_types(version: str) -> list[str]:
    """The card types ``POST /accounts/{account_id}/cards`` takes under ``version`` (A13)."""
    types = list(register.value("A13")["types"])
    return types if in_force(3, version) else [t for t in types if t not in _ADDED_TYPES]


#: How a version before change 3 shows a card of a type it does not have (A27:
#: ``card_type_shown``, a type 1.1.0 has for each type 1.2.0 added).
CARD_TYPE_SHOWN: dict[str, str] = dict(_VALUE["card_type_shown"])


def shown_card(card: dict[str, Any], version: str) -> dict[str, Any]:
    """A card's answer (or a card event's data) as ``version`` shows it (A27): before 1.2.0
    without the fields of change 2 (``close_reason``) and with a type 1.1.0 has (change 3);
    the card itself (one state for both versions) is unchanged.

        >>> shown_card({"type": "temporary", "close_reason": "lost"}, "1.1.0")
        {'type': 'virtual'}
    """
    if in_force(2, version) and in_force(3, version):
        return card
    shown = {k: v for k, v in card.items() if in_force(2, version) or k not in HIDDEN_CARD_FIELDS}
    if not in_force(3, version) and shown.get("type") in CARD_TYPE_SHOWN:
        shown["type"] = CARD_TYPE_SHOWN[shown["type"]]
    return shown


def event_data(event_type: str, data: dict[str, Any], version: str) -> dict[str, Any]:
    """A webhook's ``data`` as a subscription pinned to ``version`` receives it: a card event's
    card as :func:`shown_card` shows it, any other event's as it is."""
    return shown_card(data, version) if event_type.startswith("card.") else data


# --- change 4: the allowed inbound event types ------------------------------------------------------


def inbound_event_types(version: str) -> list[str] | None:
    """The allowed inbound event types, or None where any type is taken (1.1.0: A27)."""
    return list(_CHANGES[4]["event_types"]) if in_force(4, version) else None


# --- change 5: savings close removed ------------------------------------------------------------------


def savings_close_removed(version: str) -> bool:
    """Removed in 1.2.0 (A29); under 1.1.0 it answers (A65)."""
    return in_force(5, version)


# --- change 6: webhook events ------------------------------------------------------------------------

_RENAMED_FROM = {new: old for new, old in _CHANGES[6]["previously"].items()}  # current -> 1.1.0
_ADDED_EVENTS = set(_CHANGES[6]["added"])
_DEPRECATED_EVENTS = set(_CHANGES[6]["deprecated"])


def webhook_events(version: str) -> list[str]:
    """The event names a subscription may list under ``version`` (A23, A40)."""
    current = list(_SPEC["webhook_events"])
    if in_force(6, version):
        return current
    return [_RENAMED_FROM.get(e, e) for e in current if e not in _ADDED_EVENTS]


def renamed_events(version: str) -> dict[str, str]:
    """Names corrected in 1.2.0 that a subscription under ``version`` is told to rename."""
    return {old: new for new, old in _RENAMED_FROM.items()} if in_force(6, version) else {}


def webhook_name(event_type: str, version: str) -> str | None:
    """The name an event (by its 1.2.0 name) has for a subscription pinned to ``version``, or
    None when that version has no such event (card.closed under 1.1.0: a close sends nothing)."""
    if in_force(6, version):
        return event_type
    if event_type in _ADDED_EVENTS:
        return None
    return _RENAMED_FROM.get(event_type, event_type)


def webhook_deprecated(event_type: str, version: str) -> bool:
    """Whether a delivery of ``event_type`` carries ``Deprecation`` (A38): only from 1.2.0."""
    return in_force(6, version) and event_type in _DEPRECATED_EVENTS


# --- change 7: P2P header information ---------------------------------------------------------------


def p2p_role_header(version: str) -> bool:
    """Whether P2P answers carry the role header (A18); the body's ``viewer_role`` is in both."""
    return in_force(7, version)


# --- change 8: Refer a Friend removed --------------------------------------------------------------

REFER_A_FRIEND_PATHS: list[str] = list(register.value("A66")["paths"])


def refer_a_friend_removed(version: str) -> bool:
    """Removed in 1.2.0 (A29); under 1.1.0 its paths answer (A66)."""
    return in_force(8, version)


# --- the contract of each version ------------------------------------------------------------------


#: The card close, whose summary says what its version takes (change 2).
_CLOSE = BY_KEY["close_card"]
#: The operations only 1.1.0 has, left out of 1.2.0's document (changes 5 and 8), and their schemas.
PREVIOUS_ONLY = (*(e["path"] for e in _SPEC["removed_endpoints"] if e["path"]), *REFER_A_FRIEND_PATHS)
PREVIOUS_ONLY_SCHEMAS = ("EmptyBody", "SavingsCloseOut", "ReferralCodeOut", "ReferralCreate", "ReferralOut")


def document(full: dict[str, Any], version: str) -> dict[str, Any]:
    """The OpenAPI document of ``version``, from the document of every route (``full``)."""
    doc = copy.deepcopy(full)
    paths, schemas = doc["paths"], doc["components"]["schemas"]
    if version == CURRENT:
        for path in PREVIOUS_ONLY:
            paths.pop(path, None)
        for name in PREVIOUS_ONLY_SCHEMAS:
            schemas.pop(name, None)
        return doc
    doc["info"]["version"] = version
    doc["info"]["description"] = doc["info"]["description"].replace(CURRENT, version) + (
        f" {version} is the kit's name for the version before {CURRENT} (the spec names none), and "
        "this document is the kit's reconstruction of it: only what the spec's change list says "
        f"{CURRENT} changed is the spec's; everything else of {version} is the register's choice "
        "(A27, A65, A66)."
    )
    if not token_endpoint_exists(version):  # change 1
        paths.pop(_SPEC["deprecated_endpoints"][0]["replaced_by"].split(" ", 1)[1], None)
    if not legacy_deprecated(version):
        for operation in paths[_SPEC["deprecated_endpoints"][0]["path"]].values():
            operation.pop("deprecated", None)
            operation["responses"].pop("410", None)
            for response in operation["responses"].values():
                for name in ("Deprecation", "Link"):
                    response.get("headers", {}).pop(name, None)
            operation["summary"] = (
                "Partner access token (the token endpoint of 1.1.0)"
                if "requestBody" in operation
                else "Revokes the bearer token"
            )
    if not close_takes_reason(version):  # change 2
        schemas["CardClose"]["properties"] = {}
        card = schemas["CardOut"]
        for name in HIDDEN_CARD_FIELDS:
            card["properties"].pop(name, None)
            if name in card.get("required", []):
                card["required"].remove(name)
        paths[_CLOSE.path][_CLOSE.methods[0].lower()]["summary"] = close_summary(version)
    schemas["CardCreate"]["properties"]["type"]["enum"] = card_types(version)  # change 3
    if inbound_event_types(version) is None:  # change 4
        schemas["EventCreate"]["properties"]["event_type"].pop("enum", None)
    schemas["SubscriptionCreate"]["properties"]["events"]["items"]["enum"] = webhook_events(version)  # 6
    if not p2p_role_header(version):  # change 7
        for operations in paths.values():  # only the P2P operations' answers declare it
            for operation in operations.values():
                for response in operation["responses"].values():
                    response.get("headers", {}).pop(ROLE, None)
    return doc
