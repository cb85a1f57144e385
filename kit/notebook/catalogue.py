"""The error catalogue as a notebook shows it: the families of :mod:`kit.errors`, their codes,
and what a partner back end does about each.

The kit raises one class per problem code it knows (:data:`kit.errors.by_code`). A **family**
is the class right under :class:`kit.errors.ApiError` in a class's line (:func:`family`):
``UnknownCloseReason`` is an ``UnknownValue``, a ``ValidationError``, an ``ApiError``, so its
family is ``ValidationError``; a family with one code is that code's class itself
(``RateLimited``). The family is what a back end catches.

:func:`error_families` gives one row per family a partner's server may send: the statuses the
simulator chose for its codes (``RFC 6749`` beside the token endpoints' errors, whose statuses
are that RFC's), how many codes it holds and what a back end does (:data:`WHAT_TO_DO`). Its
:attr:`ErrorFamilies.codes` lists the codes of each family. The classes only the simulator's
own guards raise (its control plane, the ``Host`` and ``Origin`` it answers) are kept apart in
:attr:`ErrorFamilies.simulator_only`, and a fault its control plane injected is no family's
code (:data:`SIMULATOR_ONLY_CODES`): a partner's server never sends them.

Example::

    >>> from kit.notebook import error_families
    >>> families = error_families()
    >>> "ValidationError" in families.frame.index
    True
    >>> families.codes.by_family["Conflict"]
    ('card-already-closed', 'card-not-active', 'document-request-not-open', 'kyc-locked')
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kit import errors, register
from kit._plural import counted

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "SIMULATOR_ONLY",
    "SIMULATOR_ONLY_CODES",
    "WHAT_TO_DO",
    "ErrorFamilies",
    "FamilyCodes",
    "error_families",
    "family",
]

#: Family → what a partner back end does with it, in words a reader needs no other page for.
WHAT_TO_DO = {
    "OAuthError": "token request refused: fix the client id, secret or grant; do not retry",
    "InvalidPartnerToken": "partner token missing or expired: the kit gets a new one, repeats once",
    "SessionError": "device session missing, expired or of another type: open or promote one",
    "InvalidEncryptedData": "did not decrypt: encrypt again to fresh init data; a bug if it lasts",
    "PiiMustBeEncrypted": "personal data sent in clear: send it encrypted; a bug in the caller",
    "BadRequestBody": "body not JSON, too large or another type: a bug in the caller",
    "ValidationError": "fix the input: err.errors names the field, err.problem.get('allowed') the values",
    "TransferRejected": "a P2P rule refused it: tell the customer; no money moved",
    "Conflict": "the resource's state forbids it: read it again; do not retry",
    "IdempotencyError": "a new Idempotency-Key per new request; in use: wait, repeat",
    "NotFound": "no such id for this partner: check the id and the credentials",
    "MethodNotAllowed": "the path does not take this method: a bug in the caller",
    "EndpointRemoved": "gone in 1.2.0: drop the call (notebooks 10 and 13)",
    "EndpointDeprecated": "refused as deprecated: call the 1.2.0 successor (notebook 01)",
    "UnsupportedApiVersion": "the pinned version is not served: pin one of err.supported",
    "InvalidReferralCode": "1.1.0 only: Refer a Friend was removed in 1.2.0 (notebook 13)",
    "RateLimited": "too many requests: wait err.retry_after seconds, then send again",
    "ServiceUnavailable": "retried by the kit already: try later, same Idempotency-Key",
    "ServerError": "report err.request_id; try later, same Idempotency-Key",
    "InvalidControlToken": "simulator only: its /_sim control plane without its control token",
    "SnapshotInvalid": "simulator only: a state snapshot it cannot restore",
    "OperationNotServed": "simulator only: a fault on a path none of its operations serves",
    "HostNotAllowed": "simulator only: call kit serve by its own name, or --allowed-host",
    "OriginNotAllowed": "simulator only: its /_sim control plane from a web page",
}
#: Families only the simulator's own guards raise (its control plane, the ``Host`` and ``Origin``
#: it answers): never a partner's server.
SIMULATOR_ONLY = (
    "InvalidControlToken",
    "SnapshotInvalid",
    "OperationNotServed",
    "HostNotAllowed",
    "OriginNotAllowed",
)
#: Codes of a partner's family that only the simulator sends: a fault its control plane injected
#: (A45). Left out of the families' codes, as the simulator-only families are.
SIMULATOR_ONLY_CODES = ("injected-fault",)
#: Beside the statuses of the token endpoints' errors: the RFC's, not a choice of the register.
RFC_6749 = "RFC 6749"


def family(cls: type[errors.ApiError]) -> type[errors.ApiError]:
    """The class right under :class:`~kit.errors.ApiError` in ``cls``'s line: what a back end
    catches (``ApiError`` itself for ``ApiError``, raised for an answer no family takes).

        >>> family(errors.UnknownCloseReason).__name__, family(errors.RateLimited).__name__
        ('ValidationError', 'RateLimited')
    """
    line = [c for c in cls.__mro__ if issubclass(c, errors.ApiError) and c is not errors.ApiError]
    return line[-1] if line else errors.ApiError


def _chosen_by() -> dict[str, int]:
    """Problem code → the status the register's entries chose for it (each entry's ``covers``)."""
    chose: dict[str, int] = {}
    for entry in register.assumptions():
        for item in entry.get("covers", {}).get("codes", []):
            status, code = item.split(" ", 1)
            chose.setdefault(code, int(status))
    return chose


def _order() -> list[str]:
    """The families in the order ``errors.tree()`` shows them."""
    return [c.__name__ for c in errors.ApiError.__subclasses__()]


@dataclass(frozen=True)
class FamilyCodes:
    """The codes of each family (:attr:`by_family`: family → its codes, sorted): one line per
    family as text, a table in Jupyter."""

    by_family: dict[str, tuple[str, ...]]

    def __repr__(self) -> str:
        return "\n".join(f"{name}: {', '.join(codes)}" for name, codes in self.by_family.items())

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td style='text-align:left'><code>{html.escape(name)}</code></td>"
            f"<td style='text-align:left'>{', '.join(html.escape(c) for c in codes)}</td></tr>"
            for name, codes in self.by_family.items()
        )
        head = "<thead><tr><th>family</th><th style='text-align:left'>its codes</th></tr></thead>"
        return f"<table>{head}<tbody>{rows}</tbody></table>"


@dataclass(frozen=True)
class ErrorFamilies:
    """The families a partner's server may send (:attr:`frame`: status, codes, what a back end
    does) and those only the simulator's guards raise (:attr:`simulator_only`). A table in
    Jupyter, each family's codes listed; as text one line per family, its codes counted and its
    advice in full (the whole under 2,000 characters)."""

    frame: pd.DataFrame
    simulator_only: tuple[str, ...]
    codes: FamilyCodes

    def __repr__(self) -> str:
        lines = ["except errors.<family>: statuses, codes — what a back end does"]
        for name, row in self.frame.iterrows():
            lines.append(f"  {name}: {row['status']}, {row['codes']} — {row['what a back end does']}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The table in Jupyter, each family's codes spelled out (the text form counts them)."""
        table = self.frame.assign(codes=[", ".join(self.codes.by_family[name]) for name in self.frame.index])
        table = table.rename(index=lambda name: f"except errors.{name}").rename_axis(None)
        return str(table.to_html(justify="left"))


