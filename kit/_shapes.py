"""Answers already judged: openapi-core's verdict on a body, kept by the body's *shape*.

Validating every answer with a JSON Schema validator costs tens of microseconds; the answers
of one operation mostly look alike — the same keys, the same JSON types, other ids. Where a
schema's verdict can depend on nothing else, a body shaped like one that passed passes too, so
:class:`Memo` validates each new shape once (openapi-core) and remembers those that passed:

- a **permissive** schema (``type`` at most: ``{"type": "object"}``) — the shape is the JSON
  type of the body;
- a **structural** schema (keys, JSON types, required, items, anyOf… — :data:`STRUCTURAL`) —
  the shape is every key and the JSON type of every value (an integral float told apart);
- a structural schema but for an ``enum`` or ``const`` of scalars on top-level properties —
  those properties' values are part of the shape (so an unknown value is always validated).

Any other schema (formats, patterns, lengths, deeper enums) is validated every time. A body
that fails is never remembered, and at most :data:`LIMIT` shapes are kept per schema.

Example::

    >>> memo = Memo(validator, {"type": "object"}, document)   # doctest: +SKIP
    >>> memo.errors({"any": "thing"})                           # doctest: +SKIP
    []
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

__all__ = [
    "LIMIT",
    "STRUCTURAL",
    "Memo",
    "conforms",
    "deref",
    "import_validators",
    "resolve",
    "shape",
    "structural",
]

#: Keywords whose verdict depends only on a value's structure (its keys and JSON types).
STRUCTURAL = frozenset(
    {
        "type",
        "properties",
        "required",
        "items",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "title",
        "description",
        "default",
        "examples",
        "additionalProperties",
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)
_VALUES = frozenset({"enum", "const"})
_PERMISSIVE = frozenset({"type", "title", "description", "additionalProperties"})
_SCALARS = (str, int, bool, type(None))
#: A ``$ref`` with nothing beside it but annotations: the schema is the one it points to.
_ANNOTATED_REF = frozenset({"$ref", "title", "description"})
_LIGHT = STRUCTURAL | _VALUES
_JSON_TYPES: dict[Any, type] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}
#: Shapes kept per schema at most.
LIMIT = 256


def resolve(schema: Any, document: Mapping[str, Any]) -> Any:
    """``schema`` with its top-level local ``$ref`` followed (``None`` for a broken one)."""
    seen: set[str] = set()
    while (
        isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str) and set(schema) <= _ANNOTATED_REF
    ):
        ref = schema["$ref"]
        if not ref.startswith("#/") or ref in seen:
            return None
        seen.add(ref)
        target: Any = document
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        schema = target
    return schema


def deref(node: Any, document: Mapping[str, Any]) -> Mapping[str, Any]:
    """``node`` with its local ``$ref`` s followed, siblings or not (as jsonschema-path reads a
    schema's value); ``{}`` for a broken or circular one, or a node that is not an object."""
    seen: set[str] = set()
    while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
        ref = node["$ref"]
        if ref in seen or not ref.startswith("#/"):
            return {}
        seen.add(ref)
        node = document
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, Mapping) else {}
    return node if isinstance(node, Mapping) else {}


