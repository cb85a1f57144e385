"""Request and response models of the wire contract, for validation and OpenAPI.

Enumerated fields are plain strings here and checked against the register by the routes,
so that each has its own problem code and an ``allowed`` list (``unknown-close-reason``…).

A record the simulator keeps (``kit.sim.records``) is shown by one :class:`Representation`:
its fields are the OpenAPI schema and, read from the record, the answer's body. Here are the
models of a first session (the partner token, init data, a session) and what the others share.
The request bodies of the areas past a first session (onboarding, KYC, cards, events, P2P,
webhooks, documents, the control plane) are in :mod:`kit.sim.bodies` and the representations in
:mod:`kit.sim.representations`, so that ``kit.connect("sim")`` builds none of them.

    >>> money(Decimal("7"))
    {'value': '7.00', 'currency': 'USD'}
"""

# No ``from __future__ import annotations``: pydantic would evaluate every field's annotation
# from its string when each class is created (about 250 ForwardRef compilations on connect).
from collections.abc import Callable
from dataclasses import fields
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from kit import register
from kit.sim.clock import format_time

_A = register.value
#: The bounds of request fields (A47): the register's values, never literals here.
_SIZE = _A("A47")
MONEY_PATTERN = _A("A19")["pattern"]
CURRENCY: str = _A("A10")["currency"]
if TYPE_CHECKING:
    TokenType = str
else:  # the one token type the register names (A01), a constant of the schema
    TokenType = Literal[_A("A01")["token_type"]]


class Model(BaseModel):
    # Each model's validator and schema are built on its first use, not when the simulator is
    # imported: the first session of kit.connect("sim") builds only the models it parses.
    model_config = ConfigDict(defer_build=True)


def enum_field(values: list[str], description: str = "") -> Any:
    return Field(json_schema_extra={"enum": list(values)}, description=description)


class Strict(Model):
    model_config = ConfigDict(extra="forbid")


class Lenient(Model):
    """Plaintexts: unknown fields inside a decrypted payload are ignored (the wire contract)."""

    model_config = ConfigDict(extra="ignore")


def money(amount: Decimal, currency: str = CURRENCY) -> dict[str, str]:
    """Money on output: always two decimals (A19).

    >>> money(Decimal("12.5"))
    {'value': '12.50', 'currency': 'USD'}
    """
    return {"value": f"{amount.quantize(Decimal('0.01'))}", "currency": currency}


def _maybe_time(value: datetime | None) -> str | None:
    return None if value is None else format_time(value)


class From:
    """How a field's wire value comes from the record's attribute of the same name:
    ``convert(value, *(the record's attributes named in also))``. Without it, as it is."""

    __slots__ = ("also", "convert")

    def __init__(self, convert: Callable[..., Any], also: tuple[str, ...] = ()) -> None:
        self.convert, self.also = convert, also


#: A time on the wire (RFC 3339, UTC, ``Z``) from the record's ``datetime``.
Time = Annotated[str, From(format_time)]
MaybeTime = Annotated[str | None, From(_maybe_time)]


class Representation(Model):
    """How a kept record is shown, declared once: the fields (in their wire order) are the
    OpenAPI schema, and :meth:`wire` reads them from a record of ``record=`` (a class keyword).

    Each required field is the record's attribute of the same name (a :class:`From` in its
    annotation converts it); a field with a default is not the record's: the route adds it
    where it applies (a transfer's ``viewer_role``). Checked when the class is declared.
    """

    def __init_subclass__(cls, *, record: type, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)  # ``record`` is for the hook below, once the fields are known

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        record = kwargs.pop("record")
        super().__pydantic_init_subclass__(**kwargs)
        kept = {f.name for f in fields(record)}
        plan: list[tuple[str, From | None]] = []
        for name, info in cls.model_fields.items():
            if not info.is_required():
                continue
            frm = next((m for m in info.metadata if isinstance(m, From)), None)
            missing = {name, *(frm.also if frm else ())} - kept
            if missing:
                raise TypeError(f"{cls.__name__}: {record.__name__} has no {', '.join(sorted(missing))}")
            plan.append((name, frm))
        cls.wire_plan = tuple(plan)
        cls.wire = staticmethod(_written_out(plan))  # type: ignore[method-assign,assignment]

    wire_plan: ClassVar[tuple[tuple[str, From | None], ...]] = ()

    @classmethod
    def wire(cls, record: Any) -> dict[str, Any]:
        """``record`` as sent: this model's fields, in order, as JSON-ready values."""
        raise TypeError(f"{cls.__name__} is not declared with a record")

    @classmethod
    def wire_without(cls, omitted: frozenset[str]) -> Callable[[Any], dict[str, Any]]:
        """:meth:`wire` leaving out the fields ``omitted`` (a choice overlay's, register A62);
        :meth:`wire` itself when none is."""
        if not omitted & {name for name, _ in cls.wire_plan}:
            return cls.wire
        return _written_out([(name, frm) for name, frm in cls.wire_plan if name not in omitted])


