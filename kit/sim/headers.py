"""The names of the headers of the wire contract, read from the register.

Each is the register's value (A02, A20, A27, A28), so that the register and the wire cannot drift
apart; routes and middleware import them from here.

    >>> SESSION_ID
    'svc-session-id'
"""

from __future__ import annotations

from kit import register

_PARTNER_TOKEN = register.value("A02")
#: The header that carries the partner token, and its scheme (``Authorization: Bearer …``).
AUTHORIZATION: str = _PARTNER_TOKEN["header"]
TOKEN_SCHEME: str = _PARTNER_TOKEN["scheme"]

_SERVICE = register.value("A28")
#: The session token of the user/device session a request is made in.
SESSION_ID: str = _SERVICE["session_id"]
#: When the session the answer leaves in force expires.
SESSION_EXPIRES_AT: str = _SERVICE["session_expires_at"]
#: The id of the request, on every response.
REQUEST_ID: str = _SERVICE["request_id"]
#: The register entries an answer relied on.
ASSUMPTIONS: str = _SERVICE["assumptions"]
#: The API version served, on every response.
API_VERSION: str = register.value("A27")["header"]
#: Makes a POST safe to retry.
IDEMPOTENCY_KEY: str = register.value("A20")["header"]
