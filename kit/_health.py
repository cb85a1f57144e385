"""``kit health [URL]``: whether a running ``kit serve`` answers, for a container's
``HEALTHCHECK`` (the repository's ``Dockerfile``) or a script.

It asks ``GET /_sim/health`` (A45) with the control token of ``KIT_SIM_CONTROL_TOKEN`` when one
is set: a team server bound beyond loopback has one. A server started with ``--no-control`` has
no ``/_sim`` (404), so it is asked for its OpenAPI document (``/openapi.json``, A48), which every
simulator serves without a token. The token is sent only to a loopback address or over https.

Example::

    $ kit health http://127.0.0.1:8000
    healthy: http://127.0.0.1:8000 serves 1.2.0-20221215 (control plane)
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any
from urllib.parse import urlsplit

import httpx

from kit import _env as env
from kit._headers import CONTROL_TOKEN
from kit._http import http_client

__all__ = ["DEFAULT_URL", "HEALTH_PATH", "OPENAPI_PATH", "add_parser", "probe"]

DEFAULT_URL = "http://127.0.0.1:8000"
#: The control plane's health route (``kit.sim.routes.control``) and the document every
#: simulator serves (``kit.sim.app.DOCUMENTS``).
HEALTH_PATH = "/_sim/health"
OPENAPI_PATH = "/openapi.json"


def probe(url: str, token: str | None, timeout: float = 5.0) -> tuple[bool, str]:
    """(healthy, what was found) for the ``kit serve`` at ``url``, asked with ``token``."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False, f"{url} is not an http or https URL"
    if token and parts.scheme == "http" and not env.is_loopback(parts.hostname):
        return False, f"{env.SIM_CONTROL_TOKEN} would cross the network in clear: use https or loopback"
    base = url.rstrip("/")
    headers = {CONTROL_TOKEN: token} if token else {}
    try:
        with http_client(base, timeout=timeout, headers=headers) as http:
            answer = http.get(HEALTH_PATH)
            if answer.status_code == 404:  # no control plane (--no-control): the document instead
                document = http.get(OPENAPI_PATH)
                served = _json(document).get("info", {}).get("version")
                if document.status_code == 200 and served:
                    return True, f"{base} serves {served} (no control plane)"
                return False, f"{base}{OPENAPI_PATH} answered {document.status_code}"
    except httpx.HTTPError as exc:
        return False, f"{base}: {type(exc).__name__}: {exc}"
    body = _json(answer)
    if answer.status_code == 200 and body.get("status") == "ok":
        return True, f"{base} serves {body.get('api_version')} (control plane)"
    why = body.get("code") or body.get("status") or "no JSON"
    return False, f"{base}{HEALTH_PATH} answered {answer.status_code} ({why})"


def _json(answer: httpx.Response) -> dict[str, Any]:
    try:
        body = answer.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _run(args: argparse.Namespace) -> int:
    healthy, found = probe(args.url, os.environ.get(env.SIM_CONTROL_TOKEN) or None, args.timeout)
    print(f"{'healthy' if healthy else 'unhealthy'}: {found}", file=sys.stdout if healthy else sys.stderr)
    return 0 if healthy else 1


def add_parser(commands: Any) -> None:
    """Add ``kit health`` to the CLI's sub-commands."""
    health = commands.add_parser("health", help="whether a running kit serve answers (exit 0) or not (1)")
    health.add_argument("url", nargs="?", default=DEFAULT_URL, metavar="URL", help="the server's base URL")
    health.add_argument(
        "--timeout", type=float, default=5.0, metavar="SECONDS", help="how long each request may take"
    )
    health.set_defaults(func=_run)
