"""Requests and answers on the wire: building a request, checking an answer against the
contract, the partner token. Small encoding and time utilities beside them."""

from __future__ import annotations

import base64
import calendar
import re
import time
from datetime import date, datetime, timedelta
from typing import Any

import httpx

from tests.sim.helpers.contract import ECHO, PARTNER_A, PROBLEM_CT, PROBLEM_PREFIX, served_version

# --- small utilities ---------------------------------------------------------------------


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64u_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def parse_time(text: str) -> datetime:
    """An RFC 3339 UTC timestamp (``Z`` or ``+00:00``) as an aware datetime."""
    assert isinstance(text, str) and re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", text), text
    assert text.endswith("Z") or text.endswith("+00:00"), f"not UTC: {text}"
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    assert value.utcoffset() == timedelta(0)
    return value


def money(value: str, currency: str = "USD") -> dict[str, str]:
    return {"value": value, "currency": currency}


def add_months(day: date, months: int) -> date:
    """The last day of the month ``months`` after ``day``'s month (A14)."""
    month_index = day.year * 12 + (day.month - 1) + months
    year, month = divmod(month_index, 12)
    month += 1
    return date(year, month, calendar.monthrange(year, month)[1])


def wait_until(predicate: Any, timeout: float = 5.0, interval: float = 0.02) -> Any:
    """Poll ``predicate`` (bounded, real time) until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() >= deadline:
            return result
        time.sleep(interval)


# --- requests ------------------------------------------------------------------------------


def headers(
    token: str | None = None,
    session: str | None = None,
    idem: str | None = None,
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    out: dict[str, str] = {}
    if token is not None:
        out["Authorization"] = f"Bearer {token}"
    if session is not None:
        out["svc-session-id"] = session
    if idem is not None:
        out["Idempotency-Key"] = idem
    if extra:
        out.update(extra)
    return out


def call(
    http: httpx.Client,
    method: str,
    path: str,
    *,
    token: str | None = None,
    session: str | None = None,
    idem: str | None = None,
    json_body: Any = None,
    content: bytes | str | None = None,
    extra: dict[str, str] | None = None,
) -> httpx.Response:
    """One request: bearer token, session and idempotency key as headers when given."""
    hdrs = headers(token, session, idem, extra)
    if content is not None:
        return http.request(method, path, headers=hdrs, content=content)
    if json_body is not None:
        return http.request(method, path, headers=hdrs, json=json_body)
    return http.request(method, path, headers=hdrs)


def post_raw(
    http: httpx.Client,
    path: str,
    raw: bytes | str,
    content_type: str | None = "application/json",
    *,
    token: str | None = None,
    session: str | None = None,
    idem: str | None = None,
) -> httpx.Response:
    """``POST`` of ``raw`` bytes sent as written, with ``content_type`` (none when None)."""
    extra = {"content-type": content_type} if content_type else None
    return call(http, "POST", path, token=token, session=session, idem=idem, content=raw, extra=extra)


# --- assertions on answers ---------------------------------------------------------------


def assert_common_headers(resp: httpx.Response) -> None:
    assert resp.headers.get("svc-request-id"), f"no svc-request-id on {resp.request.url.path}"
    assert resp.headers.get("svc-api-version") == served_version(resp), dict(resp.headers)


def assert_problem(
    resp: httpx.Response, status: int, code: str, *, not_echo: tuple[str, ...] = (ECHO,)
) -> dict[str, Any]:
    """An RFC 9457 problem with the contract's fields; returns the body."""
    assert resp.status_code == status, f"{resp.status_code} != {status}: {resp.text[:600]}"
    ctype = resp.headers.get("content-type", "").split(";")[0].strip()
    assert ctype == PROBLEM_CT, f"content-type {ctype!r}: {resp.text[:300]}"
    body = resp.json()
    assert isinstance(body, dict), body
    assert body.get("code") == code, body
    assert body.get("type") == PROBLEM_PREFIX + code, body
    assert body.get("status") == status, body
    assert isinstance(body.get("title"), str) and body["title"], body
    assert isinstance(body.get("detail"), str) and body["detail"], body
    assert_common_headers(resp)
    for value in not_echo:
        assert value not in resp.text, f"the answer echoes a submitted value: {resp.text[:300]}"
    return body


def assert_oauth_error(resp: httpx.Response, status: int, error: str) -> dict[str, Any]:
    """An RFC 6749 §5.2 error body (the token endpoints' one exception to problem+json)."""
    assert resp.status_code == status, f"{resp.status_code} != {status}: {resp.text[:400]}"
    ctype = resp.headers.get("content-type", "").split(";")[0].strip()
    assert ctype == "application/json", ctype
    body = resp.json()
    assert body.get("error") == error, body
    assert set(body) <= {"error", "error_description", "error_uri"}, body
    if "error_description" in body:
        assert isinstance(body["error_description"], str)
    assert_common_headers(resp)
    return body


def assert_error_fields(body: dict[str, Any], *pointers: str) -> None:
    """``errors`` lists each of ``pointers`` as a JSON Pointer ``field`` with a message."""
    errors = body.get("errors")
    assert isinstance(errors, list) and errors, body
    for err in errors:
        assert isinstance(err.get("field"), str), err
        assert err["field"] == "" or err["field"].startswith("/"), err
        assert isinstance(err.get("message"), str) and err["message"], err
    fields = [err["field"] for err in errors]
    for pointer in pointers:
        assert pointer in fields, (pointer, fields)


# --- partner level -----------------------------------------------------------------------


def basic_auth(client: tuple[str, str] = PARTNER_A) -> str:
    """The ``Authorization`` value of HTTP Basic for ``(client_id, secret)``."""
    return "Basic " + b64(f"{client[0]}:{client[1]}".encode())


def token_response(
    http: httpx.Client,
    client_id: str = PARTNER_A[0],
    secret: str = PARTNER_A[1],
    *,
    path: str = "/oauth/accesstoken",
) -> httpx.Response:
    return http.post(path, data={"grant_type": "client_credentials"}, auth=(client_id, secret))


def partner_token(
    http: httpx.Client,
    client_id: str = PARTNER_A[0],
    secret: str = PARTNER_A[1],
    *,
    path: str = "/oauth/accesstoken",
) -> str:
    """A partner access token by client credentials and HTTP Basic (register A01), from the token
    endpoint at ``path`` (behind a root path: ``/api/oauth/accesstoken``)."""
    resp = token_response(http, client_id, secret, path=path)
    assert resp.status_code == 200, resp.text
    return resp.json()["access_token"]


def init_data(http: httpx.Client, token: str) -> dict[str, Any]:
    resp = call(http, "GET", "/sessions/user_session_initialization_data", token=token)
    assert resp.status_code == 200, resp.text
    return resp.json()


#: The host in-process transports name (``base_url="http://sim"``): a simulator they talk to
#: allows it through the same setting as ``kit serve --allowed-host`` (A70).
IN_PROCESS = ("sim",)