def _written_out(plan: list[tuple[str, From | None]]) -> Callable[[Any], dict[str, Any]]:
    """The wire form as one dict display, written out as :mod:`dataclasses` writes ``__init__``:
    as fast as a function written by hand (card reads and webhooks build one per answer)."""
    scope: dict[str, Any] = {}
    items = []
    for i, (name, frm) in enumerate(plan):
        value = f"record.{name}"
        if frm is not None:
            scope[f"convert{i}"] = frm.convert
            value = f"convert{i}({', '.join([value, *(f'record.{other}' for other in frm.also)])})"
        items.append(f"{name!r}: {value}")
    exec(f"def wire(record):\n    return {{{', '.join(items)}}}\n", scope)
    wire: Callable[[Any], dict[str, Any]] = scope["wire"]
    return wire


# The body of a problem answer (RFC 9457), which ``kit.sim.problems.Problem`` raises: the
# ``Problem`` schema of the OpenAPI document (a docstring would become its description).
class ProblemBody(Model):
    model_config = ConfigDict(title="Problem")

    type: str
    title: str
    status: int
    detail: str
    code: str
    errors: list[dict[str, str]] | None = None
    allowed: list[str] | None = None
    removed_in: str | None = Field(None, description="endpoint-removed: the version that removed it (A29)")
    renamed: dict[str, str] | None = Field(
        None, description="event-renamed: each old event name sent, with the name that replaced it (A23)"
    )
    supported: list[str] | None = Field(
        None, description="unsupported-api-version: the versions this server serves (A27)"
    )


class OAuthErrorBody(Model):
    error: str
    error_description: str


class Money(Strict):
    value: str = Field(description="A decimal string; on input " + MONEY_PATTERN)
    currency: str = Field(description="ISO 4217; USD only")


# --- partner level -------------------------------------------------------------------------
class TokenResponse(Model):
    access_token: str
    token_type: TokenType
    expires_in: int
    scope: str


class InitData(Model):
    jwks: dict[str, list[dict[str, Any]]]
    enc: list[str]
    nonce: str
    nonce_expires_at: str


# --- sessions ------------------------------------------------------------------------------
class SessionCreate(Strict):
    session_type: str = enum_field(_A("A05")["session_types"])
    expiration_strategy: str = enum_field(_A("A06")["strategies"])
    encrypted_data: str = Field(description="Compact JWE of the session plaintext")


class Device(Lenient):
    device_id: str = Field(min_length=1, max_length=_SIZE["device_id_max_chars"])
    platform: str = enum_field(_A("A05")["platforms"])
    model: str = Field(max_length=_SIZE["device_model_max_chars"])
    os_version: str = Field(max_length=_SIZE["os_version_max_chars"])


class SessionPlaintext(Lenient):
    nonce: str
    device: Device
    device_jwks: dict[str, Any]
    account_id: str | None = None
    person_id: str | None = None


class SessionCreated(Model):
    session_token: str | None = None
    encrypted_session_token: str | None = None
    session_type: str
    expiration_strategy: str
    expires_at: str
    device_id: str
