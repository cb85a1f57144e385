"""The wire recorder knows a secret by any spelling of its name (:func:`kit._redaction.secret_kind`:
one list, names cut into words as PII names are), in a JSON field, a header, a query parameter, a
form field, and JSON sent under any text content type; the HAR file holds only what was recorded."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import kit
from kit import errors
from kit._redaction import Redactor
from kit._wire import as_dict

from .test_wire_har import validate_har

SECRET = "Zk3vQ9xLw2Rb7Tn1Yp5Hc8Md0aSe"  # a sandbox token: no prefix, nothing marks it but its name
DOB = "1950-03-14"


@pytest.mark.parametrize(
    ("name", "marker"),
    [
        ("accessToken", "<partner-token>"),
        ("AccessToken", "<partner-token>"),
        ("sessionToken", "<session-token>"),
        ("session-token", "<session-token>"),
        ("clientSecret", "<client-secret>"),
        ("token", "<token>"),
        ("refreshToken", "<token>"),
        ("apiKey", "<api-key>"),
        ("x_api_key", "<api-key>"),
        ("password", "<password>"),
        ("userPassword", "<password>"),
        ("secret", "<secret>"),
    ],
)
def test_a_secret_field_is_replaced_whatever_its_spelling(name: str, marker: str) -> None:
    redactor = Redactor()
    assert redactor.json({name: SECRET}) == {name: marker}
    assert redactor.text(f"echoed {SECRET} later") == f"echoed {marker} later"  # learned by value


@pytest.mark.parametrize(
    "name", ["token_type", "expires_in", "token_lifetime_seconds", "api_key_id", "scope"]
)
def test_names_that_only_mention_a_secret_are_shown(name: str) -> None:
    assert Redactor().json({name: "Bearer"}) == {name: "Bearer"}


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("Proxy-Authorization", "Bearer <partner-token>"),
        ("Cookie", "<cookie>"),
        ("Set-Cookie", "<cookie>"),
        ("X-Api-Key", "<api-key>"),
        ("X-Session-Token", "<session-token>"),
    ],
)
def test_a_secret_header_is_replaced_whatever_its_name(name: str, shown: str) -> None:
    value = f"Bearer {SECRET}" if "Authorization" in name else SECRET
    assert Redactor().header(name, value) == shown


def test_a_private_jwks_members_are_replaced_and_its_public_ones_kept() -> None:
    jwk = {"kty": "EC", "crv": "P-256", "x": "pub-x", "y": "pub-y", "d": SECRET, "kid": "dev-1"}
    rsa = {"kty": "RSA", "n": "modulus", "e": "AQAB", "d": "d1", "p": "p1", "q": "q1", "dp": "a", "dq": "b",
           "qi": "c"}  # fmt: skip
    octet = {"kty": "oct", "k": SECRET}
    got = Redactor().json({"keys": [jwk, rsa, octet]})
    assert got["keys"][0] == {**jwk, "d": "<private-key>"}
    assert got["keys"][1] == {"kty": "RSA", "n": "modulus", "e": "AQAB", **dict.fromkeys(
        ("d", "p", "q", "dp", "dq", "qi"), "<private-key>")}  # fmt: skip
    assert got["keys"][2] == {"kty": "oct", "k": "<private-key>"}
    assert Redactor().json({"q": "search words", "p": 2}) == {"q": "search words", "p": 2}  # not a JWK


def test_query_parameters_are_redacted_by_the_same_names() -> None:
    redactor = Redactor()
    url = f"http://127.0.0.1:8123/accounts?page=2&accessToken={SECRET}&date_of_birth={DOB}&api_key=k-1234"
    shown = redactor.url(url)
    assert SECRET not in shown and DOB not in shown and "k-1234" not in shown
    assert shown.startswith("http://127.0.0.1:<port>/accounts?page=2&")
    assert "accessToken=<partner-token>" in shown and "date_of_birth=<pii>" in shown


@pytest.mark.parametrize("content_type", ["text/plain", "", "application/octet-stream; x=1", "text/html"])
def test_json_in_any_text_body_is_redacted_field_by_field(content_type: str) -> None:
    body = json.dumps({"sessionToken": SECRET, "customer": {"dateOfBirth": DOB}, "note": "ok"}).encode()
    shown = Redactor().body(body, content_type) or ""
    assert SECRET not in shown and DOB not in shown


def test_a_form_in_a_text_body_is_redacted_field_by_field() -> None:
    shown = Redactor().body(
        f"grant_type=password&password={SECRET}&clientSecret=s3cr3t-v".encode(), "text/plain"
    )
    assert shown is not None and SECRET not in shown and "s3cr3t-v" not in shown
    assert "grant_type=password" in shown


def test_a_snapshot_body_is_described_never_kept() -> None:
    data = b"SQLite format 3\x00" + f'{{"session_token": "{SECRET}"}}'.encode()
    assert (
        Redactor().body(data, "application/vnd.sqlite3") == f"<{len(data)} bytes of application/vnd.sqlite3>"
    )


def test_query_and_text_bodies_stay_out_of_the_log_and_the_har(
    make_client: Callable[..., kit.Client], tmp_path: Path
) -> None:
    api = make_client(record=True)
    with pytest.raises(errors.ApiError):  # clear-text PII in a query: refused, and recorded
        api._requestor.call("GET", f"/accounts/acc_x?sessionToken={SECRET}&dateOfBirth={DOB}", session=None)
    log = json.dumps([as_dict(e) for e in api.wire_log.exchanges()])  # type: ignore[union-attr]
    assert SECRET not in log and DOB not in log
    har = validate_har(tmp_path / "run.har") if api.export_har(tmp_path / "run.har") else {}
    (entry,) = [e for e in har["log"]["entries"] if "/accounts/" in e["request"]["url"]]
    query = {q["name"]: q["value"] for q in entry["request"]["queryString"]}
    assert query == {"sessionToken": "<session-token>", "dateOfBirth": "<pii>"}
    assert SECRET not in json.dumps(har) and DOB not in json.dumps(har)
