"""Partner level: ``POST /oauth/accesstoken`` and the deprecated token endpoints (A01-A03).

Every answer from the deprecated path, whatever the method, carries ``Deprecation``; only the
POST's a ``Link`` to its replacement (the service headers add them: ``deprecation_headers`` of
:mod:`kit.sim.headers`). Another method there is 405 naming both of its methods.

The token endpoints answer errors as RFC 6749 §5.2 expects (``{"error", …}``), not as
problems: OAuth clients read that shape. Even clear-text personal data in the form (A11) is
refused in it, as 400 ``invalid_request``.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import secrets
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote_plus

from starlette.requests import Request
from starlette.responses import Response

from kit import register
from kit._pii import pii_parameter
from kit.sim import versions
from kit.sim.asgi import encode_json
from kit.sim.headers import AUTHORIZATION, DEPRECATED, TOKEN_PATH
from kit.sim.models import TokenResponse
from kit.sim.openapi import form_body, oauth_errors, problems
from kit.sim.pipeline import authenticate, read_body
from kit.sim.problems import ROUTE_DETAILS, ROUTE_ENTRY, OAuthError, Problem, uses
from kit.sim.runtime import Sim
from kit.sim.state import PartnerToken
from kit.sim.table import Routes

router = Routes(tags=["partner auth"])
_TOKEN = register.value("A01")
#: The methods the spec lists for the deprecated path (POST and DELETE).
((_, LEGACY_METHODS),) = DEPRECATED.items()
GRANT_TYPES: list[str] = _TOKEN["grant_types"]
#: Every 401 invalid_client names the client authentication's scheme (RFC 6749 §5.2, A01).
_CHALLENGE = {"WWW-Authenticate": "Basic"}


def _invalid_request(description: str) -> OAuthError:
    return OAuthError(400, "invalid_request", description)


def _basic_credentials(header: str) -> tuple[str, str] | None:
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise _invalid_request("The Basic credentials are not valid base64.") from None
    client_id, sep, secret = decoded.partition(":")
    if not sep:
        raise _invalid_request("The Basic credentials must be client_id:client_secret.")
    # RFC 6749 §2.3.1: both parts are form-encoded before base64.
    return unquote_plus(client_id), unquote_plus(secret)


def _refuse_clear_pii(request: Request, pairs: Iterable[tuple[str, str]], where: str) -> None:
    """Personal data only encrypted, even here (A11): a query or form parameter that is personal
    data is 400 ``invalid_request`` in the token endpoints' own shape (A01, A21), named by its
    name, never echoed."""
    name = pii_parameter(pairs)
    if name is None:
        return
    uses(request, "A11")
    which = f"A {where} parameter's name" if name == "?" else f"The {where} parameter {name}"
    raise _invalid_request(
        f"{which} is personal data, accepted only encrypted and never in a token request (A11)."
    )


async def _issue(request: Request) -> Response:
    sim: Sim = request.app.state.sim
    uses(request, "A01")
    _refuse_clear_pii(request, request.query_params.multi_items(), "query")
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/x-www-form-urlencoded":
        raise _invalid_request("Send the token request as application/x-www-form-urlencoded.")
    try:
        raw = await read_body(request)
    except Problem:
        raise _invalid_request("The token request is too large.") from None
    try:
        pairs = parse_qsl(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(raw))
    except (UnicodeDecodeError, ValueError):
        raise _invalid_request("The token request body is not a valid form.") from None
    _refuse_clear_pii(request, pairs, "form")
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            raise _invalid_request(f"The parameter {name} was sent more than once.")
        form[name] = value
    basic = _basic_credentials(request.headers.get(AUTHORIZATION, ""))
    in_form = "client_id" in form or "client_secret" in form
    if basic and in_form:
        raise _invalid_request("Send client credentials either by HTTP Basic or in the form, not both.")
    accepted = sim.personality.client_auth  # "either" unless re-chosen
    if (basic and accepted == "post") or (in_form and accepted == "basic"):
        how = "in the form (client_id, client_secret)" if accepted == "post" else "by HTTP Basic"
        raise OAuthError(
            401,
            "invalid_client",
            f"This server takes client credentials {how} only (A01).",
            headers=_CHALLENGE,
        )
    grant_type = form.get("grant_type")
    if not grant_type:
        raise _invalid_request(f"The grant_type parameter is required ({', '.join(GRANT_TYPES)}).")
    client_id, secret = basic or (form.get("client_id", ""), form.get("client_secret", ""))
    expected = sim.settings.partners.get(client_id)
    if not client_id or expected is None or not hmac.compare_digest(expected.encode(), secret.encode()):
        raise OAuthError(
            401,
            "invalid_client",
            "Client authentication failed: unknown client or wrong secret.",
            headers=_CHALLENGE,
        )
    if grant_type not in GRANT_TYPES:
        raise OAuthError(
            400, "unsupported_grant_type", f"Only grant_type={', '.join(GRANT_TYPES)} is supported."
        )
    scope = form.get("scope")
    if scope is not None and scope != _TOKEN["scope"]:
        raise OAuthError(400, "invalid_scope", f"The only scope is {_TOKEN['scope']}.")
    token = secrets.token_urlsafe(32)
    lifetime = sim.personality.token_lifetime  # A01, under a choice overlay
    state = sim.state
    state.partner_tokens[state.sealer.digest(token)] = PartnerToken(client_id, state.clock.after(lifetime))
    body = {
        "access_token": token,
        "token_type": _TOKEN["token_type"],
        "expires_in": lifetime,
        "scope": _TOKEN["scope"],
    }
    headers = {"Cache-Control": "no-store", "Pragma": "no-cache"}
    return Response(encode_json(body), 200, headers, media_type="application/json")


@router.operation(
    "access_token",
    response_model=TokenResponse,
    responses=oauth_errors(400, 401),
    openapi_extra=form_body(),
    summary="Partner access token (OAuth 2.0 client credentials)",
)
async def access_token(request: Request) -> Response:
    if not versions.token_endpoint_exists(versions.of(request.state)):  # change 1: added in 1.2.0
        uses(request, ROUTE_ENTRY)
        return Problem(404, "not-found", ROUTE_DETAILS[404]).response()
    return await _issue(request)


def _strict_refusal(sim: Sim, request: Request) -> Problem | None:
    if not sim.settings.strict or not versions.legacy_deprecated(versions.of(request.state)):
        return None
    return Problem(
        410,
        "endpoint-deprecated",
        "This endpoint is deprecated and must not be used.",
    )


@router.operation(
    "legacy_access_token",
    response_model=TokenResponse,
    responses={**oauth_errors(400, 401), **problems(410)},
    openapi_extra=form_body(),
    deprecated=True,
    summary=f"Deprecated: use POST {TOKEN_PATH}",
)
async def legacy_access_token(request: Request) -> Response:
    uses(request, "A03")
    refusal = _strict_refusal(request.app.state.sim, request)
    if refusal:
        return refusal.response()
    try:
        return await _issue(request)
    except OAuthError as exc:
        uses(request, "A21")  # the RFC 6749 error shape
        return exc.response()


@router.operation(
    "legacy_revoke",
    status_code=204,
    responses=problems(401, 410),
    deprecated=True,
    summary="Deprecated: revokes the bearer token",
)
async def legacy_revoke(request: Request) -> Response:
    sim: Sim = request.app.state.sim
    uses(request, "A03")  # and A02, as authenticate runs
    refusal = _strict_refusal(sim, request)
    if refusal:
        return refusal.response()
    try:
        authenticate(sim.state, request)
    except Problem as problem:
        return problem.response()
    token = request.headers[AUTHORIZATION].partition(" ")[2].strip()
    sim.state.partner_tokens[sim.state.sealer.digest(token)].revoked = True
    return Response(status_code=204)


@router.operation("legacy_other_methods", include_in_schema=False)
async def legacy_other_method(request: Request) -> Response:
    """405 naming both methods of the path (Starlette's own 405 would name only the first route's)."""
    uses(request, "A03", "A44")
    return Problem(
        405,
        "method-not-allowed",
        "This path does not accept this method. See /openapi.json.",
        headers={"Allow": ", ".join(sorted(LEGACY_METHODS))},
    ).response()
