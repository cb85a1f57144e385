"""OpenAPI helpers: routes read their bodies themselves (to keep the order of checks of
``kit.sim.pipeline``), so request bodies and error responses are declared here for the document.

:func:`declare` declares a partner route with the errors every such route can answer already
listed: 401 (partner token, step 2; session validity, step 5) and, for a POST, 400, 409, 413,
415 and 422 (body parsing, step 3; ``Idempotency-Key``, step 4; schema, step 10).

    >>> @declare(router, "create_account", AccountOut, status=201, takes=AccountCreate, errors=(403,),
    ...          summary="Create an account")
    ... async def create_account(request: Request) -> Response: ...  # doctest: +SKIP
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from kit import register
from kit._dialect import Dialect
from kit._headers import HeaderNames
from kit._operations import request_line
from kit._pii import ENCRYPTED_PREFIX
from kit.sim import routes as partner
from kit.sim import versions
from kit.sim.headers import (
    API_VERSION,
    ASSUMPTIONS,
    IDEMPOTENCY_KEY,
    REQUEST_ID,
    ROLE,
    SESSION_EXPIRES_AT,
    SESSION_ID,
    TOKEN_PATH,
)
from kit.sim.models import OAuthErrorBody, ProblemBody
from kit.sim.personality import Personality
from kit.sim.problems import PROBLEM_MEDIA_TYPE
from kit.sim.table import RouteTableError

if TYPE_CHECKING:  # FastAPI is imported when the app is built (kit.sim.app), not here
    from fastapi import FastAPI

    from kit.sim.table import Routes, RouteTable

_BODY_MODELS: dict[str, type[BaseModel]] = {}
_REF = "#/components/schemas/{model}"
F = TypeVar("F", bound=Callable[..., Any])
#: What every partner POST can answer besides its own errors (steps 2-5 and 10).
POST_ERRORS = (400, 401, 409, 413, 415, 422)


def declare(
    router: Routes,
    key: str,
    out: type[BaseModel] | None = None,
    *,
    summary: str,
    status: int = 200,
    takes: type[BaseModel] | None = None,
    body_required: bool = True,
    errors: Iterable[int] = (),
    **extra: Any,
) -> Callable[[F], F]:
    """The decorator declaring the endpoint of partner operation ``key`` (its method and path
    are ``kit.sim.routes.OPERATIONS``'): its answer ``out`` with ``status``, the JSON body it
    ``takes`` and its own ``errors`` (403, 404…) beside those every such route can answer.

    Raises:
        RouteTableError: the models' ``encrypted_*`` members are not those the operations table
            gives the operation (:attr:`kit._operations.Operation.encrypted`, ``encrypted_answer``).
    """
    operation = partner.BY_KEY[key]
    for model, members, where in (
        (takes, operation.encrypted, "body"),
        (out, operation.encrypted_answer, "answer"),
    ):
        if _encrypted_members(model) != members:
            raise RouteTableError(
                f"{key}: the {where} model declares encrypted members {_encrypted_members(model)}, "
                f"the operations table {members}"
            )
    common = POST_ERRORS if "POST" in operation.methods else (401,)
    declared: dict[str, Any] = {"responses": problems(*sorted({*common, *errors}))}
    if takes is not None:
        declared["openapi_extra"] = body(takes, required=body_required)
    decorator: Callable[[F], F] = router.operation(
        key, status_code=status, response_model=out, summary=summary, **declared, **extra
    )
    return decorator


def _encrypted_members(model: type[BaseModel] | None) -> tuple[str, ...]:
    return tuple(n for n in (model.model_fields if model else ()) if n.startswith(ENCRYPTED_PREFIX))


def body(model: type[BaseModel], *, required: bool = True) -> dict[str, Any]:
    """``openapi_extra`` declaring a JSON request body of ``model``."""
    _BODY_MODELS[model.__name__] = model
    return {
        "requestBody": {
            "required": required,
            "content": {"application/json": {"schema": {"$ref": _REF.format(model=model.__name__)}}},
        }
    }


def form_body() -> dict[str, Any]:
    """``openapi_extra`` for the OAuth token request (RFC 6749 §4.4)."""
    return {
        "requestBody": {
            "required": True,
            "content": {
                "application/x-www-form-urlencoded": {
                    "schema": {
                        "type": "object",
                        "required": ["grant_type"],
                        "properties": {
                            "grant_type": {
                                "type": "string",
                                "enum": list(register.value("A01")["grant_types"]),
                            },
                            "client_id": {"type": "string"},
                            "client_secret": {"type": "string"},
                            "scope": {"type": "string"},
                        },
                    }
                }
            },
        }
    }


def problems(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """``responses`` entries for problem+json errors (the content type is fixed in :func:`install`)."""
    return {status: {"model": ProblemBody, "description": "Problem (RFC 9457)"} for status in statuses}


#: What each status of the token endpoints' RFC 6749 errors means there (A01, A11, A21).
_OAUTH_ERRORS = {
    400: "RFC 6749 error: invalid_request (a malformed request, or a query or form parameter "
    "that is personal data in clear, A11), unsupported_grant_type or invalid_scope",
    401: "RFC 6749 error: invalid_client",
}


def oauth_errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """``responses`` entries for the token endpoints' errors: RFC 6749 §5.2 bodies, whatever
    refuses the request (clear-text personal data too: A01, A11, A21)."""
    return {status: {"model": OAuthErrorBody, "description": _OAUTH_ERRORS[status]} for status in statuses}


def install(app: FastAPI, chosen: Personality, table: RouteTable) -> None:
    """Build the document once, on first need: the partner operations as ``table`` declares
    and serves them (its routes are never ``app``'s), then ``app``'s own routes, and the
    request-body schemas declared with :func:`body`; its chosen parts are ``chosen``'s (a
    choice overlay's: :func:`follow`)."""
    served = {route.key: route.path for route in table.routes}

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            from fastapi.openapi.utils import get_openapi
            from pydantic.json_schema import models_json_schema

            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=[*table.api_router().routes, *app.routes],
                tags=app.openapi_tags,
            )
            _, defs = models_json_schema(
                [(m, "validation") for m in _BODY_MODELS.values()], ref_template=_REF
            )
            schema.setdefault("components", {}).setdefault("schemas", {}).update(defs.get("$defs", {}))
            schema["components"]["securitySchemes"] = {
                "partnerToken": {"type": "http", "scheme": "bearer"},
                "clientBasic": {"type": "http", "scheme": "basic"},
            }
            _finish(schema, served)
            if chosen.overlay:
                follow(schema, chosen)
                authentication(schema, chosen.dialect)
            # One document per version served (A27); FastAPI's own is the spec version's.
            app.state.openapi_documents = {v: versions.document(schema, v) for v in chosen.versions}
            app.openapi_schema = app.state.openapi_documents[versions.CURRENT]
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    _serve_per_version(app, chosen.versions)


def _serve_per_version(app: FastAPI, served: tuple[str, ...]) -> None:
    """``/openapi.json`` answers the document of the version serving the request (A27, A48:
    ``svc-api-version``, or the ``version`` query parameter a browser page can send; absent,
    the server's default), and ``/docs`` offers each version's document."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def document(request: Request) -> JSONResponse:
        app.openapi()
        return JSONResponse(app.state.openapi_documents[versions.of(request.state)])

    url = app.openapi_url
    if url is None:
        return
    app.router.routes[:] = [
        Route(url, document, include_in_schema=False) if getattr(route, "path", None) == url else route
        for route in app.router.routes
    ]
    app.swagger_ui_parameters = {
        **(app.swagger_ui_parameters or {}),
        "urls": [{"url": f"{url}?{versions.DOCUMENT_QUERY}={v}", "name": v} for v in reversed(served)],
        "urls.primaryName": versions.CURRENT,
    }


#: The problem schema's name in the document (the wire contract's, whatever the model's).
_PROBLEM = "Problem"
_PROBLEM_REF = {"$ref": f"#/components/schemas/{_PROBLEM}"}
# The token endpoint and the deprecated one (whose DELETE takes the bearer token it revokes).
_LEGACY_PATH = register.fact("deprecated_endpoints")[0]["path"]
_TOKEN_PATHS = (TOKEN_PATH, _LEGACY_PATH)


def _takes_client_credentials(path: str, method: str) -> bool:
    """A token request: client credentials, not a partner token (A01); the deprecated path's
    DELETE takes the bearer token it revokes (A02)."""
    return path.startswith(_TOKEN_PATHS) and not (path == _LEGACY_PATH and method == "delete")


def _header(name: str, description: str, *, required: bool = False, **schema: Any) -> dict[str, Any]:
    return {
        "name": name,
        "in": "header",
        "required": required,
        "schema": {"type": "string", **schema},
        "description": description,
    }


_FASTAPI_422 = "#/components/schemas/HTTPValidationError"


def _refs(response: dict[str, Any]) -> list[str]:
    return [c.get("schema", {}).get("$ref", "") for c in response.get("content", {}).values()]


def _finish(schema: dict[str, Any], paths: Mapping[str, str]) -> None:
    """Problems as application/problem+json, security and the svc-* request headers; ``paths``
    the operations' paths by key."""
    p2p = {paths[key] for key in _P2P_KEYS}
    schema["components"]["schemas"] = {
        _PROBLEM if name == ProblemBody.__name__ else name: component
        for name, component in schema["components"]["schemas"].items()
        if name not in ("HTTPValidationError", "ValidationError")
    }
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            responses = operation.get("responses", {})
            if not path.startswith("/_sim") and _refs(responses.get("422", {})) == [_FASTAPI_422]:
                # FastAPI's own for path parameters; plain str parameters never fail it
                del responses["422"]
            for status, response in responses.items():
                refs = _refs(response)
                if status.startswith(("4", "5")) and any(
                    r.endswith((f"/{ProblemBody.__name__}", "/HTTPValidationError")) for r in refs
                ):
                    response["content"] = {PROBLEM_MEDIA_TYPE: {"schema": _PROBLEM_REF}}
                    response["description"] = "Problem (RFC 9457)"
            if path.startswith("/_sim"):
                continue
            if _takes_client_credentials(path, method):
                operation["security"] = [{"clientBasic": []}]
                continue
            operation["security"] = [{"partnerToken": []}]
            params = operation.setdefault("parameters", [])
            params.append(_header(SESSION_ID, "The current user/device session token"))
            if method == "post":
                params.append(
                    _header(
                        IDEMPOTENCY_KEY,
                        "Makes the POST safe to retry (register A20)",
                        required=path == paths["create_transfer"],
                        minLength=1,
                        maxLength=register.value("A47")["idempotency_key_max_chars"],
                    )
                )
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if not path.startswith("/_sim"):
                _response_headers(path, method, operation, p2p)


#: The P2P operations, whose answers carry the role header (A18).
_P2P_KEYS = ("create_transfer", "get_transfer")
#: The headers every answer of a partner operation may carry: name → (required, entry, what).
_EVERY_ANSWER = {
    REQUEST_ID: (True, "A28", "The request's id"),
    API_VERSION: (True, "A27", "The API version that served the request"),
    ASSUMPTIONS: (
        False,
        "A61",
        "The register entries the answer relied on (unless A61 says not)",
    ),
}


def response_header(required: bool, entry: str, what: str) -> dict[str, Any]:
    """A response header's declaration: its entry names the choice (a missing one is a
    difference from that entry: no header name is the spec's but svc-session-id)."""
    return {
        "description": f"{what} (register {entry})",
        "required": required,
        "schema": {"type": "string"},
        "x-assumption": entry,
    }


def _response_headers(path: str, method: str, operation: dict[str, Any], p2p: set[str]) -> None:
    """Declare the headers of each answer of a partner operation, each with its register entry:
    the service headers (A27, A28, A61), the session's expiry (A28), ``Deprecation`` and ``Link``
    on the deprecated token endpoint's path (A03), the P2P role (A18), ``WWW-Authenticate`` on a
    401 (a token request's Basic challenge, A01; the partner token's, A02) and ``Retry-After`` on
    a 429 (A32)."""
    for status, response in operation.get("responses", {}).items():
        declared = {name: response_header(*about) for name, about in _EVERY_ANSWER.items()}
        if status.startswith("2") and any(
            p.get("name") == SESSION_ID for p in operation.get("parameters", [])
        ):
            declared[SESSION_EXPIRES_AT] = response_header(
                False, "A28", "When the session the answer leaves in force expires"
            )
        if path == _LEGACY_PATH:
            declared["Deprecation"] = response_header(
                True, "A03", "The endpoint is deprecated (endpoint.2, .3)"
            )
            if method == "post":
                successor = f"The successor: {request_line('access_token')}"
                declared["Link"] = response_header(True, "A03", successor)
        if path in p2p and status.startswith("2"):
            declared[ROLE] = response_header(
                True, "A18", "Whether the session's person is the sender or the receiver (p2p.1)"
            )
        if status == "401" and _takes_client_credentials(path, method):
            declared["WWW-Authenticate"] = response_header(
                True, "A01", "Basic, the client authentication's scheme, RFC 6749 §5.2"
            )
        elif status == "401":
            declared["WWW-Authenticate"] = response_header(False, "A02", "The scheme of the partner token")
        if status == "429":
            declared["Retry-After"] = response_header(False, "A32", "Seconds until the window ends")
        response["headers"] = declared


def authentication(schema: dict[str, Any], dialect: Dialect) -> None:
    """The security schemes as ``dialect`` chose them: the partner token's header and scheme
    (A02: HTTP authentication in ``Authorization``, else an API key in its own header, its
    scheme the pattern of a 401's ``WWW-Authenticate``) and the token request's client
    authentication (A01: HTTP Basic, the form's ``client_id`` and ``client_secret``, or either)."""
    header, scheme = HeaderNames.of(dialect).authorization, dialect.chosen("A02", "scheme")
    schemes = schema["components"]["securitySchemes"]
    if header.lower() == "authorization":
        schemes["partnerToken"] = {"type": "http", "scheme": scheme.lower()}
    else:
        schemes["partnerToken"] = {"type": "apiKey", "in": "header", "name": header}
    client_auth = dialect.chosen("A01", "client_auth")
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if path.startswith("/_sim"):
                continue
            challenge = (
                operation.get("responses", {}).get("401", {}).get("headers", {}).get("WWW-Authenticate")
            )
            if not _takes_client_credentials(path, method):
                if challenge is not None:
                    challenge["schema"] = {"type": "string", "pattern": f"^{re.escape(scheme)}( |$)"}
                continue
            if client_auth == "post":
                operation["security"] = []
            form = operation.get("requestBody", {}).get("content", {})
            for content in form.values():
                props = content.get("schema", {}).get("properties", {})
                if client_auth == "basic":
                    props.pop("client_id", None)
                    props.pop("client_secret", None)
                elif client_auth == "post":
                    content["schema"]["required"] = ["grant_type", "client_id", "client_secret"]


def follow(schema: dict[str, Any], chosen: Personality) -> None:
    """The document of a simulator under a choice overlay: its enumerations (card types, close
    reasons), the fields it sends (A62) and its ids (A60) are the overlay's, and ``info`` lists
    every value the overlay re-chose (``x-choices``: entry → its effective value) and what the
    overlay is. ``data/openapi.json`` stays the document of the register's own choices."""
    from kit.sim.bodies import CardClose, CardCreate
    from kit.sim.representations import REPRESENTATIONS

    components = schema["components"]["schemas"]
    components[CardCreate.__name__]["properties"]["type"]["enum"] = list(chosen.card_types)
    components[CardClose.__name__]["properties"]["reason"]["enum"] = [*chosen.close_reasons, None]
    for model in REPRESENTATIONS.values():
        component = components.get(model.__name__)
        if component is None:
            continue
        for name in chosen.omitted_fields(model):
            component["properties"].pop(name, None)
            if name in component.get("required", []):
                component["required"].remove(name)
        if chosen.uuid_ids:
            for name, prop in component["properties"].items():
                if name.endswith("_id") and prop.get("type") == "string":
                    prop["format"] = "uuid"
    _follow_wire(schema, chosen)
    overlay = chosen.overlay
    info = schema["info"]
    entries = overlay.entries()
    named = overlay.description or overlay.source or "given at start"
    info["description"] += (
        f" This server answers under a dialect file ({named}): it re-chooses {', '.join(entries)} "
        "(x-choices)."
    )
    info["x-choices"] = {entry: overlay.value(entry) for entry in entries}


#: The operations A63 makes need a session (``cards_and_events_require_session``).
SESSION_OPERATIONS = ("create_card", "get_card", "close_card", "send_event")


def session_routes(paths: Mapping[str, str] | None = None) -> tuple[tuple[str, str], ...]:
    """``(path, method)`` of the document for each of :data:`SESSION_OPERATIONS`, at ``paths``
    ({key: path}: a personality's, where a dialect file moves some) or the default path."""
    moved = paths or {}
    return tuple(
        (moved.get(key, partner.BY_KEY[key].path), method.lower())
        for key in SESSION_OPERATIONS
        for method in partner.BY_KEY[key].methods
    )


#: :func:`session_routes` at the default paths.
SESSION_ROUTES = session_routes()
_ASSUMPTIONS_SENTENCE = re.compile(r"[;.] every answer names the entries[^.;]*svc-assumptions")


def _follow_wire(schema: dict[str, Any], chosen: Personality) -> None:
    """The rest of what an overlay re-chooses that the document tells: the session header
    required on card and event routes (A63), the renamed problem codes (A64), the partner
    token's lifetime (A01) and whether answers carry ``svc-assumptions`` (A61)."""
    if chosen.require_session:
        for path, method in session_routes(chosen.paths()):
            for param in schema["paths"].get(path, {}).get(method, {}).get("parameters", []):
                if param.get("in") == "header" and param.get("name") == SESSION_ID:
                    param["required"] = True
                    param["description"] = "An account or person session: required by this server (A63)"
    components = schema["components"]["schemas"]
    codes = chosen.dialect.renamed_codes
    if codes:
        renamed = ", ".join(f"{ours} is sent as {theirs}" for ours, theirs in sorted(codes.items()))
        code = components[_PROBLEM]["properties"]["code"]
        code["description"] = f"This server's problem codes (A64): {renamed}"
    token = components.get("TokenResponse", {}).get("properties", {}).get("expires_in")
    if token is not None and "token_lifetime_seconds" in chosen.overlay.changes("A01"):
        token["description"] = f"Seconds the token lives: {chosen.token_lifetime} on this server (A01)"
    if not chosen.send_assumptions:
        info = schema["info"]
        instead = "; this server names no register entry in its answers (no svc-assumptions, A61)"
        info["description"] = _ASSUMPTIONS_SENTENCE.sub(instead, info["description"])
