"""The API's contract, ``data/openapi.json``, and the check of one answer against it.

:class:`Contract` reads the OpenAPI document once per process (:func:`Contract.default`) and
checks an answer the client received (method, path, status, headers, parsed body) for
**drift** — each way it differs from the contract becomes one :class:`Drift` row:

- ``operation``: the method and path match no operation of the document, yet the answer is
  not a 404 or 405 (which is what the contract implies for an operation it does not have);
- ``status``: the status is not documented for the operation (exact, ``4XX`` or ``default``);
- ``content-type`` / ``body``: the media type is not documented, or the body is missing, not
  JSON, or not valid against the response schema — types, required fields, enums: openapi-core's
  OpenAPI 3.1 validators judge a body unless :mod:`kit._shapes` settles it (a structural schema it
  surely meets, or a shape that passed before); they are built when first needed;
- ``header``: ``svc-request-id`` or ``svc-api-version`` missing (register entry A28, A27), or a
  header the document declares required for the answer (``Deprecation``, ``svc-p2p-role``…);
- ``version``: ``svc-api-version`` is not the version of the document judging it (A27: ``for_version``);
- ``code``: a problem ``code`` (or RFC 6749 ``error``) that is neither an ``enum`` value of the
  response schema nor in the kit's error catalogue (:data:`kit.errors.by_code`; register A21).

A row holds no value from the answer (a type drift names JSON types); never a body.
**Spec or choice.** Each row names its ``basis`` (:attr:`Drift.basis`) from the explicit tables
:data:`OPERATIONS` and :data:`HEADER_BASIS`: a departure from the spec (an endpoint it names
answering 404/405, a removed endpoint answering, another version) is **drift**; one from a
register entry (a field, type, status, code or header the spec does not show) is a
**difference** (:attr:`Drift.differs`).

Example::

    >>> contract = Contract.default()
    >>> contract.operation("GET", "/cards/card_123")
    'GET /cards/{card_id}'
    >>> row = contract.check("GET", "/cards/card_1", 418, {}, None)[-1]
    >>> row.field, row.basis, row.differs
    ('status', 'A21', True)
"""

from __future__ import annotations

import dataclasses
import json
import operator
import re
import threading
from collections.abc import Mapping
from functools import cache, cached_property, partial, reduce
from typing import Any, NamedTuple

from kit import register
from kit._drift import Drift, json_type, schema_rows
from kit._operations import OPERATIONS as TABLE
from kit._outgoing import HEADERS as NAMES
from kit._shapes import Memo, deref, import_validators
from kit.errors import by_code

__all__ = ["DOCUMENT", "HEADERS", "HEADER_BASIS", "OPERATIONS", "REMOVED", "Contract", "basis_of"]

#: The contract's file name in ``data/`` (:func:`kit.register.data_dir`).
DOCUMENT = "openapi.json"
_VERSION_HEADER = NAMES.api_version
#: The response headers a check reads (lower case): request id, API version, content type, and
#: those the document may declare required (their entries: :data:`HEADER_BASIS`).
_DECLARED = {"deprecation": "A03", "link": "A03", NAMES.p2p_role: "A18"}
HEADERS = frozenset({NAMES.request_id, _VERSION_HEADER, "content-type", *_DECLARED})
_VERSION_REFUSALS = frozenset({"unsupported-api-version", "invalid_request"})
_JSON_MEDIA = re.compile(r"^application/(?:[\w.+-]+\+)?json$")
_CODE_SHAPE = re.compile(r"^(?=.*[A-Za-z])[A-Za-z0-9_.:-]{1,64}$")
#: The statuses that say "no such operation": what the contract implies for one it lacks.
_ABSENT = frozenset({404, 405})
_VERSION_SHAPE = re.compile(r"^[A-Za-z0-9_.+-]{1,40}$")

