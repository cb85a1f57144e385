"""A dialect: how a server spells the parts of the wire the spec does not show.

The register holds the simulator's spelling: the paths of the operations the spec does not
show (A67), field names (A68), header names (A02, A18, A20, A24, A27, A28), the token
request's client authentication (A01), session values (A05, A06) and problem codes (A64). A
choice overlay (:mod:`kit._choices`) may re-choose any of them; :class:`Dialect` is the result,
read by everything that speaks the wire: the client, the checks and the simulator.

With no overlay the dialect is the simulator's own (:data:`DEFAULT`) and every method here is
the identity: ``to_wire(body) is body``.

Example::

    >>> from kit import _choices
    >>> camel = Dialect.of(_choices.parse({"A68": {"field_case": "camel"}}))
    >>> camel.to_wire({"session_token": "x", "expires_in": 60, "details": {"my_key": 1}})
    {'sessionToken': 'x', 'expires_in': 60, 'details': {'my_key': 1}}
    >>> camel.from_wire({"accountId": "acc_1"})
    {'account_id': 'acc_1'}
    >>> camel.pointer_to_wire("/device/os_version")
    '/device/osVersion'

The rules a dialect file must keep are :mod:`kit._dialect_rules`'. This module is in the base
room: it imports only :mod:`kit.register` and the table of operations (:mod:`kit._operations`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from kit import register
from kit._operations import CHOSEN

__all__ = ["DEFAULT", "HEADERS", "OPERATIONS", "STANDARD_NAMES", "Dialect", "camel", "fill", "snake"]

#: The operations the spec does not show a path for (A67's keys), in the register's order.
OPERATIONS: tuple[str, ...] = CHOSEN
#: The path parameters an operation may keep (a re-chosen path keeps the same ones).
_PARAM = re.compile(r"\{([a-z_]+)\}")
#: A path template's parameter, escaped (:func:`re.escape` of ``{card_id}``).
_ESCAPED_PARAM = re.compile(r"\\\{([a-z_]+)\\\}")

#: The other entries that spell the wire: headers, client authentication, session values, codes.
WIRE_ENTRIES = ("A01", "A02", "A05", "A06", "A18", "A20", "A24", "A27", "A28", "A64")
#: Member names a standard or the spec fixes: never re-cased nor renamed (A68). RFC 6749's token
#: answer and error, RFC 9457's problem members, JWK/JWKS members and JOSE header parameters,
#: and the spec's own `reason`.
STANDARD_NAMES: frozenset[str] = frozenset(
    {
        # RFC 6749 (token answer, error answer)
        "access_token", "token_type", "expires_in", "refresh_token", "scope", "error",
        "error_description", "error_uri", "grant_type", "client_id", "client_secret",
        # RFC 9457
        "type", "title", "status", "detail", "instance",
        # RFC 7517 (JWK, JWKS) and RFC 7515/7516 (JOSE headers)
        "keys", "kty", "use", "key_ops", "alg", "kid", "x5u", "x5c", "x5t", "x5t#S256", "crv", "x",
        "y", "d", "n", "e", "p", "q", "dp", "dq", "qi", "k", "enc", "zip", "jku", "jwk", "typ",
        "cty", "crit", "epk", "apu", "apv", "iv", "tag", "p2s", "p2c", "iat", "b64",
        # the spec's own field name (the card close)
        "reason",
    }
)  # fmt: skip
#: Members whose values are data rather than objects with field names: an inbound event's
#: free-form `details`, `renamed`'s event names, and JWK Sets (JOSE objects).
OPAQUE: frozenset[str] = frozenset({"details", "renamed", "jwks", "device_jwks", "keys"})


def camel(name: str) -> str:
    """``session_token`` → ``sessionToken``."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_UPPER = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake(name: str) -> str:
    """``sessionToken`` → ``session_token`` (the inverse of :func:`camel` on the kit's names)."""
    return _UPPER.sub(r"_\1", name).lower()


def fill(template: str, values: Mapping[str, str]) -> str:
    """``template`` with each ``{name}`` replaced by ``values[name]``, as it is: nothing else of
    the template is read (no format spec, conversion, attribute or index; a dialect file's rules
    refuse any other brace).

    >>> fill("/cards/{card_id}/close", {"card_id": "card_1"})
    '/cards/card_1/close'

    Raises:
        KeyError: a parameter ``values`` does not give.
    """
    return _PARAM.sub(lambda found: values[found.group(1)], template)


