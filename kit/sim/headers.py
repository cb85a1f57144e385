"""The simulator's names of the wire's headers, and the deprecated endpoints' own headers (A03).

Each name is read from its one home, :mod:`kit._headers` (the register's value: A02, A18, A20,
A24, A27, A28), so that the client, the simulator and the register cannot drift apart; routes and
middleware import them from here, as module-level names.

    >>> SESSION_ID
    'svc-session-id'
"""

from __future__ import annotations

from kit import _headers, register

_NAMES = _headers.HEADERS
#: The header that carries the partner token, and its scheme (``Authorization: Bearer …``).
AUTHORIZATION: str = _NAMES.authorization
TOKEN_SCHEME: str = register.value("A02")["scheme"]
#: The session token of the user/device session a request is made in.
SESSION_ID: str = _NAMES.session_id
#: When the session the answer leaves in force expires.
SESSION_EXPIRES_AT: str = _NAMES.session_expires_at
#: The id of the request, on every response.
REQUEST_ID: str = _NAMES.request_id
#: The register entries an answer relied on.
ASSUMPTIONS: str = _NAMES.assumptions
#: The API version served, on every response.
API_VERSION: str = _NAMES.api_version
#: Makes a POST safe to retry.
IDEMPOTENCY_KEY: str = _NAMES.idempotency_key
#: Tells the sender from the receiver on a P2P transfer's answers (A18).
ROLE: str = _NAMES.p2p_role
#: Carries a webhook delivery's detached JWS (A24).
SIGNATURE: str = _NAMES.signature
#: Marks an answer replayed for a retried ``IDEMPOTENCY_KEY`` (A20).
REPLAYED: str = _NAMES.replayed
#: The state format of a control-plane snapshot (the simulator's own header).
STATE_VERSION: str = _headers.STATE_VERSION

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
