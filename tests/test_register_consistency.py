"""The register, the OpenAPI document and the server say the same thing where the audit of
issue 59 found them apart: the token endpoints' errors (A01, A11, A21), the members a problem
carries, the ids the register skips."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import httpx
import pytest

from kit import register
from kit.sim import docgen
from tests.sim.helpers.contract import PARTNER_A

TOKEN = "/oauth/accesstoken"
LEGACY = "/authorization/server_api/access_tokens"
GRANT = {"grant_type": "client_credentials"}

#: One request for each way a token request is answered (the strict mode's 410 aside).
TOKEN_REQUESTS: dict[str, dict[str, Any]] = {
    "issued": {"data": GRANT, "auth": PARTNER_A},
    "malformed": {"data": {}, "auth": PARTNER_A},
    "personal data": {"data": {**GRANT, "date_of_birth": "1950-03-14"}, "auth": PARTNER_A},
    "personal data in the query": {"data": GRANT, "params": {"ssn": "123456789"}, "auth": PARTNER_A},
    "wrong secret": {"data": GRANT, "auth": (PARTNER_A[0], "wrong")},
}


def media(content_type: str) -> str:
    return content_type.split(";")[0].strip()


@pytest.mark.parametrize("path", [TOKEN, LEGACY])
def test_the_document_lists_what_the_token_endpoints_answer(http: httpx.Client, path: str) -> None:
    document = http.get("/openapi.json").json()
    declared = document["paths"][path]["post"]["responses"]
    answered = set()
    for what, request in TOKEN_REQUESTS.items():
        resp = http.post(path, **request)
        status = str(resp.status_code)
        answered.add(status)
        assert status in declared, (what, status, sorted(declared))
        assert media(resp.headers["content-type"]) in declared[status]["content"], (what, status)
        for name, header in declared[status].get("headers", {}).items():
            if header["required"]:
                assert name.lower() in resp.headers, (what, name)
    assert answered == {"200", "400", "401"}
    strict_only = {"410"} if path == LEGACY else set()
    assert set(declared) == answered | strict_only  # no 422: personal data is a 400 here


@pytest.mark.parametrize("path", [TOKEN, LEGACY])
def test_the_token_endpoints_challenge_is_a01s_the_partner_tokens_a02s(http: httpx.Client, path: str) -> None:
    document = http.get("/openapi.json").json()
    challenge = document["paths"][path]["post"]["responses"]["401"]["headers"]["WWW-Authenticate"]
    assert challenge["x-assumption"] == "A01" and challenge["required"]
    assert http.post(path, data=GRANT).headers["www-authenticate"] == "Basic"
    revoke = document["paths"][LEGACY]["delete"]["responses"]["401"]["headers"]["WWW-Authenticate"]
    assert revoke["x-assumption"] == "A02"  # the DELETE takes the bearer token it revokes


# --- the members a problem carries beyond RFC 9457's ---------------------------------------------

SIM = Path(__file__).resolve().parent.parent / "kit" / "sim"
#: Problem's own parameters, and A21's members of every validation problem.
_NOT_MEMBERS = {"status", "code", "detail", "title", "headers", "assumptions"}
_EVERY_VALIDATION = {"errors", "allowed"}


def problem_members() -> dict[str, set[str]]:
    """Each extra member a ``Problem`` of the simulator is raised with → the codes it comes with."""
    found: dict[str, set[str]] = {}
    for module in SIM.rglob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Problem"):
                continue
            named = node.args[1] if len(node.args) > 1 else None
            code = named.value if isinstance(named, ast.Constant) else None
            for keyword in node.keywords:
                if keyword.arg and keyword.arg not in _NOT_MEMBERS:
                    found.setdefault(keyword.arg, set()).add(str(code))
    return found


def test_every_member_a_problem_carries_is_documented_and_registered(http: httpx.Client) -> None:
    members = problem_members()
    assert {"removed_in", "renamed", "supported"} <= set(members)  # the scan finds them
    schema = http.get("/openapi.json").json()["components"]["schemas"]["Problem"]["properties"]
    assert set(members) <= set(schema), sorted(set(members) - set(schema))
    choices = {e["id"]: e["choice"] for e in register.assumptions()}
    for member, codes in members.items():
        if member in _EVERY_VALIDATION:
            continue
        for code in codes:
            entries = [i for (_, c), ids in docgen.covered_codes().items() if c == code for i in ids]
            assert any(f"`{member}`" in choices[i] for i in entries), (member, code, entries)


def test_a_removed_endpoint_says_which_version_removed_it(http: httpx.Client) -> None:
    resp = http.post("/accounts/acc_x/savings/close")
    assert resp.status_code == 404 and resp.json()["code"] == "endpoint-removed"
    assert resp.json()["removed_in"] == register.fact("removed_endpoints")[0]["removed_in"] == "1.2.0"
    assert "`removed_in`" in register.assumption("A29")["choice"]


# --- the ids the register skips ------------------------------------------------------------------


def test_every_id_the_register_skips_is_explained_where_the_register_is() -> None:
    ids = {int(entry["id"][1:]) for entry in register.assumptions()}
    skipped = [f"A{n:02d}" for n in range(1, max(ids)) if n not in ids]
    assert skipped == ["A49"]  # the test of unknown ids relies on it
    root = Path(__file__).resolve().parent.parent
    explained = (root / "docs" / "register.md").read_text(encoding="utf-8")
    header = (root / "data" / "assumptions.toml").read_text(encoding="utf-8").split("[[assumption]]")[0]
    for entry_id in skipped:
        assert f"{entry_id} names no entry" in explained, entry_id
        assert f"{entry_id} names no entry" in header, entry_id