def _shape(template: str) -> str:
    """A path template with its parameter names blanked: two templates of one shape collide."""
    return _PARAM.sub("{}", template)


class Values(Protocol):
    """What :meth:`Dialect.of` reads of an overlay (:class:`kit._choices.Overlay`)."""

    @property
    def source(self) -> str | None: ...

    def value(self, entry_id: str) -> dict[str, Any]: ...


#: The headers a dialect may rename, as (entry, key).
HEADERS = (
    ("A02", "header"),
    ("A18", "role_header"),
    ("A20", "header"),
    ("A20", "replayed_header"),
    ("A24", "header"),
    ("A27", "header"),
    ("A28", "request_id"),
    ("A28", "session_expires_at"),
    ("A28", "assumptions"),
)


@dataclass(frozen=True)
class Dialect:
    """The wire spelling under one overlay (see the module docstring). Build with :meth:`of`."""

    paths: Mapping[str, str]
    methods: Mapping[str, str]
    field_case: str = "snake"
    renames: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, repr=False)
    source: str | None = None

    @classmethod
    def of(cls, overlay: Values | None) -> Dialect:
        """The dialect ``overlay`` speaks (the simulator's own for ``None`` or an empty one)."""
        read = overlay.value if overlay is not None else register.value
        a67, a68 = read("A67"), read("A68")
        values = {e: read(e) for e in WIRE_ENTRIES}
        return cls(
            paths=dict(a67["paths"]),
            methods=dict(a67["methods"]),
            field_case=a68["field_case"],
            renames=dict(a68["renames"]),
            values=values,
            source=overlay.source if overlay is not None else None,
        )

    @cached_property
    def default(self) -> bool:
        """Whether this is the simulator's own spelling in every part (nothing to translate)."""
        ours = Dialect.of(None)
        mine = (self.paths, self.field_case, self.renames, {e: self.values[e] for e in WIRE_ENTRIES})
        return mine == (ours.paths, ours.field_case, ours.renames, {e: ours.values[e] for e in WIRE_ENTRIES})

    @cached_property
    def headers(self) -> dict[str, str]:
        """The simulator's header name (lower case) → this dialect's, for every header in :data:`HEADERS`."""
        return {register.value(e)[k].lower(): self.values[e][k] for e, k in HEADERS}

    @cached_property
    def headers_from_wire(self) -> dict[str, str]:
        """This dialect's header name (lower case) → the simulator's (lower case): the inverse
        of :attr:`headers`, for every header in :data:`HEADERS`."""
        return {theirs.lower(): ours for ours, theirs in self.headers.items()}

    def header_from_wire(self, name: str) -> str:
        """The kit's name (lower case) of the header this dialect calls ``name`` (lower case);
        a header no entry names, as it came."""
        return self.headers_from_wire.get(name, name)

    def document(self, doc: dict[str, Any]) -> dict[str, Any]:
        """An OpenAPI document of the simulator's spelling, spelled this dialect's way: member
        names (A68), header names and the session values (A05, A06). Its paths are the ones the
        simulator serves: its route table already puts each operation at the dialect's (A67)."""
        return doc if self.default else _respell(doc, self)

    # ---- paths (A67)
    def operation(self, method: str, template: str) -> str | None:
        """The A67 key served at ``method template`` (parameter names aside), or ``None``."""
        shape = _shape(template)
        for op, path in self.paths.items():
            if self.methods[op] == method.upper() and _shape(path) == shape:
                return op
        return None

    @cached_property
    def _wire_paths(self) -> list[tuple[re.Pattern[str], str, str]]:
        """``(this dialect's path as a pattern, method, the register's template)`` per A67
        operation: a parameter matches one segment, whatever it holds, in a group of its name."""
        ours = register.value("A67")["paths"]
        found = []
        for op, path in self.paths.items():
            pattern = _ESCAPED_PARAM.sub(lambda p: f"(?P<{p.group(1)}>[^/]+)", re.escape(path))
            found.append((re.compile(f"^{pattern}$"), self.methods[op], ours[op]))
        return found

    def path_to_kit(self, method: str, path: str) -> str:
        """A path this dialect serves, a template (``/v2/cards/{id}``) or a request's
        (``/v2/cards/card_1``), as the kit spells it: an A67 operation's at the register's path,
        each parameter as it came (by its name); any other path as it came.

        >>> from kit import _choices
        >>> moved = Dialect.of(_choices.parse({"A67": {"paths": {"get_card": "/v2/cards/{card_id}"}}}))
        >>> moved.path_to_kit("GET", "/v2/cards/{id}"), moved.path_to_kit("GET", "/cards/{id}/x")
        ('/cards/{id}', '/cards/{id}/x')
        >>> moved.path_to_kit("GET", "/v2/cards/card_1"), moved.path_to_kit("POST", "/v2/cards/card_1")
        ('/cards/card_1', '/v2/cards/card_1')
        """
        for pattern, verb, template in self._wire_paths:
            found = pattern.match(path) if verb == method.upper() else None
            if found is not None:
                return fill(template, found.groupdict())
        return path

    # ---- field names (A68)
    @cached_property
    def plain(self) -> bool:
        """Whether field names are the kit's own (snake case, no renames): nothing to map."""
        return self.field_case == "snake" and not self.renames

    @cached_property
    def _inverse(self) -> dict[str, str]:
        return {wire: kit for kit, wire in self.renames.items()}

    def name_to_wire(self, name: str) -> str:
        """The wire's spelling of the kit's member name ``name``."""
        if name in STANDARD_NAMES:
            return name
        if name in self.renames:
            return self.renames[name]
        return camel(name) if self.field_case == "camel" else name

    def name_from_wire(self, name: str) -> str:
        """The kit's member name for the wire's ``name``."""
        if name in STANDARD_NAMES:
            return name
        if name in self._inverse:
            return self._inverse[name]
        return snake(name) if self.field_case == "camel" else name

    def to_wire(self, body: Any) -> Any:
        """``body`` (JSON data) with the kit's member names spelled the wire's way."""
        return body if self.plain else _rename(body, self.name_to_wire)

    def from_wire(self, body: Any) -> Any:
        """``body`` (JSON data from the wire) with the kit's member names."""
        return body if self.plain else _rename(body, self.name_from_wire)

    def pointer_to_wire(self, pointer: str) -> str:
        """A JSON Pointer (RFC 6901) to a kit member, spelled the wire's way."""
        return pointer if self.plain else _repoint(pointer, self.name_to_wire)

    def pointer_from_wire(self, pointer: str) -> str:
        """A JSON Pointer from the wire, spelled the kit's way."""
        return pointer if self.plain else _repoint(pointer, self.name_from_wire)

    def body_to_wire(self, body: Any) -> Any:
        """A JSON body of the kit's spelling as the wire spells it: member names (A68), the
        JSON Pointers of a problem's ``errors[].field``, session values (A05, A06)."""
        if self.default:
            return body
        body = _values(body, self.value_to_wire)
        return self.to_wire(_pointers(body, self.pointer_to_wire))

    def body_from_wire(self, body: Any) -> Any:
        """A JSON body from the wire in the kit's spelling (the inverse of :meth:`body_to_wire`)."""
        if self.default:
            return body
        body = _pointers(self.from_wire(body), self.pointer_from_wire)
        return _values(body, self.value_from_wire)

    # ---- the rest: headers, client authentication, session values, codes
    def chosen(self, entry: str, key: str) -> Any:
        """One key of a wire entry's effective value (A01, A02, A05, A06, A18, A20, A24, A27, A28, A64)."""
        return self.values[entry][key]

    def code_to_wire(self, code: str) -> str:
        """The wire's problem code for the kit's ``code`` (A64; unknown codes pass as they are)."""
        return self.values["A64"]["codes"].get(code, code)

    def codes_from_wire(self, code: str) -> tuple[str, ...]:
        """The kit's codes the wire's ``code`` stands for (several when A64 maps many to one;
        the code itself when A64 does not name it)."""
        found = tuple(sorted(k for k, v in self.values["A64"]["codes"].items() if v == code))
        return found or (code,)

    def code_from_wire(self, code: str) -> str:
        """The kit's code for the wire's ``code`` (A64): the code itself when it is one of those
        it stands for, else the first of them."""
        ours = self.codes_from_wire(code)
        return code if code in ours else ours[0]

    def only_code_from_wire(self, code: str) -> str:
        """The kit's code for the wire's ``code`` when it stands for that one alone (A64); a
        generic code, standing for several, as it came."""
        ours = self.codes_from_wire(code)
        return ours[0] if len(ours) == 1 else code

    @cached_property
    def renamed_codes(self) -> Mapping[str, str]:
        """The kit's problem code → the wire's, for the codes this dialect renames (A64; empty
        when it renames none)."""
        return {ours: theirs for ours, theirs in self.values["A64"]["codes"].items() if ours != theirs}

    @cached_property
    def wire_codes(self) -> frozenset[str]:
        """The problem codes this dialect's server sends (A64's values; a generic code, standing
        for several of the kit's, once)."""
        return frozenset(self.values["A64"]["codes"].values())

    def problem_to_wire(self, problem: Any) -> Any:
        """A problem+json body with its code spelled the wire's way (A64): its ``code`` and the
        end of its ``type``. ``problem`` itself when its code is not one this dialect renames."""
        if not isinstance(problem, dict) or not isinstance(problem.get("code"), str):
            return problem
        code: str = problem["code"]
        theirs = self.renamed_codes.get(code)
        if theirs is None:
            return problem
        spelled = {**problem, "code": theirs}
        kind = problem.get("type")
        if isinstance(kind, str) and kind.endswith(code):
            spelled["type"] = kind[: -len(code)] + theirs
        return spelled

    def value_to_wire(self, entry: str, value: str) -> str:
        """A session type (A05) or expiration strategy (A06) as the wire spells it."""
        key = "session_types" if entry == "A05" else "strategies"
        ours, theirs = register.value(entry)[key], self.values[entry][key]
        return theirs[ours.index(value)] if value in ours else value

    def value_from_wire(self, entry: str, value: str) -> str:
        """The kit's session type (A05) or expiration strategy (A06) for the wire's ``value``."""
        key = "session_types" if entry == "A05" else "strategies"
        ours, theirs = register.value(entry)[key], self.values[entry][key]
        return ours[list(theirs).index(value)] if value in theirs else value


