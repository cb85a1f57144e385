"""``api.sim``: the simulator's control plane over HTTP (``/_sim``), sim profile only."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from kit import _env as env
from kit._headers import STATE_VERSION
from kit._outgoing import OPERATIONS, Outgoing
from kit._resources._base import Resource, seg
from kit._sensitive import MASK, Sensitive
from kit._transport import Reply
from kit.models import DocumentRequest, Money, Persona, parse_time

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SimControl", "Snapshot"]

_SNAPSHOT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Snapshot:
    """The simulator's whole state (a SQLite database, ``kit.sim.statefile``): tokens and
    sessions included, never a client secret. As sensitive as the server's memory: its repr
    shows only its size, :meth:`save` writes it owner-only.

        >>> snap = api.sim.snapshot()  # doctest: +SKIP
        >>> snap.save("bug-1234.kitstate")  # doctest: +SKIP
        >>> api.sim.restore(Snapshot.load("bug-1234.kitstate"))  # doctest: +SKIP
    """

    data: bytes = field(repr=False)
    version: str | None = None

    def __repr__(self) -> str:
        return f"<Snapshot of the simulator state: {len(self.data)} bytes, format version {self.version}>"

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write it to a new file, readable by its owner only (FileExistsError if it exists);
        ``kit serve --state FILE --restore PATH`` starts a server from it."""
        fd = os.open(os.fspath(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(self.data)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Snapshot:
        with open(os.fspath(path), "rb") as f:
            return cls(f.read())


class SimControl(Resource):
    """Time, faults, scenario set-up and inspection of the embedded simulator."""

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        return self._requestor.call(method, path, partner=False, session=None, **kwargs).body

    def health(self) -> dict[str, Any]:
        """``{"status": "ok", "api_version"}``."""
        return dict(self._call("GET", "/_sim/health") or {})

    def reset(self, seed: int | None = None) -> int | None:
        """Back to the seeded start: all tokens and sessions revoked (the client's session is
        dropped; its partner token is re-fetched on the next 401, by design of the auth flow).
        Returns the seed the simulator now runs from, as it answered (``None`` if it did not say).
        """
        body = self._call("POST", "/_sim/reset", json={} if seed is None else {"seed": seed}) or {}
        self._requestor.reset()
        answered = body.get("seed") if isinstance(body, dict) else None
        return answered if isinstance(answered, int) else None

    def clock(self) -> datetime:
        """The simulator's current time (frozen until advanced)."""
        now = parse_time((self._call("GET", "/_sim/clock") or {}).get("now"))
        assert now is not None
        return now

    def advance(self, seconds: int) -> datetime:
        """Move the simulator's clock forward; returns the new time."""
        body = self._call("POST", "/_sim/clock/advance", json={"seconds": int(seconds)}) or {}
        now = parse_time(body.get("now"))
        assert now is not None
        return now

    def advance_to(self, when: datetime | date) -> datetime:
        """Move the simulator's clock forward to ``when`` (an aware datetime; a date means its
        start, 00:00Z); returns the new time. ``advance_to(api.sim.clock())`` moves nothing but,
        as ``advance(0)``, lets deliveries in flight finish first.

        Example::

            >>> api.sim.advance_to(card.expires_on + timedelta(days=1))  # doctest: +SKIP

        Raises:
            ValueError: ``when`` is naive, or before the simulator's time (it never goes back).
        """
        if not isinstance(when, datetime):
            when = datetime.combine(when, time(0), tzinfo=UTC)
        if when.tzinfo is None:
            raise ValueError("when must be timezone-aware")
        seconds = math.ceil((when - self.clock()).total_seconds())
        if seconds < 0:
            raise ValueError(f"the simulator's clock never goes back: {when.isoformat()} is past")
        return self.advance(seconds)

    def _raw(self, method: str, path: str, content: bytes | None = None) -> Reply:
        # Snapshots are binary and large: a longer time-out; through the client's own
        # transport, so the history and the wire log (which describes the body, never keeps
        # it: it holds tokens and sessions) see them as any call.
        return self._requestor.control_call(
            method, path, content=content, content_type=env.SNAPSHOT_MEDIA_TYPE, timeout=_SNAPSHOT_TIMEOUT_S
        )

    def snapshot(self) -> Snapshot:
        """The simulator's whole state now (``GET /_sim/snapshot``); :meth:`restore` goes back to it."""
        reply = self._raw("GET", "/_sim/snapshot")
        return Snapshot(reply.content, reply.headers.get(STATE_VERSION))

    def restore(self, snapshot: Snapshot | bytes | str | os.PathLike[str]) -> None:
        """Replace the simulator's whole state with a snapshot's (``POST /_sim/restore``): a
        :class:`Snapshot`, its bytes, or the path of a saved one. Its tokens and sessions work
        again. Raises SnapshotInvalid (nothing changed) for what is not a snapshot of this kit's
        format."""
        if isinstance(snapshot, str | os.PathLike):
            snapshot = Snapshot.load(snapshot)
        data = snapshot.data if isinstance(snapshot, Snapshot) else bytes(snapshot)
        self._raw("POST", "/_sim/restore", data)  # this client's session stays: the snapshot's may hold it

    def _personas_raw(self) -> list[dict[str, Any]]:
        return list((self._call("GET", "/_sim/personas") or {}).get("personas") or [])

    def personas(self) -> pd.DataFrame:
        """The synthetic people, PII columns masked (use :meth:`persona` to onboard one)."""
        import pandas as pd

        rows = []
        for p in self._personas_raw():
            device = p.get("device") or {}
            rows.append(
                {
                    "persona_id": p.get("persona_id"),
                    **{name: MASK for name in Persona.PII_FIELDS},
                    "platform": device.get("platform"),
                    "model": device.get("model"),
                }
            )
        columns = ["persona_id", *Persona.PII_FIELDS, "platform", "model"]
        return pd.DataFrame(rows, columns=columns)

    def persona(self, which: int | str = 0) -> Persona:
        """One persona (by index or ``persona_id``) with PII wrapped in Sensitive.

        Example::

            >>> p = api.sim.persona(0)                        # doctest: +SKIP
            >>> api.persons.create(acc_id, **p.pii)           # doctest: +SKIP
        """
        raw = self._personas_raw()
        if isinstance(which, int):
            chosen = raw[which]
        else:
            matches = [p for p in raw if p.get("persona_id") == which]
            if not matches:
                raise KeyError(f"no persona {which!r}")
            chosen = matches[0]
        return Persona.from_wire(chosen)

    def kyc_answers(self, person_id: str) -> Sensitive[list[dict[str, str]]]:
        """The right KYC answers for a person (the sandbox's "test credentials"), wrapped."""
        body = self._call("GET", f"/_sim/persons/{seg(person_id)}/kyc_answers") or {}
        return Sensitive(list(body.get("answers") or []), label="kyc_answers")

    def create_document_request(self, person_id: str) -> DocumentRequest:
        """Create a document request for a person (emits ``document_request.created``)."""
        body = self._call("POST", f"/_sim/persons/{seg(person_id)}/document_requests") or {}
        return DocumentRequest.from_wire(body)

    def fund(self, account_id: str, amount: Money | Decimal | str | int) -> Money:
        """Add money to an account; returns the new balance."""
        money = Money.parse(amount)
        body = (
            self._call("POST", f"/_sim/accounts/{seg(account_id)}/fund", json={"amount": money.to_wire()})
            or {}
        )
        return Money.from_wire(body["balance"])

    def add_fault(
        self,
        method: str | None = None,
        path: str | None = None,
        *,
        operation: str | None = None,
        status: int | None = 503,
        rate: float = 1.0,
        times: int | None = None,
        when: str = "before_commit",
        retry_after: int | None = None,
        latency_ms: int | None = None,
    ) -> str:
        """Inject a fault on ``method path`` (a template such as ``/p2p/transfers``), or on
        ``operation`` (a key such as ``"create_transfer"``: its method, at the path this client
        speaks for it, a dialect's if it moved it). A method and path the simulator serves no
        operation at is refused (OperationNotServed).

        ``when="after_commit"``: the change is made, then the client is told ``status``.
        Returns the fault id.

        Raises:
            ValueError: neither ``operation`` nor both ``method`` and ``path``, or both; an
                unknown ``operation``.
        """
        if operation is not None:
            if method is not None or path is not None:
                raise ValueError("add_fault takes an operation or a method and path, not both")
            if operation not in OPERATIONS:
                raise ValueError(f"no operation {operation!r}; the operations: {', '.join(OPERATIONS)}")
            call = Outgoing(OPERATIONS[operation])
            method, path = call.method, self._requestor.transport.spelling.path(call)
        elif method is None or path is None:
            raise ValueError("add_fault takes an operation, or a method and a path")
        spec: dict[str, Any] = {
            "method": method,
            "path": path,
            "status": status,
            "rate": rate,
            "when": when,
        }
        for name, value in (("times", times), ("retry_after", retry_after), ("latency_ms", latency_ms)):
            if value is not None:
                spec[name] = value
        body = self._call("POST", "/_sim/faults", json=spec) or {}
        return str(body.get("fault_id"))

    def clear_faults(self) -> None:
        """Remove every injected fault."""
        self._call("DELETE", "/_sim/faults")

    def deliveries(self) -> pd.DataFrame:
        """Webhook deliveries as the simulator recorded them (one row per delivery)."""
        import pandas as pd

        rows = []
        for d in (self._call("GET", "/_sim/webhooks/deliveries") or {}).get("deliveries") or []:
            attempts = d.get("attempts") or []
            rows.append(
                {
                    "event_id": d.get("event_id"),
                    "type": d.get("type"),
                    "subscription_id": d.get("subscription_id"),
                    "status": d.get("status"),
                    "attempts": len(attempts),
                    "last_status_code": attempts[-1].get("status_code") if attempts else None,
                }
            )
        columns = ["event_id", "type", "subscription_id", "status", "attempts", "last_status_code"]
        return pd.DataFrame(rows, columns=columns)

    def ledger(self, what: str = "accounts") -> pd.DataFrame:
        """Balances (``what="accounts"``) or transfers (``what="transfers"``)."""
        import pandas as pd

        body = self._call("GET", "/_sim/ledger") or {}
        if what == "transfers":
            rows = [
                {
                    "transfer_id": t.get("transfer_id"),
                    "from_account_id": t.get("from_account_id"),
                    "to_person_id": t.get("to_person_id"),
                    "amount": Money.from_wire(t["amount"]).amount if t.get("amount") else None,
                    "currency": (t.get("amount") or {}).get("currency"),
                    "status": t.get("status"),
                }
                for t in body.get("transfers") or []
            ]
            cols = ["transfer_id", "from_account_id", "to_person_id", "amount", "currency", "status"]
            return pd.DataFrame(rows, columns=cols)
        rows = [
            {
                "account_id": a.get("account_id"),
                "balance": Money.from_wire(a["balance"]).amount,
                "currency": a["balance"].get("currency"),
            }
            for a in body.get("accounts") or []
        ]
        return pd.DataFrame(rows, columns=["account_id", "balance", "currency"])
