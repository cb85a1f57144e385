"""A partner request on its way through the checks, as a route's handler gets it: the
:class:`Call` API of steps 6-14 of the order of checks (``kit.sim.pipeline``), and the
:class:`RouteReply` a handler answers.

    >>> def handle(call: Call) -> RouteReply:  # doctest: +SKIP
    ...     card = call.find_card(card_id)  # 7
    ...     call.require_bound_to_account(call.find_account(card.account_id))  # 8
    ...     return RouteReply(200, CardOut.wire(card))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from starlette.requests import Request

from kit import register
from kit._operations import Operation, request_line
from kit._pii import pii_path
from kit.sim import versions
from kit.sim.asgi import decode_json
from kit.sim.crypto import CONTENT_ENCRYPTION, CryptoError, SimKeys
from kit.sim.headers import SESSION_ID
from kit.sim.problems import Problem, not_found, pointer, validation_problem
from kit.sim.runtime import Sim
from kit.sim.schema import Enums, M, parse_model, parse_plaintext
from kit.sim.state import Session
from kit.sim.table import operation_of

if TYPE_CHECKING:
    from kit.sim.records import Account, Card, Person

MAX_JWE = int(register.value("A33")["max_jwe_bytes"])
ENCRYPTED_DATA_DETAIL = (
    "The encrypted data could not be used. Encrypt with a key from "
    f"{request_line('init_data')}: its kid and alg, enc "
    f"{CONTENT_ENCRYPTION}, no other header parameters."
)
R = TypeVar("R")


class RouteReply(NamedTuple):
    """What a handler answers: status, JSON body (or its compact encoding, ``bytes``, as
    :func:`~kit.sim.asgi.encode_json` makes it) and extra headers."""

    status: int
    body: Any = None
    headers: Mapping[str, str] = MappingProxyType({})
    #: The body carries a clear token: an idempotency record keeps it sealed (``kit.sim.atrest``).
    sealed: bool = False


class Call:
    """One partner request on its way through the checks, as a route's handler gets it."""

    def __init__(self, sim: Sim, request: Request, partner: str, body: Any) -> None:
        self.sim = sim
        self.state = sim.state
        self.request = request
        self.partner = partner
        self.body = body
        #: The session sent in ``svc-session-id`` (step 5), and the one the answer leaves in force.
        self.session: Session | None = None
        self.session_in_force: Session | None = None
        self.assumptions: set[str] = request.scope["state"]["assumptions"]  # ServiceHeaders' set
        #: JWEs decrypted ahead, off the event loop (see ``decrypt_ahead``), by the keys used.
        self.decrypted: tuple[SimKeys | None, dict[str, bytes | CryptoError]] = (None, {})

    @property
    def now(self) -> datetime:
        return self.state.now

    @property
    def version(self) -> str:
        """The API version serving this request (step 0, ``kit.sim.versions``; A27)."""
        return versions.of(self.request.state)

    def uses(self, *assumptions: str) -> None:
        """Name register entries in this answer's ``svc-assumptions`` (what shaped it)."""
        self.assumptions.update(assumptions)

    # 6. session type
    def require_session(self, *types: str) -> Session:
        """The session, which must be one of ``types`` (A43): else 401 or 403."""
        self.uses("A43")
        if self.session is None:
            raise Problem(
                401,
                "session-required",
                f"This endpoint needs a session of type {' or '.join(types)} in the "
                f"{SESSION_ID} header; create one with {request_line('create_session')}.",
            )
        if self.session.session_type not in types:
            raise Problem(
                403,
                "session-type-not-allowed",
                f"This endpoint needs a session of type {' or '.join(types)}; "
                f"promote the session or create one of that type.",
                allowed=list(types),
            )
        return self.session

    def require_rule5_session(self) -> None:
        """Step 6 on card and event routes: a session, where a choice overlay requires one where
        rule 5 says "should" (A63); by default none is needed (the partner token suffices)."""
        if self.sim.personality.require_session:
            self.uses("A63")
            self.require_session("account", "person")

    # 7. the resource exists (for this partner: another partner's is not there, A30)
    def find_account(self, account_id: str) -> Account:
        return self._found("account", "A10", self.state.account(self.partner, account_id))

    def find_person(self, person_id: str) -> Person:
        return self._found("person", "A11", self.state.person(self.partner, person_id))

    def find_card(self, card_id: str) -> Card:
        return self._found("card", "A35", self.state.card(self.partner, card_id))

    @staticmethod
    def _found(resource: str, entry: str, record: R | None) -> R:
        """``record``, or 404 ``<resource>-not-found`` (A30 and the resource's ``entry``)."""
        if record is None:
            raise not_found(resource, "A30", entry)
        return record

    # 8. the session is bound to it
    def require_bound_to_account(self, account: Account) -> None:
        """The session (when one was sent) must be bound to ``account`` (A31)."""
        self.uses("A31")
        if self.session is not None and self._bound_account() != account.account_id:
            raise Problem(
                403,
                "session-not-bound",
                "The session is not bound to this account; use a session of this account or "
                "of one of its persons.",
            )

    def require_bound_to_person(self, person: Person) -> None:
        """An account session of the person's account, or the person's own session (A31)."""
        self.uses("A31")
        s = self.session
        ok = s is not None and (
            (s.session_type == "account" and s.account_id == person.account_id)
            or (s.session_type == "person" and s.person_id == person.person_id)
        )
        if not ok:
            raise Problem(
                403,
                "session-not-bound",
                "The session is not bound to this person; use an account session of the "
                "person's account or the person's own session.",
            )

    def bound_account(self, account_id: str) -> Account:
        """Steps 7 and 8 for a request about an account: it exists and the session is bound to it."""
        account = self.find_account(account_id)
        self.require_bound_to_account(account)
        return account

    def _bound_account(self) -> str | None:
        """The account the session is bound to (a person session covers its person's account)."""
        s = self.session
        if s is None:
            return None
        if s.session_type == "account":
            return s.account_id
        if s.session_type == "person" and s.person_id is not None:
            person = self.state.persons.get(s.person_id)
            return person.account_id if person else None
        return None

    # 9. no clear-text PII
    def reject_clear_pii(self) -> None:
        """422 ``pii-must-be-encrypted`` for a field named as personal data, in any spelling,
        at any depth of the body (A11; the rule is ``kit._pii``'s)."""
        found = pii_path(self.body)
        if found is not None:
            raise Problem(
                422,
                "pii-must-be-encrypted",
                "Personal data is accepted only encrypted; send it inside an encrypted_* field.",
                errors=[{"field": pointer(found), "message": "personal data must be encrypted"}],
                assumptions=("A11",),
            )

    def body_as(self, model: type[M], enums: Enums | None = None, *, uses: Iterable[str] = ()) -> M:
        """Steps 9 and 10: no clear-text PII in the body, then the body as ``model`` (:meth:`parse`)."""
        self.reject_clear_pii()
        return self.parse(model, enums, uses=uses)

    # 10. schema
    def parse(self, model: type[M], enums: Enums | None = None, *, uses: Iterable[str] = ()) -> M:
        """The body as ``model``; ``enums`` maps field → (code, allowed) (``kit.sim.schema``);
        ``uses`` are the register entries that chose the route's body shape."""
        self.uses(*uses)
        return parse_model(self.body, model, enums)

    # 11. decryption
    @property
    def operation(self) -> Operation:
        """The partner operation this request is served as (:func:`kit.sim.table.operation_of`)."""
        operation = operation_of(self.request.scope)
        if operation is None:
            raise LookupError("no declared endpoint serves this request")
        return operation

    @property
    def encrypted_member(self) -> str:
        """The body member this operation takes encrypted (the operations table's, which its
        body model declares: :func:`kit.sim.openapi.declare`)."""
        return self.operation.encrypted_member

    def plaintext_problem(self, message: str) -> Problem:
        """422 ``validation-error`` on the encrypted member, ``message`` naming what inside it
        (a JSON Pointer into the plaintext, never a value)."""
        return validation_problem([{"field": pointer([self.encrypted_member]), "message": message}])

    def decrypt(self, value: str) -> dict[str, Any]:
        """The JSON object encrypted in the encrypted member's ``value`` (the JWE rules of
        A04), or 400 ``invalid-encrypted-data``."""
        self.uses("A04")
        try:
            if len(value) > MAX_JWE:  # refused before any decryption work (A33)
                self.uses("A33")
                raise CryptoError("too large")
            keys, ready = self.decrypted
            found = ready.get(value) if keys is self.state.keys else None
            if isinstance(found, CryptoError):
                raise found
            plaintext = found if found is not None else self.state.keys.decrypt(value)
        except CryptoError:
            raise Problem(400, "invalid-encrypted-data", ENCRYPTED_DATA_DETAIL) from None
        try:
            data = decode_json(plaintext, constants=True)
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            raise self.plaintext_problem("the decrypted content must be a JSON object")
        return self.sim.payloads.open(data)  # its names are the dialect's (A68)

    # 12. the plaintext's schema
    def parse_plaintext(
        self, model: type[M], data: dict[str, Any], enums: Enums | None = None, *, uses: Iterable[str] = ()
    ) -> M:
        """The encrypted member's decrypted ``data`` as ``model``; ``uses`` as for :meth:`parse`."""
        self.uses(*uses)
        return parse_plaintext(self.encrypted_member, model, data, enums)

    def decrypt_as(self, value: str, model: type[M], *, uses: Iterable[str] = ()) -> M:
        """Steps 11 and 12: the encrypted member's JWE ``value`` decrypted, as ``model``."""
        return self.parse_plaintext(model, self.decrypt(value), uses=uses)

    def sealed_answer(self, key: Any, payload: Any) -> dict[str, str]:
        """The answer member this operation sends encrypted (the operations table's), holding
        ``payload`` sealed to the device key ``key``."""
        return {self.operation.encrypted_answer_member: self.sim.payloads.seal_to(key, payload)}

    # 13. state and 14. business rules: the handler's own; then it changes state, e.g.:
    def emit(self, event_type: str, data: dict[str, Any]) -> str:
        """Send a webhook event to the partner's subscriptions; returns its ``evt_`` id."""
        return self.sim.emit(self.partner, event_type, data)