def _respell(node: Any, dialect: Dialect) -> Any:
    """An OpenAPI document's node with its property names, required lists, header names and
    session values spelled ``dialect``'s way."""
    if isinstance(node, list):
        return [_respell(v, dialect) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {
                dialect.name_to_wire(k): _respell(_enum(k, v, dialect), dialect) for k, v in value.items()
            }
        elif key == "required" and isinstance(value, list):
            out[key] = [dialect.name_to_wire(v) if isinstance(v, str) else v for v in value]
        elif key == "headers" and isinstance(value, dict):
            out[key] = {dialect.headers.get(k.lower(), k): _respell(v, dialect) for k, v in value.items()}
        elif key == "name" and node.get("in") == "header" and isinstance(value, str):
            out[key] = dialect.headers.get(value.lower(), value)
        else:
            out[key] = _respell(value, dialect)
    return out


def _enum(name: str, schema: Any, dialect: Dialect) -> Any:
    entry = {"session_type": "A05", "expiration_strategy": "A06"}.get(name)
    if entry and isinstance(schema, dict) and isinstance(schema.get("enum"), list):
        return {**schema, "enum": [dialect.value_to_wire(entry, v) for v in schema["enum"]]}
    return schema


#: Member names whose values a dialect re-spells (A05, A06).
_VALUES = {"session_type": "A05", "expiration_strategy": "A06"}


def _values(data: Any, spell: Callable[[str, str], str]) -> Any:
    """``data`` with the values of ``session_type`` and ``expiration_strategy`` re-spelled."""
    if isinstance(data, dict):
        return {
            k: spell(_VALUES[k], v) if k in _VALUES and isinstance(v, str) else _values(v, spell)
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [_values(v, spell) for v in data]
    return data


def _pointers(data: Any, spell: Callable[[str], str]) -> Any:
    """``data`` with the JSON Pointers of a problem's ``errors[].field`` re-spelled."""
    if isinstance(data, dict) and isinstance(data.get("errors"), list):
        errors = [
            {**e, "field": spell(e["field"])}
            if isinstance(e, dict) and isinstance(e.get("field"), str)
            else e
            for e in data["errors"]
        ]
        return {**data, "errors": errors}
    return data


def _rename(body: Any, name: Any) -> Any:
    if isinstance(body, Mapping):
        return {name(k): v if k in OPAQUE or name(k) in OPAQUE else _rename(v, name) for k, v in body.items()}
    if isinstance(body, list):
        return [_rename(v, name) for v in body]
    return body


def _repoint(pointer: str, name: Any) -> str:
    if not pointer.startswith("/"):
        return pointer
    return "/" + "/".join(p if p.isdigit() else _escape(name(_unescape(p))) for p in pointer[1:].split("/"))


def _unescape(token: str) -> str:  # RFC 6901 §4
    return token.replace("~1", "/").replace("~0", "~")


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


#: The simulator's own dialect (no overlay).
DEFAULT = Dialect.of(None)
