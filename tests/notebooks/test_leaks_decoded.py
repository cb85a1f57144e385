"""The leak scan decodes before it matches: a secret percent-encoded, inside an HTTP Basic value,
base64-encoded, JSON-escaped, written in HTML character references (a page, a notebook's HTML
output), a fingerprinted token after ``=``, and a HAR file read as JSON."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest

from kit import _env as env
from kit.register import personas
from kit.regress import leaks
from kit.regress.scanner import Fingerprints

SIM_SECRET = next(iter(env.SIM_PARTNER_CLIENTS.values()))  # the simulator's built-in client secret
SECRET = "s3cr/et+with&odd=chars-91"  # what a partner's generated secret may hold
TOKEN = "Zk3vQ9xLw2Rb7Tn1Yp5Hc8Md0aSe"  # a sandbox token: no prefix, known only by fingerprint
DOB = str(personas()[0]["date_of_birth"])  # a persona's date of birth: 1950-03-14


@pytest.fixture(autouse=True)
def _no_secret_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (env.CLIENT_SECRET, env.ACCESS_TOKEN, env.SIM_PARTNERS, env.SIM_CONTROL_TOKEN):
        monkeypatch.delenv(name, raising=False)


def kinds(text: str, **kwargs: object) -> list[str]:
    return [f.kind for f in leaks.scan_text(text, **kwargs)]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "written",
    [
        "POST /oauth/accesstoken body: " + urlencode({"grant_type": "x", "client_secret": SECRET}),
        f"https://sandbox.example/cb?state=1&secret={quote(SECRET, safe='')}",
    ],
)
def test_a_percent_encoded_secret_is_found(written: str) -> None:
    assert SECRET not in written
    assert kinds(written, secrets=[SECRET]) == ["secret"]


@pytest.mark.parametrize("secret", [SIM_SECRET, SECRET])
def test_a_secret_inside_an_http_basic_value_is_found(secret: str) -> None:
    pair = f"sim-partner:{quote(secret, safe='')}"  # RFC 6749 2.3.1: form-encoded, then Basic
    written = f"curl -H 'Authorization: Basic {base64.b64encode(pair.encode()).decode()}' https://x"
    assert kinds(written, secrets=[SECRET]) in (["client-secret"], ["secret"])


@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_a_base64_encoded_token_is_found(encode: object) -> None:
    token = "pat_" + TOKEN
    written = f"debug: {encode(token.encode()).decode()}"  # type: ignore[operator]
    assert kinds(written, environ={env.ACCESS_TOKEN: token}) == ["partner-token"]
    wrapped = encode(json.dumps({"access_token": token}).encode()).decode()  # type: ignore[operator]
    assert kinds(f"state={wrapped}", environ={env.ACCESS_TOKEN: token}) == ["partner-token"]


@pytest.mark.parametrize(
    "written",
    [
        json.dumps({"secret": SECRET}).replace("/", "\\/"),  # PHP's and some loggers' JSON
        json.dumps({"secret": SECRET}).replace("s3cr", "\\u0073\\u0033cr"),
        json.dumps(json.dumps({"secret": SECRET}).replace("/", "\\/")),  # a JSON dump of a JSON string
    ],
)
def test_a_json_escaped_secret_is_found(written: str) -> None:
    assert SECRET not in written
    assert kinds(written, secrets=[SECRET]) == ["secret"]


@pytest.mark.parametrize(
    "written",
    [f"access_token={TOKEN}", f"GET /cb?session={TOKEN}&next=1", f"cookie: sid={TOKEN}; path=/"],
)
def test_a_fingerprinted_token_is_found_after_an_equals_sign(written: str) -> None:
    prints = Fingerprints.of(b"salt", [TOKEN])
    assert kinds(written, secrets=[prints]) == ["used-token"]


def test_a_har_file_is_read_as_json_and_its_strings_decoded(tmp_path: Path) -> None:
    unicode_secret = "pässwörd-geheim-42"
    entry = {
        "request": {
            "url": f"https://sandbox.example/x?s={quote(SECRET, safe='')}",
            "postData": {"mimeType": "text/plain", "text": json.dumps({"sessionToken": TOKEN})},
        },
        "response": {"content": {"text": json.dumps({"note": unicode_secret})}},
    }
    har = tmp_path / "run.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": [entry]}}))  # ASCII: \u00e4
    assert unicode_secret not in har.read_text()
    found = leaks.scan_file(har, secrets=[SECRET, unicode_secret])
    assert sorted(f.kind for f in found) == ["secret", "secret", "session-token"]
    where = {f.location for f in found}
    assert f"{har}.log.entries[0].request.postData.text.sessionToken" in where
    assert all(TOKEN not in str(f) and SECRET not in str(f) for f in found)


def test_what_decodes_to_nothing_secret_is_not_a_leak() -> None:
    clean = [
        "id acc_5ea792c644255bcf6a87, request req_0962541c37bfcfbf384e",
        "Authorization: Basic " + base64.b64encode(b"sim-partner:<client-secret>").decode(),
        "q=caf%C3%A9+au+lait&page=2",
        '{"url": "https:\\/\\/example.org\\/x", "token_type": "Bearer"}',
        base64.b64encode(b"plain words and nothing else in them").decode(),
    ]
    for text in clean:
        assert kinds(text) == [], text


@pytest.mark.parametrize(
    ("written", "kind"),
    [
        (f'{{"sessionToken": "{TOKEN}"}}', "session-token"),
        (f"clientSecret: '{TOKEN}'", "client-secret"),
        (f'"Access-Token": "{TOKEN}"', "partner-token"),
    ],
)
def test_a_token_under_any_spelling_of_its_name_is_found(written: str, kind: str) -> None:
    assert kinds(written) == [kind]


@pytest.mark.parametrize(
    "written",
    [
        "born " + "".join(f"&#{ord(c)};" for c in DOB[:4]) + DOB[4:],  # decimal references
        "<td>" + DOB[:4] + "".join(f"&#x{ord(c):x};" for c in DOB[4:]) + "</td>",  # hexadecimal
        "<pre>{&quot;note&quot;: &quot;born " + DOB.replace("-", "&#45;") + "&quot;}</pre>",  # a JSON text
    ],
)
def test_a_persona_dob_in_html_escapes_is_found_in_a_notebooks_html_output(written: str) -> None:
    assert DOB not in written and DOB in html.unescape(written)
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "source": "display(HTML(page))",
                "metadata": {},
                "outputs": [
                    {"output_type": "display_data", "data": {"text/html": [written]}, "metadata": {}}
                ],
            }
        ],
        "metadata": {},
    }
    found = leaks.scan_notebook(nb, environ={})
    assert [(f.kind, f.location) for f in found] == [("persona-dob", "notebook: cell 1 output 1 text/html")]
    assert leaks.redact(written, environ={}, markup=True).count("&lt;persona-dob&gt;") == 1


def test_an_html_escaped_secret_is_found_where_it_was_written_and_redacted_alone() -> None:
    secret = "s3cr3t-of-the-partner"
    written = f"<p>ok</p>\n<p>token: &#115;{secret[1:]}</p> <p>and more</p>"
    (finding,) = leaks.scan_text(written, secrets=[secret], environ={})
    assert (finding.kind, finding.location) == ("secret", "text, line 2")
    assert leaks.redact(written, secrets=[secret], environ={}, markup=True) == (
        "<p>ok</p>\n<p>token: &lt;secret&gt;</p> <p>and more</p>"
    )
    escaped = f"<td title='{html.escape(SECRET)}'>{html.escape(SECRET)}</td>"  # &amp; for its &
    assert SECRET not in escaped and kinds(escaped, secrets=[SECRET]) == ["secret", "secret"]
    assert leaks.scan_text("<p>caf&eacute; &amp; cr&egrave;me, &lt;b&gt;</p>", environ={}) == []