def error_families() -> ErrorFamilies:
    """Every family of :mod:`kit.errors` a partner's server may send, in the order
    ``errors.tree()`` shows them: the statuses the simulator chose for its codes
    (``RFC 6749`` beside the token endpoints' errors), how many codes it holds and what a
    partner back end should do; and the codes of every family (:attr:`ErrorFamilies.codes`)."""
    import pandas as pd

    chose = _chosen_by()
    rows = [
        {
            "family": family(cls).__name__,
            "code": code,
            "status": chose.get(code),
            "rfc": issubclass(cls, errors.OAuthError),
        }  # an RFC 6749 error value, not a problem code
        for code, cls in errors.by_code.items()
        if code not in SIMULATOR_ONLY_CODES
    ]
    table = pd.DataFrame(rows)
    order = [name for name in _order() if name in set(table["family"])]
    partner = [name for name in order if name not in SIMULATOR_ONLY]
    frame = pd.DataFrame(index=pd.Index(partner, name="family"))
    frame["status"] = [_statuses(table[table["family"] == name]) for name in partner]
    frame["codes"] = [counted(int((table["family"] == name).sum()), "code") for name in partner]
    frame["what a back end does"] = [WHAT_TO_DO.get(name, "") for name in partner]
    codes = FamilyCodes({name: tuple(sorted(table.loc[table["family"] == name, "code"])) for name in partner})
    return ErrorFamilies(frame, tuple(name for name in order if name in SIMULATOR_ONLY), codes)


def _statuses(rows: pd.DataFrame) -> str:
    shown = "/".join(str(int(s)) for s in sorted(set(rows["status"].dropna()))) or "-"
    return f"{shown} ({RFC_6749})" if rows["rfc"].all() else shown
