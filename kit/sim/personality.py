"""The simulator's personality: the register's values under a choice overlay, resolved once.

A simulator answers with the register's choices (``data/assumptions.toml``) unless it was
started with a choice overlay (:mod:`kit._choices`: ``kit serve --choices FILE``,
``kit.connect("sim", choices=FILE)``, ``KIT_SIM_CHOICES``). :func:`resolve` validates the overlay
for this simulator and turns it into a :class:`Personality`: plain attributes read by the routes,
the middleware and the OpenAPI document, so that no request looks anything up in the overlay.

What an overlay may re-choose here (:data:`APPLIED`): lifetimes (A01, A04, A06, A14), the close
reasons (A15), the card types (A13), the versions served (A27), the starting balance (A10), the
session rate (A32), the id
format (A60), whether ``svc-assumptions`` is sent (A61), the optional response fields (A62),
whether card and event routes require a session (A63), the problem codes (A64, several of ours
may be one of theirs) and the wire's spelling (:mod:`kit._dialect`: A67 paths, A68 field names, the
header names of A02, A18, A20, A24, A27 and A28, A01's client authentication, A05 and A06's values
on the wire, A24's signature algorithm). Any other key
of the register is refused by name: the simulator reads it where its code is loaded, so it could
not serve it.

    >>> from kit._choices import parse
    >>> resolve(parse({"A60": {"id_format": "uuid"}})).uuid_ids
    True
    >>> resolve(parse({"A04": {"rsa_bits": 3072}}))
    Traceback (most recent call last):
    ...
    kit._choices.ChoicesError: [A04] rsa_bits: this simulator cannot serve another value of it (...)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from kit import register
from kit._choices import EMPTY, SERVED, ChoicesError, Overlay
from kit._choices import Problem as Refusal
from kit._dialect import DEFAULT as DEFAULT_DIALECT
from kit._dialect import Dialect

if TYPE_CHECKING:
    from kit.sim.models import Representation

__all__ = ["APPLIED", "DEFAULT", "NAMES", "Personality", "SessionLifetimes", "resolve"]

#: The register keys a simulator applies from an overlay (entry → keys; ``None``: every key).
APPLIED: Mapping[str, frozenset[str] | None] = SERVED
#: The names A62 gives the representations whose optional fields it lists (their models are
#: ``kit.sim.representations.REPRESENTATIONS``).
NAMES: Mapping[str, str] = MappingProxyType(
    {
        "account": "AccountOut",
        "card": "CardOut",
        "event": "EventOut",
        "transfer": "TransferOut",
        "document_request": "DocumentRequestOut",
    }
)
ID_FORMATS = ("prefixed", "uuid")
_SLUG = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")


class SessionLifetimes(NamedTuple):
    """A06: ``fixed`` from creation; ``sliding`` from the last 2xx call, capped from the chain's start."""

    fixed: timedelta
    sliding_idle: timedelta
    sliding_max: timedelta


