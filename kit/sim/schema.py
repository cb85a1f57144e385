"""Schema checks, in their order: unknown fields, types, then enumerated values (A21, A22).

Steps 10 and 12 of the order of checks (``kit.sim.pipeline``) use them for a request body and
for a decrypted plaintext; the control plane uses them for its own bodies. A body that fails
is a 422 problem whose ``errors`` point at the fields (JSON Pointers), never at their values.

    >>> parse_model({"product": "spending"}, AccountCreate).product  # doctest: +SKIP
    'spending'
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from kit._codes import ProblemCode
from kit.sim.problems import Problem, pointer, validation_problem

M = TypeVar("M", bound=BaseModel)
#: Enumerated fields: dotted field name → (problem code, allowed values).
Enums = dict[str, tuple[ProblemCode, list[str]]]
#: Pydantic's errors for a value past a bound: the bounds are the register's (A47).
_PAST_A_BOUND = frozenset({"string_too_long", "too_long", "less_than_equal", "greater_than_equal"})


def _limits(exc: ValidationError) -> tuple[str, ...]:
    """A47 when a field is refused for passing one of its bounds (named in svc-assumptions)."""
    return ("A47",) if any(e["type"] in _PAST_A_BOUND for e in exc.errors(include_input=False)) else ()


def parse_model(body: Any, model: type[M], enums: Enums | None = None) -> M:
    """``body`` as ``model``; raises the 422 problem of the first check it fails.

    Unknown top-level fields are ``unknown-field``, wrong types ``validation-error``, a value
    outside an enumeration its own code from ``enums`` with an ``allowed`` list. None is ``{}``.
    """
    body = {} if body is None else body
    if not isinstance(body, dict):
        raise validation_problem([{"field": "", "message": "the body must be a JSON object"}])
    unknown = sorted(set(body) - set(model.model_fields))
    if unknown:
        raise validation_problem(
            [{"field": pointer([name]), "message": "unknown field"} for name in unknown],
            code="unknown-field",
        )
    try:
        parsed = model.model_validate(body, strict=True)
    except ValidationError as exc:
        raise validation_problem(field_errors(exc), assumptions=_limits(exc)) from None
    check_enums(parsed, enums or {})
    return parsed


def parse_plaintext(name: str, model: type[M], data: dict[str, Any], enums: Enums | None = None) -> M:
    """A decrypted ``data`` as ``model``; errors point inside the encrypted field ``name``."""
    try:
        parsed = model.model_validate(data, strict=True)
    except ValidationError as exc:
        raise validation_problem(
            [
                {"field": pointer([name]), "message": f"{e['field'] or '/'}: {e['message']}"}
                for e in field_errors(exc)
            ],
            assumptions=_limits(exc),
        ) from None
    check_enums(parsed, enums or {}, inside=pointer([name]))
    return parsed


def check_enums(parsed: BaseModel, enums: Enums, *, inside: str | None = None) -> None:
    """Enumerated values have their own codes and an ``allowed`` list (the wire contract)."""
    for name, (code, allowed) in enums.items():
        value: Any = parsed
        for part in name.split("."):
            value = getattr(value, part)
        if value is not None and value not in allowed:
            where = pointer(name.split("."))
            message = f"must be one of: {', '.join(allowed)}"
            field, message = (inside, f"{where}: {message}") if inside else (where, message)
            raise Problem(
                422,
                code,
                f"{name.split('.')[-1]} is not an allowed value; allowed: {', '.join(allowed)}.",
                errors=[{"field": field, "message": message}],
                allowed=list(allowed),
            )


def field_errors(exc: ValidationError) -> list[dict[str, str]]:
    """Pydantic's errors as ``{field, message}``, without the submitted values."""
    return [{"field": pointer(e["loc"]), "message": e["msg"]} for e in exc.errors(include_input=False)]
