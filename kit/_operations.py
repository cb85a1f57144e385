"""The partner operations: one table of the wire's vocabulary, each operation's key, methods and
path template with what it rests on.

Every other table of operations reads this one: the client's calls (``kit._outgoing``), the
simulator's routes (``kit.sim.routes``), the contract check's bases (``kit._contract``), the
dialect's operations (``kit._dialect``), the lab's fault profiles and the OpenAPI document's
session routes. Nothing else spells a path of the wire.

A row is derived once, when this module is imported, from the spec's endpoint rows
(``data/spec.toml``: ``endpoint.1``-``endpoint.8`` give a method and a path) and from the
register (A67: the paths and methods of the operations the spec does not show; A66: the
Refer-a-Friend paths of 1.1.0). What stays written here is what neither says: each operation's
key, the route module that serves it, the register entry that chose the rest of it (statuses,
fields, body shape), the resource it answers with, and the members it sends or answers as
compact JWEs, which the register's entries name in words (A05, A08, A11, A12, A26). The
simulator's body models declare the same members: a route whose models say otherwise is
refused when it is declared (``kit.sim.openapi.declare``).

    >>> BY_KEY["close_card"].methods, BY_KEY["close_card"].path, BY_KEY["close_card"].basis
    (('POST',), '/cards/{card_id}/close', 'endpoint.6')
    >>> BY_KEY["create_card"].path, BY_KEY["create_card"].basis, BY_KEY["create_card"].entry
    ('/accounts/{account_id}/cards', 'A67', 'A35')
    >>> BY_KEY["savings_close"].removed_in, BY_KEY["legacy_revoke"].deprecated_in
    ('1.2.0', '1.2.0')
    >>> BY_KEY["create_person"].encrypted, BY_KEY["kyc_questions"].encrypted_answer
    (('encrypted_pii',), ('encrypted_questions',))

This module is in the base room: it imports only :mod:`kit.register`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, NamedTuple

from kit import register

__all__ = ["ALL_METHODS", "BY_KEY", "CHOSEN", "MODULES", "OPERATIONS", "Operation", "request_line", "served"]

#: Every method a request can name.
ALL_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE")


class Operation(NamedTuple):
    """A partner operation: its ``key`` (one for the client and the simulator), the route
    ``module`` serving it, its ``methods`` and its default ``path`` template (``{name}`` for each
    parameter). ``rest``: it takes the methods of its path that no other operation on the same
    template takes (a removed or deprecated path's own 404/405), and is no operation a client
    calls.

    ``basis``: what gives its path — the spec's statement (``"endpoint.6"``) or the register
    entry that chose it (``"A67"``, ``"A66"``); ``entry``: the register entry that chose the
    rest (statuses, fields, body shape); ``resource``: what its answer represents (A62's
    ``resource.field`` names), ``""`` for none; ``removed_in`` / ``deprecated_in``: the version
    the spec says removed or deprecated it, ``""`` when it did not. ``encrypted``: the members
    of its JSON body that hold a compact JWE to the server's key (the client seals them, the
    simulator decrypts only these); ``encrypted_answer``: those of its answer, a JWE to the
    device's key.
    """

    key: str
    module: str
    methods: tuple[str, ...]
    path: str
    rest: bool = False
    basis: str = ""
    entry: str = ""
    resource: str = ""
    removed_in: str = ""
    deprecated_in: str = ""
    encrypted: tuple[str, ...] = ()
    encrypted_answer: tuple[str, ...] = ()

    @property
    def encrypted_member(self) -> str:
        """The one member of its body sent encrypted (an operation that sends one sends one)."""
        (member,) = self.encrypted
        return member

    @property
    def encrypted_answer_member(self) -> str:
        """The one member of its answer sent encrypted (an operation that answers one answers one)."""
        (member,) = self.encrypted_answer
        return member

    @property
    def called(self) -> bool:
        """Whether a client of 1.2.0 calls it: served, neither a rest nor removed nor deprecated."""
        return not (self.rest or self.removed_in or self.deprecated_in)


def _statements() -> dict[str, dict[str, Any]]:
    """The spec's endpoint statements by id, each with the facts the register derives
    (``removed_in``, ``deprecated_in``) and, for a row, its ``method`` and ``path``."""
    found: dict[str, dict[str, Any]] = {}
    for endpoint in register.fact("endpoint"):
        found[endpoint["id"]] = {"method": endpoint["method"], "path": endpoint["path"]}
    for removed in register.fact("removed_endpoints"):
        found.setdefault(removed["id"], {})["removed_in"] = removed["removed_in"]
    for deprecated in register.fact("deprecated_endpoints"):
        found.setdefault(deprecated["id"], {})["deprecated_in"] = deprecated["deprecated_in"]
    return found


_SPEC = _statements()
_A67: dict[str, dict[str, str]] = register.value("A67")
_A66_PATHS: list[str] = list(register.value("A66")["paths"])
#: The removed endpoints the spec shows no path of: Refer a Friend's (endpoint.10), whose paths
#: A66 chose.
(_REFERRALS_REMOVED,) = [e["id"] for e in register.fact("removed_endpoints") if not e["path"]]

# What neither the spec nor the register says: (key, module, basis, entry, resource), in the
# order of the OpenAPI document. The basis gives the path: a spec row's, A67's by key, or A66's
# by position (the referral code, then the referrals).
_ROWS: tuple[tuple[str, str, str, str, str], ...] = (
    ("access_token", "oauth", "endpoint.1", "A01", ""),
    ("legacy_access_token", "oauth", "endpoint.2", "A03", ""),
    ("legacy_revoke", "oauth", "endpoint.3", "A03", ""),
    ("init_data", "sessions", "endpoint.4", "A04", ""),
    ("create_session", "sessions", "endpoint.5", "A05", ""),
    ("end_session", "sessions", "A67", "A34", ""),
    ("create_account", "onboarding", "A67", "A10", "account"),
    ("create_person", "onboarding", "A67", "A11", ""),
    ("kyc_questions", "onboarding", "A67", "A12", ""),
    ("kyc_answers", "onboarding", "A67", "A12", ""),
    ("create_card", "cards", "A67", "A35", "card"),
    ("get_card", "cards", "A67", "A35", "card"),
    ("close_card", "cards", "endpoint.6", "A16", "card"),
    ("send_event", "events", "endpoint.7", "A17", "event"),
    ("create_transfer", "p2p", "A67", "A36", "transfer"),
    ("get_transfer", "p2p", "A67", "A36", "transfer"),
    ("subscribe_webhooks", "webhooks", "A67", "A23", ""),
    ("webhook_keys", "webhooks", "A67", "A24", ""),
    ("list_document_requests", "documents", "A67", "A26", "document_request"),
    ("submit_document", "documents", "A67", "A26", "document_request"),
    ("savings_close", "removed", "endpoint.8", "A29", ""),
    ("referral_code", "removed", "A66", "A66", ""),
    ("create_referral", "removed", "A66", "A66", ""),
)
#: The members sent as compact JWEs, by operation: (in its JSON body, in its answer), each as
#: its register entry words it (A05 and A08 for a session, A11, A12, A26).
_ENCRYPTED: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "create_session": (("encrypted_data",), ("encrypted_session_token",)),
    "create_person": (("encrypted_pii",), ()),
    "kyc_questions": ((), ("encrypted_questions",)),
    "kyc_answers": (("encrypted_answers",), ()),
    "submit_document": (("encrypted_document",), ()),
}
#: The Refer-a-Friend operations' methods: A66's words (its value holds only the paths).
_A66_METHODS = {"referral_code": "GET", "create_referral": "POST"}
#: The operations that take the rest of another's path (its 404/405), each placed after the
#: row it names: (key, the operation whose path it takes, every method or only the others, after).
_RESTS = (
    ("legacy_other_methods", "legacy_revoke", "others", "legacy_revoke"),
    ("savings_close_other", "savings_close", "all", "savings_close"),
    ("referral_code_other", "referral_code", "all", "create_referral"),
    ("referrals_other", "create_referral", "all", "referral_code_other"),
)


def _row(key: str, module: str, basis: str, entry: str, resource: str) -> Operation:
    if basis == "A67":
        method, path = _A67["methods"][key], _A67["paths"][key]
    elif basis == "A66":
        method, path = _A66_METHODS[key], _A66_PATHS[list(_A66_METHODS).index(key)]
    else:
        method, path = _SPEC[basis]["method"], _SPEC[basis]["path"]
    facts = _SPEC.get(_REFERRALS_REMOVED if basis == "A66" else basis, {})
    encrypted, encrypted_answer = _ENCRYPTED.get(key, ((), ()))
    return Operation(
        key,
        module,
        (method,),
        path,
        basis=basis,
        entry=entry,
        resource=resource,
        removed_in=facts.get("removed_in", ""),
        deprecated_in=facts.get("deprecated_in", ""),
        encrypted=encrypted,
        encrypted_answer=encrypted_answer,
    )


def _table() -> tuple[Operation, ...]:
    rows = [_row(*row) for row in _ROWS]
    for key, like, takes, after in _RESTS:
        of = next(op for op in rows if op.key == like)
        taken = {m for op in rows if op.path == of.path for m in op.methods}
        methods = ALL_METHODS if takes == "all" else tuple(sorted(set(ALL_METHODS) - taken))
        rest = Operation(
            key,
            of.module,
            methods,
            of.path,
            rest=True,
            basis=of.basis,
            entry=of.entry,
            removed_in=of.removed_in,
            deprecated_in=of.deprecated_in,
        )
        rows.insert(next(i for i, op in enumerate(rows) if op.key == after) + 1, rest)
    return tuple(rows)


#: The partner operations, in the order of the OpenAPI document.
OPERATIONS: tuple[Operation, ...] = _table()
#: The operations by key.
BY_KEY: dict[str, Operation] = {op.key: op for op in OPERATIONS}
#: The partner route modules, in the order of the table.
MODULES: tuple[str, ...] = tuple(dict.fromkeys(op.module for op in OPERATIONS))
#: The operations whose path the register chose (A67) and a dialect may re-choose, in the
#: register's order.
CHOSEN: tuple[str, ...] = tuple(_A67["paths"])


def request_line(key: str) -> str:
    """Operation ``key``'s method and default path, as a message names it.

    >>> request_line("create_session")
    'POST /sessions'
    """
    operation = BY_KEY[key]
    return f"{operation.methods[0]} {operation.path}"


def served(
    paths: Mapping[str, str] | None = None, *, without: Collection[str] = ()
) -> frozenset[tuple[str, str]]:
    """Every ``(METHOD, path template)`` an operation serves, with ``paths`` ({key: path}, a
    personality's or a dialect's) moving some; the rests left out (they answer only refusals),
    and the operations of the route modules named in ``without``.

    >>> ("POST", "/v2/cards") in served({"create_card": "/v2/cards"})
    True
    >>> ("POST", "/accounts/{account_id}/cards") in served({"create_card": "/v2/cards"})
    False
    """
    moved = dict(paths or {})
    return frozenset(
        (method, moved.get(op.key, op.path))
        for op in OPERATIONS
        if not op.rest and op.module not in without
        for method in op.methods
    )
