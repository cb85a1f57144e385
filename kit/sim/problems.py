"""RFC 9457 problem details with a stable ``code``, in one place (register A21).

Every error the simulator answers is a :class:`Problem` raised anywhere in a route and turned
into ``application/problem+json`` here; FastAPI's and Starlette's own error shapes are
converted so they never leak. Details never echo submitted values (no PII in errors).

A problem carries the register entries whose choice it states (``assumptions``); they join
the request's ``svc-assumptions`` when it is answered.

    >>> Problem(409, "card-already-closed", "The card is closed.", assumptions=("A16",)).assumptions
    ('A16',)
"""

from __future__ import annotations

from collections.abc import Iterable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.responses import Response

from kit import register
from kit._codes import OAuthCode, ProblemCode
from kit.sim.asgi import encode_json
from kit.sim.headers import API_VERSION, ASSUMPTIONS, REQUEST_ID, deprecation_headers
from kit.sim.versions import legacy_deprecated

if TYPE_CHECKING:  # imported when the FastAPI app is built (kit.sim.app), not before
    from fastapi import FastAPI

TYPE_PREFIX: str = register.value("A21")["type_prefix"]
PROBLEM_MEDIA_TYPE = "application/problem+json"


class Problem(Exception):
    """An error answer: status, stable code, a fixed human detail and optional extras.

    ``assumptions`` are the register entries the refusal states (named in ``svc-assumptions``).
    """

    def __init__(
        self,
        status: int,
        code: ProblemCode,
        detail: str,
        *,
        title: str | None = None,
        headers: dict[str, str] | None = None,
        assumptions: Iterable[str] = (),
        **extra: Any,
    ) -> None:
        super().__init__(f"{status} {code}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail
        self.title = title or HTTPStatus(status).phrase
        self.headers = headers or {}
        self.assumptions = tuple(assumptions)
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {
            "type": TYPE_PREFIX + self.code,
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            "code": self.code,
            **self.extra,
        }

    def response(self) -> Response:
        return Response(encode_json(self.body()), self.status, self.headers, media_type=PROBLEM_MEDIA_TYPE)


def validation_problem(
    errors: list[dict[str, str]], code: ProblemCode = "validation-error", **extra: Any
) -> Problem:
    """422 for a body that does not match its schema; ``errors`` hold JSON Pointers.

    ``unknown-field`` names A22, the rule on unknown top-level fields.
    """
    if code == "validation-error":
        detail = "The request body does not match the schema; see errors."
    elif code == "unknown-field":
        detail = "The request body has fields this endpoint does not accept; see errors."
        extra.setdefault("assumptions", ("A22",))
    else:
        detail = errors[0]["message"] if errors else "The request body is not valid."
    return Problem(422, code, detail, errors=errors, **extra)


#: The 404 code of each resource looked up by id.
NOT_FOUND: dict[str, ProblemCode] = {
    "account": "account-not-found",
    "person": "person-not-found",
    "card": "card-not-found",
    "transfer": "transfer-not-found",
    "document-request": "document-request-not-found",
}


def not_found(resource: str, *assumptions: str) -> Problem:
    """404 ``<resource>-not-found`` (:data:`NOT_FOUND`): the same answer whether it never existed
    or is another partner's (A30), e.g. ``not_found("card", "A35")``; ``assumptions`` name the
    resource's entry."""
    return Problem(
        404,
        NOT_FOUND[resource],
        f"No {resource.replace('-', ' ')} with this id.",
        assumptions=assumptions,
    )


class OAuthError(Exception):
    """An RFC 6749 §5.2 error (only the token endpoints answer in this shape)."""

    def __init__(
        self, status: int, error: OAuthCode, description: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.description = description
        self.headers = headers or {}

    def response(self) -> Response:
        headers = {"Cache-Control": "no-store", "Pragma": "no-cache", **self.headers}
        body = {"error": self.error, "error_description": self.description}
        return Response(encode_json(body), self.status, headers, media_type="application/json")


_ROUTE_CODES: dict[int, ProblemCode] = {404: "not-found", 405: "method-not-allowed"}
#: The register entry of unknown paths and methods (step 1 of the order of checks).
ROUTE_ENTRY = "A44"
ROUTE_DETAILS = {
    404: "No endpoint at this path. See /openapi.json for the endpoints this API serves.",
    405: "This path does not accept this method. See /openapi.json.",
}


def install(app: FastAPI) -> None:
    """Register the handlers that turn every error into problem+json (or RFC 6749)."""
    from fastapi.exceptions import RequestValidationError

    for exc_class, handler in HANDLERS.items():
        app.add_exception_handler(exc_class, handler)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(Exception, unexpected)


async def _problem(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Problem)
    uses(request, *exc.assumptions)
    return exc.response()


async def _oauth(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, OAuthError)
    uses(request, "A21")  # the token endpoints' error shape (RFC 6749) is A21's choice too
    return exc.response()


async def _http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code in _ROUTE_CODES:
        uses(request, ROUTE_ENTRY)
    code = _ROUTE_CODES.get(exc.status_code, "http-error")
    detail = ROUTE_DETAILS.get(exc.status_code, HTTPStatus(exc.status_code).phrase)
    return Problem(exc.status_code, code, detail, headers=dict(exc.headers or {})).response()


async def _validation(request: Request, exc: Exception) -> Response:
    errors = [
        {"field": pointer(err.get("loc", ())[1:]), "message": str(err.get("msg", "invalid"))}
        for err in exc.errors()  # type: ignore[attr-defined]  # a RequestValidationError
    ]
    return validation_problem(errors).response()


async def unexpected(request: Request, exc: Exception) -> Response:
    """The 500 problem of an exception no other handler takes."""
    # Never a stack trace or a submitted value on the wire. Starlette answers this one
    # outside the middleware stack, so the service headers are set here.
    served = getattr(request.state, "api_version", None) or request.app.version
    headers = {API_VERSION: served}
    request_id = getattr(request.state, "request_id", None)
    if request_id:
        headers[REQUEST_ID] = request_id
    named = set(getattr(request.state, "assumptions", None) or ()) | {"A21"}  # the 500's shape
    chosen = getattr(getattr(request.app.state, "sim", None), "personality", None)
    if getattr(chosen, "send_assumptions", True):  # a choice overlay may send none (A61)
        headers[ASSUMPTIONS] = ",".join(sorted(named))
    if legacy_deprecated(served):
        headers.update(deprecation_headers(request.method, request.url.path))  # a legacy path's (A03)
    return Problem(500, "internal-error", "The simulator failed unexpectedly.", headers=headers).response()


#: The handlers of the errors an endpoint can raise (the route table's and FastAPI's app's).
HANDLERS: dict[Any, Any] = {Problem: _problem, OAuthError: _oauth, StarletteHTTPException: _http}


def uses(request: Request, *assumptions: str) -> None:
    """Name ``assumptions`` in the request's ``svc-assumptions`` (set up by ``ServiceHeaders``).

    Read off the scope's state, the dict ``request.state`` wraps, without building that wrapper
    (the authentication of every partner request calls this)."""
    state = request.scope.get("state")
    named = state.get("assumptions") if isinstance(state, dict) else None
    if named is not None:
        named.update(assumptions)


def pointer(path: tuple[Any, ...] | list[Any]) -> str:
    """A JSON Pointer (RFC 6901) for a location such as ``("amount", "value")``."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else ""
