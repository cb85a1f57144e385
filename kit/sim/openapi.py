"""OpenAPI helpers: routes read their bodies themselves (to keep the order of checks of
DESIGN §3), so request bodies and error responses are declared here for the document."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from kit.sim.models import OAuthErrorBody, Problem

_BODY_MODELS: dict[str, type[BaseModel]] = {}
_REF = "#/components/schemas/{model}"


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
                            "grant_type": {"type": "string", "enum": ["client_credentials"]},
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
    """``responses`` entries for problem+json errors."""
    return {
        status: {"model": Problem, "content": {"application/problem+json": {}}, "description": "Problem"}
        for status in statuses
    }


def oauth_errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {status: {"model": OAuthErrorBody, "description": "RFC 6749 error"} for status in statuses}


def install(app: FastAPI) -> None:
    """Build the document once, adding the request-body schemas declared with :func:`body`."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
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
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