@dataclass(frozen=True)
class Personality:
    """Every overlayable value, resolved (see the module docstring). ``overlay`` is what it came
    from. :meth:`writer` gives the function that writes a representation's answer."""

    overlay: Overlay
    token_lifetime: int
    nonce_lifetime: int
    sessions: SessionLifetimes
    starting_balance: Decimal
    card_types: list[str]
    card_months: int
    temporary_card_days: int
    close_reasons: list[str]
    #: The versions served, oldest first (A27): the register's, or one of them under an overlay.
    versions: tuple[str, ...]
    rate_window: timedelta
    max_sessions_per_window: int
    uuid_ids: bool
    send_assumptions: bool
    require_session: bool
    #: ``resource.field`` of A62 not sent.
    omitted: frozenset[str]
    #: How the wire is spelled (A67 paths, A68 names, headers, A01's client authentication,
    #: A05/A06 values, A24's signature): the register's own unless the overlay re-spells it.
    dialect: Dialect = field(default=DEFAULT_DIALECT)
    #: Each representation's writer, worked out on its first answer (:meth:`writer`).
    _writers: dict[type[Representation], Callable[[Any], dict[str, Any]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def codes(self) -> Mapping[str, str]:
        """Our code → the code sent, only for the codes the overlay renames (A64; empty by
        default): the dialect's :attr:`~kit._dialect.Dialect.renamed_codes`."""
        return self.dialect.renamed_codes

    @property
    def client_auth(self) -> str:
        """How the token endpoint takes client credentials (A01: ``either``, ``basic`` or
        ``post``): the dialect's."""
        chosen: str = self.dialect.chosen("A01", "client_auth")
        return chosen

    def paths(self) -> dict[str, str]:
        """The paths this simulator serves some partner operations at, {operation key: path}
        (``kit.sim.routes.OPERATIONS``' keys; the others at their default paths): those the
        overlay's A67 re-chooses."""
        return {op: path for op, path in self.dialect.paths.items() if path != DEFAULT_DIALECT.paths[op]}

    def omitted_fields(self, model: type[Representation]) -> frozenset[str]:
        """The fields of ``model`` this personality does not send."""
        names = {prefix for prefix, name in NAMES.items() if name == model.__name__}
        return frozenset(item.split(".", 1)[1] for item in self.omitted if item.split(".", 1)[0] in names)

    def writer(self, model: type[Representation]) -> Callable[[Any], dict[str, Any]]:
        """The function that writes ``model``'s answer from a record, without the fields this
        personality leaves out (A62); the model's own :meth:`~Representation.wire` when none is."""
        found = self._writers.get(model)
        if found is None:
            found = self._writers.setdefault(model, model.wire_without(self.omitted_fields(model)))
        return found


def _problems(overlay: Overlay) -> list[Refusal]:
    """What this simulator cannot serve of ``overlay`` (entry and key named)."""
    found: list[Refusal] = []
    for entry in overlay.entries():
        applied = APPLIED.get(entry, frozenset())
        for key in overlay.changes(entry):
            if applied is not None and key not in applied:
                served = ", ".join(sorted(applied)) if applied else "none of its keys"
                found.append(
                    Refusal(
                        entry,
                        key,
                        "this simulator cannot serve another value of it (it is read where its code "
                        f"is loaded; of {entry} a dialect file may re-choose: {served})",
                    )
                )
    value = overlay.value

    def positive(entry: str, *keys: str) -> None:
        for key in keys:
            if key in overlay.changes(entry) and int(value(entry)[key]) <= 0:
                found.append(Refusal(entry, key, "must be a positive number"))

    positive("A01", "token_lifetime_seconds")
    positive("A04", "nonce_lifetime_seconds")
    positive("A06", "fixed_seconds", "sliding_idle_seconds", "sliding_max_seconds")
    positive("A14", "months", "temporary_days")
    positive("A32", "max_sessions_per_device_per_minute", "window_seconds")
    if "A06" in overlay and value("A06")["sliding_max_seconds"] < value("A06")["sliding_idle_seconds"]:
        found.append(Refusal("A06", "sliding_max_seconds", "must not be shorter than sliding_idle_seconds"))
    for entry, key in (("A13", "types"), ("A15", "reasons")):
        if key in overlay.changes(entry):
            items = value(entry)[key]
            if not items or len(set(items)) != len(items) or not all(_SLUG.fullmatch(i) for i in items):
                found.append(Refusal(entry, key, "must be a non-empty list of distinct lower-case names"))
    if "versions" in overlay.changes("A27"):
        known = list(register.value("A27")["versions"])
        chosen = value("A27")["versions"]
        if (
            register.fact("version") not in chosen
            or not set(chosen) <= set(known)
            or len(set(chosen)) != len(chosen)
        ):
            found.append(
                Refusal(
                    "A27",
                    "versions",
                    f"must list distinct versions of {', '.join(known)}, the spec's "
                    f"{register.fact('version')} among them (version.1)",
                )
            )
    if "starting_balance" in overlay.changes("A10"):
        text = value("A10")["starting_balance"]
        if not re.fullmatch(register.value("A19")["pattern"], text):
            found.append(Refusal("A10", "starting_balance", "must be a decimal string such as 500.00"))
    if value("A60")["id_format"] not in ID_FORMATS:
        found.append(Refusal("A60", "id_format", f"must be one of {', '.join(ID_FORMATS)}"))
    unknown = sorted(set(value("A62")["sent"]) - set(register.value("A62")["sent"]))
    if unknown:
        listed = ", ".join(register.value("A62")["sent"])
        found.append(Refusal("A62", "sent", f"not optional fields: {', '.join(unknown)} (listed: {listed})"))
    codes = value("A64")["codes"]
    bad = sorted(k for k, v in codes.items() if not _SLUG.fullmatch(v))
    if bad:
        found.append(
            Refusal("A64", "codes", f"not a code (lower-case letters, digits, -_.): {', '.join(bad)}")
        )
    return found


def _unroutable(overlay: Overlay) -> list[Refusal]:
    """Why this simulator's route table (:func:`kit.sim.table.build`, as the app builds it)
    cannot take the overlay's A67 paths, naming the first operation it moved that the table's
    refusal names; empty when it can."""
    from kit.sim.table import RouteTableError, build  # here: most overlays move no path

    moved = overlay.changes("A67").get("paths", {})
    try:
        build({op: path for op, path in moved.items() if path != DEFAULT_DIALECT.paths[op]})
    except RouteTableError as exc:
        why = str(exc)
        named = sorted((found.start(), op) for op in moved if (found := re.search(rf"\b{op}\b", why)))
        key = f"paths.{named[0][1]}" if named else "paths"
        return [Refusal("A67", key, f"this simulator cannot route it: {why}")]
    return []


def resolve(overlay: Overlay | None = None) -> Personality:
    """The personality of a simulator started with ``overlay`` (the register's own when ``None``).

    Raises:
        ChoicesError: a key this simulator cannot serve, a value it cannot use, or A67 paths its
            route table cannot take (entry and key named); nothing is half-applied.
    """
    overlay = overlay or EMPTY
    found = _problems(overlay) + (_unroutable(overlay) if "A67" in overlay else [])
    if found:
        raise ChoicesError(found, overlay.source)
    value = overlay.value
    lifetimes, rate = value("A06"), value("A32")
    omitted = frozenset(register.value("A62")["sent"]) - frozenset(value("A62")["sent"])
    return Personality(
        overlay=overlay,
        token_lifetime=int(value("A01")["token_lifetime_seconds"]),
        nonce_lifetime=int(value("A04")["nonce_lifetime_seconds"]),
        sessions=SessionLifetimes(
            timedelta(seconds=int(lifetimes["fixed_seconds"])),
            timedelta(seconds=int(lifetimes["sliding_idle_seconds"])),
            timedelta(seconds=int(lifetimes["sliding_max_seconds"])),
        ),
        starting_balance=_decimal(value("A10")["starting_balance"]),
        card_types=list(value("A13")["types"]),
        card_months=int(value("A14")["months"]),
        temporary_card_days=int(value("A14")["temporary_days"]),
        close_reasons=list(value("A15")["reasons"]),
        versions=tuple(v for v in register.value("A27")["versions"] if v in value("A27")["versions"]),
        rate_window=timedelta(seconds=int(rate["window_seconds"])),
        max_sessions_per_window=int(rate["max_sessions_per_device_per_minute"]),
        uuid_ids=value("A60")["id_format"] == "uuid",
        send_assumptions=bool(value("A61")["send_assumptions"]),
        require_session=bool(value("A63")["cards_and_events_require_session"]),
        omitted=omitted,
        dialect=Dialect.of(overlay) if overlay else DEFAULT_DIALECT,
    )


def _decimal(text: str) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation:  # validated above; the register's own is a decimal
        raise ValueError(f"not a decimal: {text!r}") from None


#: The register's own personality (no overlay).
DEFAULT = resolve()
