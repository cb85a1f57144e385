"""The names of the headers of the wire contract, read from the register: the one place the
simulator takes them from.

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
#: Tells the sender from the receiver on a P2P transfer's answers (A18).
ROLE: str = register.value("A18")["role_header"]
#: Carries a webhook delivery's detached JWS (A24).
SIGNATURE: str = register.value("A24")["header"]
#: Marks an answer replayed for a retried ``IDEMPOTENCY_KEY`` (A20's words; no value of its own yet).
REPLAYED = "Idempotent-Replayed"

_SPEC = {"deprecated_endpoints": register.fact("deprecated_endpoints")}
_LEGACY = register.value("A03")
#: The token endpoint: the spec's replacement for the deprecated POST ("Replaced by POST
#: /oauth/accesstoken", endpoint.2).
(TOKEN_PATH,) = {
    e["replaced_by"].split(" ", 1)[1] for e in _SPEC["deprecated_endpoints"] if "replaced_by" in e
}
#: The deprecated endpoints' path(s) and the methods the spec lists for each (endpoint.2, endpoint.3).
DEPRECATED: dict[str, list[str]] = {}
for _endpoint in _SPEC["deprecated_endpoints"]:
    DEPRECATED.setdefault(_endpoint["path"], []).append(_endpoint["method"])
_REPLACED = {
    (e["method"], e["path"]): e["replaced_by"] for e in _SPEC["deprecated_endpoints"] if "replaced_by" in e
}


def deprecation_headers(method: str, path: str) -> dict[str, str]:
    """The headers of every answer from a deprecated endpoint's path, whatever the method (A03):
    ``Deprecation``, and a ``Link`` to the replacement only where the spec names one (the POST's:
    "Replaced by POST /oauth/accesstoken"; it names none for the DELETE). Empty for other paths.

    >>> sorted(deprecation_headers("DELETE", "/authorization/server_api/access_tokens"))
    ['Deprecation']
    """
    if path not in DEPRECATED:
        return {}
    headers = {"Deprecation": _LEGACY["deprecation"]}
    replaced_by = _REPLACED.get((method, path))
    if replaced_by:
        headers["Link"] = f'<{replaced_by.split(" ", 1)[1]}>; rel="{_LEGACY["link_relation"]}"'
    return headers
