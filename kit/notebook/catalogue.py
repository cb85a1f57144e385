"""The error catalogue as a notebook shows it: one row per family of :mod:`kit.errors`.

A family is a class right under :class:`kit.errors.ApiError`: what a partner back end catches.
Each row names the statuses the simulator chose for the family's codes, how many codes it
holds, the register entries whose rules chose them (``RFC 6749`` for the token endpoints'
errors, which are that RFC's, not a register choice) and what a back end should do. The
families only the simulator answers (its control plane, its ``Host`` and ``Origin`` checks)
are listed apart: a partner's sandbox never sends them.

Example::

    >>> from kit.notebook import error_families
    >>> "ValidationError" in error_families().frame.index
    True
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kit import errors, register

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SIMULATOR_ONLY", "WHAT_TO_DO", "ErrorFamilies", "error_families", "family"]

#: Family → what a partner back end does with it.
WHAT_TO_DO = {
    "OAuthError": "fix the client id or secret (configuration); do not retry",
    "InvalidPartnerToken": "re-authenticate: the kit fetches a new token and repeats once",
    "SessionError": "open or promote the device's session again, then repeat",
    "InvalidEncryptedData": "encrypt again with fresh init data; a bug if it persists",
    "PiiMustBeEncrypted": "send PII only encrypted (persons.create does): a bug",
    "BadRequestBody": "fix the request (a bug in the caller); do not retry",
    "ValidationError": "fix the input: the problem names the field and what is allowed",
    "TransferRejected": "tell the customer (funds, recipient); do not retry unchanged",
    "Conflict": "read the resource's state; the request cannot succeed as it is",
    "IdempotencyError": "one key per request body; on in-use, wait and repeat",
    "NotFound": "check the id, and that it belongs to this account",
    "MethodNotAllowed": "fix the call (a bug in the caller)",
    "EndpointRemoved": "move to the 1.2.0 way (notebooks 09 and 12)",
    "EndpointDeprecated": "move to the 1.2.0 endpoint (notebooks 01 and 12)",
    "UnsupportedApiVersion": "pin a version the server offers (api_version=)",
    "InvalidReferralCode": "Refer a Friend is gone in 1.2.0 (notebook 09)",
    "RateLimited": "wait Retry-After, then create the session again (its nonce is spent)",
    "ServiceUnavailable": "the kit retried; repeat later with the same Idempotency-Key",
    "ServerError": "report err.request_id; repeat later with the same Idempotency-Key",
    "InvalidControlToken": "simulator only: its /_sim control plane",
    "SnapshotInvalid": "simulator only: its /_sim control plane",
    "HostNotAllowed": "simulator only: call kit serve by its own name, or --allowed-host",
    "OriginNotAllowed": "simulator only: its /_sim control plane from a web page",
}
#: Families only the simulator sends (its control plane and whom it answers): never a sandbox.
SIMULATOR_ONLY = ("InvalidControlToken", "SnapshotInvalid", "HostNotAllowed", "OriginNotAllowed")


def family(cls: type[errors.ApiError]) -> type[errors.ApiError]:
    """The class right under :class:`~kit.errors.ApiError` in ``cls``'s line: what a back end catches."""
    line = [c for c in cls.__mro__ if issubclass(c, errors.ApiError) and c is not errors.ApiError]
    return line[-1]


def _chosen_by() -> dict[str, tuple[int, str]]:
    """Problem code → (status, the register entry whose rule answers it), from each entry's ``covers``."""
    chose: dict[str, tuple[int, str]] = {}
    for entry in register.assumptions():
        for item in entry.get("covers", {}).get("codes", []):
            status, code = item.split(" ", 1)
            chose.setdefault(code, (int(status), entry["id"]))
    return chose


@dataclass(frozen=True)
class ErrorFamilies:
    """The families a partner meets (:attr:`frame`) and those only the simulator sends
    (:attr:`simulator_only`); a table in Jupyter, one line per family as text, its advice in
    full (no line cut short: the whole text stays under 2,000 characters)."""

    frame: pd.DataFrame
    simulator_only: tuple[str, ...]

    def __repr__(self) -> str:
        lines = ["except errors.<family>: statuses (the entries that chose them) — what a back end does"]
        for name, row in self.frame.iterrows():
            lines.append(f"  {name} {row['status']} ({row['entries']}) — {row['what a back end does']}")
        lines.append("only the simulator sends: " + ", ".join(self.simulator_only))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        table = self.frame.rename(index=lambda name: f"except errors.{name}").to_html()
        others = ", ".join(f"<code>{html.escape(n)}</code>" for n in self.simulator_only)
        return f"{table}<p>Only the simulator sends: {others} (its control plane).</p>"


def error_families() -> ErrorFamilies:
    """Every family of :mod:`kit.errors`, in the order ``errors.tree()`` shows them: its statuses,
    how many codes, the register entries that chose them (``RFC 6749`` for the token endpoints'
    errors) and what a partner back end should do."""
    import pandas as pd

    chose = _chosen_by()
    rows = []
    for code, cls in errors.by_code.items():
        rfc = issubclass(cls, errors.OAuthError)  # an RFC 6749 error value, not a problem code
        status, entry = chose.get(code, (None, None))
        rows.append({"family": family(cls).__name__, "code": code, "status": status,
                     "entry": "RFC 6749" if rfc else entry})
    codes = pd.DataFrame(rows)
    grouped = codes.groupby("family").agg(
        status=("status", lambda s: "/".join(str(int(x)) for x in sorted(set(s.dropna()))) or "-"),
        codes=("code", "size"),
        entries=("entry", lambda s: ",".join(sorted(set(s.dropna())))),
    )
    order = [c.__name__ for c in errors.ApiError.__subclasses__()]
    partner = [n for n in order if n in grouped.index and n not in SIMULATOR_ONLY]
    frame = grouped.loc[partner]
    frame["what a back end does"] = [WHAT_TO_DO.get(name, "") for name in frame.index]
    return ErrorFamilies(frame, tuple(n for n in order if n in grouped.index and n in SIMULATOR_ONLY))
