"""The client's one adapter of a dialect (:mod:`kit._dialect`): how a client spells the wire.

A client speaks the kit's own spelling inside (resources, models, history's columns, the
contract); :class:`Spelling` turns a call into the server's spelling as it leaves (the path of
an A67 operation, header names, JSON member names and session values) and an answer back as it
comes in, in one layer of the transport (:meth:`kit._transport.Transport._spelled`). It also
answers what the rest of the client asks of the dialect: the token request's client
authentication (A01, :attr:`Spelling.client_auth`), the partner token's header and scheme (A02,
:attr:`Spelling.bearer`), the kit's codes a wire code stands for (A64, :meth:`Spelling.kit_codes`:
whether an answer refuses the partner token), the header names (:attr:`Spelling.names`), and
the names inside an encrypted payload (:meth:`Spelling.seal` before encryption,
:meth:`Spelling.open` after decryption). With the simulator's own dialect every method is the
identity. No other module of the client core calls the dialect
(``tests/test_dialect_adapters_client.py``).

The contract check reads the answer through :meth:`Spelling.contract_view`: the server's header
names and body back in the kit's spelling, checked against the kit's document — the same check
as the wire against the dialect's document (:meth:`kit._dialect.Dialect.document`), whose
spelling is a renaming of the kit's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from kit._contract import HEADERS as CONTRACT_HEADERS
from kit._contract import Contract
from kit._dialect import DEFAULT, Dialect
from kit._drift import Drift
from kit._headers import HEADERS, HeaderNames
from kit._outgoing import Outgoing
from kit.errors import ApiError

__all__ = ["PLAIN", "Spelling"]


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
        self._dialect = dialect
        #: The header names this client writes and reads (the register's, or its dialect's).
        self.names = HeaderNames.of(dialect)
        #: Whether the dialect is the simulator's own: nothing to translate.
        self.plain = dialect.default
        #: How the server takes the client's credentials (A01): ``"post"`` asks for them in the form.
        self.client_auth = str(dialect.chosen("A01", "client_auth"))
        #: The partner token's header and scheme on partner calls (A02).
        self.bearer = (self.names.authorization, str(dialect.chosen("A02", "scheme")))
        #: the server's header name (lower case) → the kit's, for the headers a dialect renames
        self._ours = dialect.headers_from_wire

    @classmethod
    def of(cls, dialect: Dialect) -> Spelling:
        """The spelling of ``dialect`` (:data:`PLAIN`, made once, for the simulator's own)."""
        return PLAIN if dialect is DEFAULT else cls(dialect)

    def kit_codes(self, code: str) -> tuple[str, ...]:
        """The kit's problem codes the wire's ``code`` stands for (A64: several when the
        dialect sends one code for many; the code itself when it renames none)."""
        return self._dialect.codes_from_wire(code)

    def seal(self, payload: Any) -> Any:
        """A payload of the kit's spelling with its member names the wire's (A68), before it is
        encrypted to the server."""
        return self._dialect.to_wire(payload)

    def open(self, payload: Any) -> Any:
        """A payload decrypted from the server with its member names the kit's (A68)."""
        return self._dialect.from_wire(payload)

    def path(self, outgoing: Outgoing) -> str:
        """The path on the wire: an A67 operation's at the dialect's path, the others as built."""
        key = outgoing.operation.key
        if self.plain or key not in self._dialect.paths:
            return outgoing.path
        return outgoing.path_at(self._dialect.paths[key])

    def kit_path(self, method: str, path: str) -> str:
        """A path seen on the wire (``/v2/payment-cards/card_1``) at the kit's own path when the
        dialect moved its operation (A67), its parameters carried in order; else ``path``."""
        return path if self.plain else self._dialect.path_to_kit(method, path)

    def body_out(self, body: Any) -> Any:
        """A JSON body of the kit's spelling, spelled the server's way."""
        return self._dialect.body_to_wire(body)

    def body_in(self, body: Any) -> Any:
        """A JSON answer in the kit's spelling."""
        return self._dialect.body_from_wire(body)

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
            body = {**body, "code": self._dialect.code_from_wire(body["code"])}
        return headers, body

    def checked(
        self,
        method: str,
        path: str,
        status: int,
        raw: Iterable[tuple[bytes, bytes]],
        wire_body: Any,
        *,
        has_content: bool,
    ) -> tuple[list[Drift], Contract]:
        """An answer (``raw``: its headers as httpx lists them; ``wire_body``: its parsed body,
        both as they came) checked by the contract of the version it announces, in the kit's
        spelling (``path``: the kit's path of the call): its drift rows (:meth:`named`) and the
        contract that checked it. The client's transport and ``kit proxy`` both ask this."""
        headers, body = self.contract_view(raw, wire_body, CONTRACT_HEADERS)
        contract = Contract.for_version(headers.get(HEADERS.api_version))  # named the kit's way
        rows = contract.check(method, path, status, headers, body, has_content=has_content)
        return self.named(rows, wire_body), contract

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
        if error.status not in (404, 405) or key not in self._dialect.paths:
            return error
        ours = self.kit_codes(error.code)
        if on_sim and not _ROUTE_CODES & set(ours):
            return error
        origin = "the simulator's choice" if self.plain else "this dialect file's"
        error.hint = (
            f"check the id, or the path: {outgoing.method} {path} is A67 paths.{key}, {origin}; "
            "if this server uses another path, give it in a dialect file (kit choices template, "
            "then kit.connect(..., choices=FILE))"
        )
        return error


#: The simulator's own spelling (:data:`kit._dialect.DEFAULT`): every method the identity.
PLAIN = Spelling(DEFAULT)
