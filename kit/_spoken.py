"""The client's side of a dialect (:mod:`kit._dialect`): how the transport spells each call.

A client speaks the kit's own spelling inside (resources, models, history's columns, the
contract); :class:`Spelling` turns a call into the server's spelling as it leaves (the path of
an A67 operation, header names, JSON member names and session values) and an answer back as it
comes in. With the simulator's own dialect every method is the identity.

The contract check reads the answer through :meth:`Spelling.contract_view`: the server's header
names and body back in the kit's spelling, checked against the kit's document — the same check
as the wire against the dialect's document (:meth:`kit._dialect.Dialect.document`), whose
spelling is a renaming of the kit's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from kit._dialect import Dialect
from kit._drift import Drift
from kit._headers import HeaderNames
from kit._outgoing import Outgoing
from kit.errors import ApiError

__all__ = ["Spelling"]


def _plain(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def _keys(body: Any) -> set[str]:
    """Every member name in a JSON value, at any depth."""
    if isinstance(body, Mapping):
        return set(body) | {k for v in body.values() for k in _keys(v)}
    if isinstance(body, list):
        return {k for v in body for k in _keys(v)}
    return set()


#: The kit's codes for a route that is not there, or not for this method.
_ROUTE_CODES = frozenset({"not-found", "method-not-allowed"})


class Spelling:
    """How one client spells its calls (see the module docstring)."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.names = HeaderNames.of(dialect)
        self.plain = dialect.default
        #: the server's header name (lower case) → the kit's, for the headers a dialect renames
        self._ours = dialect.headers_from_wire

    def path(self, outgoing: Outgoing) -> str:
        """The path on the wire: an A67 operation's at the dialect's path, the others as built."""
        key = outgoing.operation.key
        if self.plain or key not in self.dialect.paths:
            return outgoing.path
        return outgoing.path_at(self.dialect.paths[key])

    def body_out(self, body: Any) -> Any:
        """A JSON body of the kit's spelling, spelled the server's way."""
        return self.dialect.body_to_wire(body)

    def body_in(self, body: Any) -> Any:
        """A JSON answer in the kit's spelling."""
        return self.dialect.body_from_wire(body)

    def contract_view(
        self, raw: Iterable[tuple[bytes, bytes]], body: Any, wanted: Collection[str]
    ) -> tuple[dict[str, str], Any]:
        """The ``wanted`` headers of an answer (``raw``: httpx's list; names lower case, in the
        kit's spelling) and its body in the kit's spelling, its problem code the kit's (the
        first it may stand for: A64)."""
        headers = {}
        for raw_name, raw_value in raw:  # one pass: each httpx lookup would scan them all
            name = raw_name.decode("latin-1").lower()
            name = self._ours.get(name, name)
            if name in wanted:
                headers[name] = raw_value.decode("latin-1")
        if self.plain:
            return headers, body
        body = self.body_in(body)
        if isinstance(body, Mapping) and isinstance(body.get("code"), str):
            body = {**body, "code": self.dialect.code_from_wire(body["code"])}
        return headers, body

    def named(self, rows: list[Drift], wire_body: Any) -> list[Drift]:
        """``rows`` with a required field found missing, but present in ``wire_body`` under
        another spelling (``accountId`` for ``account_id``), put down to the field names (A68):
        the server spells them otherwise, and a dialect file can say how."""
        if not any(row.kind == "body" and row.got == "missing" for row in rows):
            return rows  # the common case: nothing missing, no body to walk
        spelled = {_plain(k): k for k in _keys(wire_body)}
        out = []
        for row in rows:
            name = row.field.rsplit(".", 1)[-1]
            other = spelled.get(_plain(name)) if row.kind == "body" and row.got == "missing" else None
            if other is not None and other != name:
                expected = f"present as {name} (this answer has {other}: field names are A68's)"
                row = dataclasses.replace(row, expected=expected, basis="A68")
            out.append(row)
        return out

    def explain(self, error: ApiError, outgoing: Outgoing, path: str, on_sim: bool) -> ApiError:
        """``error`` with its hint naming the A67 key when an operation the spec does not show
        answered 404 or 405: the path may be this server's, not the simulator's. On the
        simulator only a route-level answer (``not-found``, ``method-not-allowed``) says so."""
        key = outgoing.operation.key
        if error.status not in (404, 405) or key not in self.dialect.paths:
            return error
        ours = self.dialect.codes_from_wire(error.code)
        if on_sim and not _ROUTE_CODES & set(ours):
            return error
        origin = "the simulator's choice" if self.plain else "this dialect file's"
        error.hint = (
            f"check the id, or the path: {outgoing.method} {path} is A67 paths.{key}, {origin}; "
            "if this server uses another path, give it in a dialect file (kit choices template, "
            "then kit.connect(..., choices=FILE))"
        )
        return error