def structural(schema: Any, document: Mapping[str, Any], seen: frozenset[str] = frozenset()) -> bool:
    """True when ``schema`` (local ``$ref`` s followed) uses only :data:`STRUCTURAL` keywords."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, Mapping) or not set(schema) <= STRUCTURAL:
        return False
    ref = schema.get("$ref")
    if ref is not None:
        if not isinstance(ref, str) or not ref.startswith("#/") or ref in seen:
            return ref in seen
        if not structural(resolve({"$ref": ref}, document), document, seen | {ref}):
            return False
    subs = [*schema.get("properties", {}).values(), *schema.get("anyOf", ()), *schema.get("oneOf", ())]
    subs += [*schema.get("allOf", ()), schema.get("items", True), schema.get("additionalProperties", True)]
    return all(structural(sub, document, seen) for sub in subs)


def _valued(node: Any, document: Mapping[str, Any]) -> frozenset[str] | None:
    """The top-level properties held to an ``enum``/``const`` of scalars, when the schema is
    structural but for them; ``None`` otherwise."""
    if not isinstance(node, Mapping) or not set(node) <= STRUCTURAL:
        return None
    props = node.get("properties", {})
    valued = set()
    for name, sub in props.items():
        sub = resolve(sub, document)
        if structural(sub, document):
            continue
        if not isinstance(sub, Mapping) or not set(sub) & _VALUES:
            return None
        allowed = [*sub.get("enum", ()), *([sub["const"]] if "const" in sub else [])]
        rest = {k: v for k, v in sub.items() if k not in _VALUES}
        if not all(isinstance(v, _SCALARS) for v in allowed) or not structural(rest, document):
            return None
        valued.add(name)
    others = {k: v for k, v in props.items() if k not in valued}
    return frozenset(valued) if structural({**node, "properties": others}, document) else None


def _is(value: Any, name: Any) -> bool:
    """JSON Schema 2020-12's type check (OpenAPI 3.1's) for a parsed JSON value."""
    kind = type(value)
    if name == "integer":
        return kind is int or (kind is float and value.is_integer())
    if name == "number":
        return kind is int or kind is float
    return isinstance(name, str) and _JSON_TYPES.get(name) is kind


def conforms(schema: Any, value: Any, document: Mapping[str, Any], depth: int = 0) -> bool:
    """True when ``value`` is surely valid against ``schema``: a schema of :data:`STRUCTURAL`
    keywords (and ``enum``/``const`` of scalars) that the value meets. False means *not sure*
    (another keyword, or the value fails): ask the full validator, which names the errors.

    The verdict needs no validator, so the answers a client sees first (a token, init data, a
    session) are judged without importing openapi-core (a quarter of a second); a ``True`` is
    exactly openapi-core's verdict (``tests/client/test_contract.py`` checks it against
    jsonschema on generated bodies).

        >>> conforms({"type": "object", "required": ["a"]}, {"a": 1}, {})
        True
        >>> conforms({"type": "string", "format": "date"}, "2025-01-01", {})
        False
    """
    if schema is True:
        return True
    if not isinstance(schema, Mapping) or depth > 32 or not set(schema) <= _LIGHT:
        return False
    if "$ref" in schema:
        target = resolve({"$ref": schema["$ref"]}, document) if isinstance(schema["$ref"], str) else None
        if target is None or not conforms(target, value, document, depth + 1):
            return False
    if "type" in schema:
        names = [schema["type"]] if isinstance(schema["type"], str) else schema["type"]
        if not isinstance(names, list) or not any(_is(value, name) for name in names):
            return False
    for key in _VALUES & set(schema):
        allowed = schema[key] if key == "enum" else [schema[key]]
        if not isinstance(allowed, list) or not any(_same(value, a) for a in allowed):
            return False
    if type(value) is dict:
        props, required = schema.get("properties", {}), schema.get("required", [])
        if not isinstance(props, Mapping) or not isinstance(required, list):
            return False
        if not all(name in value for name in required):
            return False
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            if not conforms(props.get(name, extra), item, document, depth + 1):
                return False
    items = schema.get("items", True)
    if type(value) is list and not all(conforms(items, item, document, depth + 1) for item in value):
        return False
    if "oneOf" in schema:  # "exactly one": a branch not surely valid may still be valid
        return False
    if "allOf" in schema and not (
        isinstance(schema["allOf"], list)
        and all(conforms(s, value, document, depth + 1) for s in schema["allOf"])
    ):
        return False
    return "anyOf" not in schema or (
        isinstance(schema["anyOf"], list)
        and any(conforms(s, value, document, depth + 1) for s in schema["anyOf"])
    )


def _same(value: Any, allowed: Any) -> bool:
    """JSON equality of two scalars (``True`` is not ``1``; ``1`` is ``1.0``)."""
    scalar = isinstance(value, (*_SCALARS, float)) and isinstance(allowed, (*_SCALARS, float))
    return scalar and (type(value) is bool) == (type(allowed) is bool) and value == allowed


def shape(value: Any) -> Any:
    """A hashable picture of a parsed JSON value's keys and JSON types (an integral float apart).

    Example::

        >>> shape({"id": "a", "n": [1, 2.5]})
        (('id', <class 'str'>), ('n', ('[', <class 'int'>, (<class 'float'>, False))))
    """
    kind = type(value)
    if kind is dict:
        return tuple((k, shape(v)) for k, v in value.items())
    if kind is list:
        return ("[", *map(shape, value))
    if kind is float:
        return (float, value.is_integer())
    return kind


class Memo:
    """openapi-core's verdict for one schema, remembered by shape (see the module docstring).

    ``validator`` is a jsonschema validator (``iter_errors``), or a function building one when
    first needed (a body :func:`conforms` to settles it without), ``schema`` the schema it checks
    and ``document`` the OpenAPI document its ``$ref`` s point into.
    """

    def __init__(self, validator: Any, schema: Any, document: Mapping[str, Any]) -> None:
        self._validator = validator if hasattr(validator, "iter_errors") else None
        self._build = validator
        self._schema, self._document = schema, document
        node = resolve(schema, document)
        self._type_only = (
            isinstance(node, Mapping)
            and set(node) <= _PERMISSIVE
            and (node.get("additionalProperties", True) is True)
        )
        self._valued = frozenset() if structural(node, document) else _valued(node, document)
        self._passed: set[Any] | None = set() if self._type_only or self._valued is not None else None

    @property
    def validator(self) -> Any:
        """The jsonschema validator (built on first use)."""
        if self._validator is None:
            self._validator = self._build()
        return self._validator

    def _shape(self, body: Any) -> Any:
        if self._type_only:  # containers by type; a number by shape (1.0 passes as an integer)
            return type(body) if type(body) in (dict, list) else shape(body)
        if not self._valued or type(body) is not dict:
            return shape(body)
        parts = []
        for key, value in body.items():
            if key in self._valued:
                if not isinstance(value, _SCALARS):
                    return None
                parts.append((key, ("=", type(value), value)))
            else:
                parts.append((key, shape(value)))
        return tuple(parts)

    def errors(self, body: Any) -> list[Any]:
        """The schema errors of ``body`` (jsonschema's), none for a shape that passed before."""
        passed = self._passed
        key = self._shape(body) if passed is not None else None
        if key is not None and key in passed:  # type: ignore[operator]
            return []
        if conforms(self._schema, body, self._document):
            errors = []
        else:
            errors = list(self.validator.iter_errors(body))
        if key is not None and not errors and len(passed) < LIMIT:  # type: ignore[arg-type]
            passed.add(key)  # type: ignore[union-attr]
        return errors


@cache
def import_validators() -> None:
    """Import openapi-core's validators, once: the first body :func:`conforms` cannot settle pays
    for them (jsonschema's among them, with its ``iri`` checker's Lark grammars when
    ``rfc3987_syntax`` is installed: about a second of CPU, once per process)."""
    import openapi_core.validation.schemas  # noqa: F401
