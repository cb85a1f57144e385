"""``kit choices infer --har``: what a HAR shows becomes a dialect file, and no secret of the HAR
— a header's value, a body's, a query string's, a problem's words — reaches it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from kit import _choices
from kit._choicetool import check

ROOT = Path(__file__).resolve().parents[1]
SECRETS = ("s3cr3t-basic-Zq9", "s3cr3t-form-Xw7", "s3cr3t-token-Vb5", "s3cr3t-query-Ty3", "s3cr3t-body-Rk1")
#: A JWS (EdDSA) whose signature part is a planted secret.
SIGNED = "eyJhbGciOiJFZERTQSJ9..s3cr3t-signature-Pm4"


def _entry(
    method: str, url: str, sent: dict[str, str], body: Any, status: int, answer: Any
) -> dict[str, Any]:
    form = isinstance(body, str)
    request: dict[str, Any] = {
        "method": method,
        "url": url,
        "headers": [{"name": k, "value": v} for k, v in sent.items()],
    }
    if body is not None:
        request["postData"] = {
            "mimeType": "application/x-www-form-urlencoded" if form else "application/json",
            "text": body if form else json.dumps(body),
        }
    mime = "application/problem+json" if status >= 400 else "application/json"
    return {
        "request": request,
        "response": {
            "status": status,
            "headers": [{"name": "X-Trace", "value": "t-1"}, {"name": "Content-Type", "value": mime}],
            "content": {"mimeType": mime, "text": json.dumps(answer)},
        },
    }


def test_secrets_in_a_har_never_reach_the_file(tmp_path: Path) -> None:
    basic, form, token, query, body = SECRETS
    partner = {"Authorization": f"Token {token}", "X-Secret-Header": body}
    entries = [
        _entry(
            "POST", "https://sandbox.test/oauth/accesstoken", {"Authorization": f"Basic {basic}"},
            f"grant_type=client_credentials&client_secret={form}", 200,
            {"access_token": token, "token_type": "Bearer", "expires_in": 60},
        ),
        _entry(
            "POST", f"https://sandbox.test/v9/ledgers?api_key={query}", partner,
            {"product": "spending", "note": body}, 201,
            {"accountId": "acc_9f8e7d6c", "product": "spending", "status": "open",
             "createdAt": "2026-01-01T00:00:00Z", "balance": {"value": "1.00", "currency": "USD"}},
        ),
        _entry(
            "GET", f"https://sandbox.test/v9/ledgers/acc_9f8e7d6c/things?token={query}", partner, None, 404,
            {"type": "about:blank", "status": 404, "title": "Not Found", "detail": f"no {body}",
             "code": "gone-away"},
        ),
        _entry(
            "POST", "https://partner.test/hooks", {"X-Sig": SIGNED},
            {"id": "evt_1", "type": "card.closed"}, 200, {},
        ),
    ]  # fmt: skip
    har = tmp_path / "traffic.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "t"}, "entries": entries}}))
    out = tmp_path / "inferred.toml"
    command = [sys.executable, "-m", "kit", "choices", "infer", "--har", str(har), "-o", str(out)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    planted = [*SECRETS, SIGNED.rsplit(".", 1)[1]]
    assert [s for s in planted if s in text or s in result.stdout + result.stderr] == []
    assert check(str(out)) == []
    overlay = _choices.load(out)
    assert overlay.value("A67")["paths"]["create_account"] == "/v9/ledgers"
    assert overlay.value("A68")["field_case"] == "camel"
    assert (overlay.value("A02")["header"], overlay.value("A02")["scheme"]) == ("Authorization", "Token")
    assert (overlay.value("A24")["header"], overlay.value("A24")["algorithm"]) == ("X-Sig", "EdDSA")
    assert "'gone-away'" in text  # a code the kit does not know is listed, to be mapped by hand