#: What each operation of the document rests on: ``(spec statement, register entry)``. The
#: statement (``""`` where the spec does not name the operation) is what the spec states — that
#: the endpoint exists; the entry chose the rest — its statuses, fields, types and body shape.
#: Read from the one table of operations (:mod:`kit._operations`), the removed ones aside.
OPERATIONS: Mapping[str, tuple[str, str]] = {
    f"{method} {op.path}": (op.basis if op.basis.startswith("endpoint.") else "", op.entry)
    for op in TABLE
    if not (op.rest or op.removed_in)
    for method in op.methods
}
#: The simulator's control plane (``/_sim/…``): the simulator's own (A45).
CONTROL_PLANE_ENTRY = "A45"
#: Error answers (status 400 and above): their statuses, media type, body shape and codes are
#: the register's choice (the spec shows none: ``error.1``).
ERROR_ENTRY = "A21"
#: An operation the document does not have, answered anyway.
UNKNOWN_ENTRY = "A44"
#: Endpoints the spec says no longer exist: an answer other than 404/405 is drift.
REMOVED: Mapping[str, str] = {
    f"{method} {op.path}": op.basis
    for op in TABLE
    if op.removed_in and not op.rest and op.basis.startswith("endpoint.")
    for method in op.methods
}
_REMOVED_PATTERNS = {
    re.compile("^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(k.split(" ", 1)[1])) + "$"): (k, v)
    for k, v in REMOVED.items()
}
#: What the checked response headers rest on: the request id (A28), the version header (A27),
#: the deprecation headers (A03), the P2P role (A18); the version announced is the spec's
#: (``version.1``). No header name is the spec's: a missing one is a difference.
HEADER_BASIS: Mapping[str, str] = {
    f"header {NAMES.request_id}": "A28",
    f"header {_VERSION_HEADER}": "A27",
    **{f"header {name}": entry for name, entry in _DECLARED.items()},
}
VERSION_STATEMENT = "version.1"
_CHECKED = frozenset({NAMES.request_id, _VERSION_HEADER})  # by ``_headers``, on every answer


def basis_of(kind: str, operation: str, status: int, field: str) -> str:
    """The basis of one drift row (see the module docstring): a spec statement id or a
    register entry id.

    Example::

        >>> basis_of("status", "POST /sessions", 404, "status")
        'endpoint.5'
        >>> basis_of("body", "GET /cards/{card_id}", 200, "body.last4")
        'A35'
    """
    if kind == "version":
        return VERSION_STATEMENT
    if kind == "header":
        return HEADER_BASIS.get(field, "A28")
    if kind == "operation":
        method, _, path = operation.partition(" ")
        for pattern, (key, statement) in _REMOVED_PATTERNS.items():
            if key.startswith(method + " ") and pattern.match(path):
                return statement
        return UNKNOWN_ENTRY
    if operation.split(" ", 1)[-1].startswith("/_sim/"):
        return CONTROL_PLANE_ENTRY
    statement, entry = OPERATIONS.get(operation, ("", UNKNOWN_ENTRY))
    if kind == "status" and statement and status in _ABSENT:
        return statement  # an endpoint the spec names is not there
    if kind == "code" or status >= 400:
        return ERROR_ENTRY
    return entry


class _Answer(NamedTuple):
    """What the contract documents for one operation and status: media type → body check."""

    documented: bool
    media: Mapping[str, Memo | None]
    codes: frozenset[str] | None  # an enum on ``code`` / ``error``, when the document has one
    headers: frozenset[str] = frozenset()  # the headers it declares required (lower case)


@cache
def _versions() -> tuple[str, frozenset[str]]:
    """The spec's version and A27's served versions, read once."""
    return str(register.fact("version")), frozenset(register.value("A27")["versions"])


class Contract:
    """An OpenAPI document, its operations and (lazily, cached) its response validators.

    ``document`` is the parsed OpenAPI 3.1 document (kept, not copied); ``version`` the API version
    every answer must announce; ``codes`` the problem codes documented where the document lists none.

    Raises:
        ValueError: the document has no ``paths``.
    """

    def __init__(self, document: Mapping[str, Any], *, version: str, codes: frozenset[str]) -> None:
        if not isinstance(document.get("paths"), Mapping):
            raise ValueError("the OpenAPI document has no paths")
        self.version = version
        self.codes = codes
        self._document = document
        self._exact: dict[tuple[str, str], str] = {}
        templated: dict[str, list[str]] = {}
        for template, operations in document["paths"].items():
            for method in operations:
                key = f"{method.upper()} {template}"
                if "{" in template:
                    templated.setdefault(method.upper(), []).append(key)
                else:
                    self._exact[(method.upper(), template)] = key
        # one regex per method: an alternative per templated path, named by its position
        self._templated: dict[str, tuple[re.Pattern[str], list[str]]] = {}
        for method, keys in templated.items():
            parts = [re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(k.split(" ", 1)[1])) for k in keys]
            alternatives = "|".join(f"(?P<p{i}>{part})" for i, part in enumerate(parts))
            self._templated[method] = (re.compile(f"^(?:{alternatives})$"), keys)
        self._answers: dict[tuple[str, int], _Answer] = {}
        self._lock = threading.Lock()

    @classmethod
    def default(cls) -> Contract:
        """The contract of ``data/openapi.json``, built once per process (FileNotFoundError: none)."""
        return _load(DOCUMENT, _versions()[0])

    @classmethod
    def for_version(cls, version: str | None) -> Contract:
        """The contract of the version that served an answer (A27), else :meth:`default`."""
        current, served = _versions()
        other = version in served and version != current
        return _load(f"openapi-{version}.json", str(version)) if other else cls.default()

    def operation(self, method: str, path: str) -> str | None:
        """``"GET /cards/{card_id}"`` for a request line, or ``None`` when the contract has none."""
        method = method.upper()
        path = path.split("?", 1)[0]
        found = self._exact.get((method, path))
        if found is None and method in self._templated:
            pattern, keys = self._templated[method]
            match = pattern.match(path)
            if match is not None and match.lastgroup is not None:
                found = keys[int(match.lastgroup[1:])]
        return found

    def _answer(self, operation: str, status: int) -> _Answer:
        key = (operation, status)
        answer = self._answers.get(key)
        if answer is None:
            with self._lock:
                answer = self._answers.get(key) or self._build(operation, status)
                self._answers[key] = answer
        return answer

    @cached_property
    def _spec(self) -> Any:  # openapi-core: only for a body kit._shapes.conforms cannot settle
        import_validators()
        from jsonschema_path import SchemaPath

        return SchemaPath.from_dict(self._document)

    def _build(self, operation: str, status: int) -> _Answer:
        method, template = operation.split(" ", 1)
        responses = self._document["paths"][template][method.lower()]["responses"]
        found = next((k for k in (str(status), f"{str(status)[0]}XX", "default") if k in responses), None)
        if found is None:
            return _Answer(False, {}, None)
        media: dict[str, Memo | None] = {}
        codes: frozenset[str] | None = None
        for mimetype, content in responses[found].get("content", {}).items():
            if "schema" not in content:
                media[mimetype] = None
                continue
            where = ("paths", template, method.lower(), "responses", found, "content", mimetype, "schema")
            media[mimetype] = Memo(partial(self._validator, where), content["schema"], self._document)
            props = deref(content["schema"], self._document).get("properties", {})
            for name in ("code", "error"):
                enum = props.get(name, {}).get("enum") if isinstance(props.get(name), Mapping) else None
                if enum:
                    codes = frozenset(map(str, enum))
        declared = responses[found].get("headers", {})
        required = frozenset(n.lower() for n, h in declared.items() if h.get("required"))
        return _Answer(True, media, codes, required)

    def _validator(self, where: tuple[str, ...]) -> Any:
        from openapi_core.validation.schemas import oas31_schema_validators_factory

        schema = reduce(operator.truediv, where, self._spec)
        return oas31_schema_validators_factory.create(self._spec, schema).validator

    def check(
        self,
        method: str,
        path: str,
        status: int,
        headers: Mapping[str, str],
        body: Any,
        *,
        content_type: str | None = None,
        has_content: bool | None = None,
    ) -> list[Drift]:
        """Every drift of one answer (empty when it matches the contract).

        ``body`` is the parsed JSON (``None`` when there was none or it was not JSON);
        ``content_type`` defaults to the ``content-type`` header; ``has_content`` (default:
        ``body is not None``) tells an empty answer from one that was not JSON.

        Example::

            >>> Contract.default().check("DELETE", "/sessions", 204, {
            ...     "svc-request-id": "r1", "svc-api-version": "1.2.0-20221215"}, None)
            []

        Raises:
            Nothing.
        """
        rows = self._rows(method, path, status, headers, body, content_type, has_content)
        return [dataclasses.replace(d, basis=basis_of(d.kind, d.operation, status, d.field)) for d in rows]

    def _rows(
        self,
        method: str,
        path: str,
        status: int,
        headers: Mapping[str, str],
        body: Any,
        content_type: str | None,
        has_content: bool | None,
    ) -> list[Drift]:
        rid = headers.get(NAMES.request_id)
        refusal = isinstance(body, Mapping) and _VERSION_REFUSALS & {body.get("code"), body.get("error")}
        if (
            status == 400
            and refusal
            and "version" in str(body.get("detail") or body.get("error_description"))
        ):
            return []  # step 0, before routing, on any path: an unserved version refused (A27)
        operation = self.operation(method, path)
        if operation is None:
            where = f"{method.upper()} {path.split('?', 1)[0]}"
            rows = [Drift(*row, rid) for row in self._headers(where, headers)]
            if status not in _ABSENT:
                return [
                    *rows,
                    Drift(
                        "operation", where, "operation", "404 or 405 (not in the contract)", str(status), rid
                    ),
                ]
            code = self._code(where, body, None) if isinstance(body, Mapping) else []
            return rows + [Drift(*row, rid) for row in code]
        rows = [Drift(*row, rid) for row in self._headers(operation, headers)]
        answer = self._answer(operation, status)
        missing = sorted(n for n in answer.headers & HEADERS if n not in _CHECKED and not headers.get(n))
        rows += [Drift("header", operation, f"header {n}", "present", "missing", rid) for n in missing]
        if not answer.documented:
            return [*rows, Drift("status", operation, "status", self._statuses(operation), str(status), rid)]
        if not answer.media:
            return rows
        ctype = (content_type if content_type is not None else headers.get("content-type", "")).split(";")[0]
        ctype = ctype.strip().lower()
        if ctype not in answer.media:
            expected = " or ".join(sorted(answer.media))
            return [*rows, Drift("content-type", operation, "content-type", expected, ctype or "none", rid)]
        if body is None and _JSON_MEDIA.match(ctype):
            empty = not (has_content if has_content is not None else False)
            return [
                *rows,
                Drift("body", operation, "body", f"a {ctype} body", "empty" if empty else "not JSON", rid),
            ]
        check = answer.media[ctype]
        if check is not None:
            for error in check.errors(body):
                rows += [Drift(k, operation, f, e, g, rid) for k, f, e, g in schema_rows(error)]
        if status >= 400 and isinstance(body, Mapping):
            rows += [Drift(*row, rid) for row in self._code(operation, body, answer.codes)]
        return rows

    def _headers(self, operation: str, headers: Mapping[str, str]) -> list[tuple[str, str, str, str, str]]:
        rows = []
        for name in (NAMES.request_id, _VERSION_HEADER):
            if not headers.get(name):
                rows.append(("header", operation, f"header {name}", "present", "missing"))
        got = headers.get(_VERSION_HEADER)
        if got and got != self.version:
            shown = got if _VERSION_SHAPE.match(got) else "another value"
            rows.append(("version", operation, f"header {_VERSION_HEADER}", self.version, shown))
        return rows

    def _code(
        self, operation: str, body: Mapping[str, Any], enum: frozenset[str] | None
    ) -> list[tuple[str, str, str, str, str]]:
        name = "code" if "code" in body else "error" if "error" in body else None
        if name is None or enum is not None:  # an enum in the document: the schema checked it
            return []
        code = body[name]
        if isinstance(code, str) and code in self.codes:
            return []
        kind = json_type(code)
        shown = (
            code
            if isinstance(code, str) and _CODE_SHAPE.match(code)
            else f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"
        )
        return [("code", operation, f"body.{name}", "a documented problem code", shown)]

    def _statuses(self, operation: str) -> str:
        method, template = operation.split(" ", 1)
        return "one of " + ", ".join(self._document["paths"][template][method.lower()]["responses"])


@cache
def _load(name: str, version: str) -> Contract:
    with open(register.data_dir() / name, encoding="utf-8") as f:
        return Contract(json.load(f), version=version, codes=frozenset(by_code))
