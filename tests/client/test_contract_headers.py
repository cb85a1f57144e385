"""The response headers of each answer, declared in the contract documents with their register
entries, and a missing one reported as a difference from its entry (no header name but
svc-session-id is the seed's, so it is never seed drift): change.7's role header (A18),
``Deprecation`` and ``Link`` (A03), ``svc-request-id`` (A28) and ``svc-api-version`` (A27)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kit import register
from kit._contract import HEADER_BASIS, Contract

OLD, NEW = "1.1.0", "1.2.0-20221215"
ROLE = register.value("A18")["role_header"]
LEGACY = "/authorization/server_api/access_tokens"


def _document(version: str) -> dict[str, Any]:
    name = "openapi.json" if version == NEW else f"openapi-{version}.json"
    document: dict[str, Any] = json.loads((register.data_dir() / name).read_text(encoding="utf-8"))
    return document


def _headers(version: str, path: str, method: str, status: str) -> dict[str, Any]:
    headers: dict[str, Any] = _document(version)["paths"][path][method]["responses"][status].get(
        "headers", {}
    )
    return headers


def test_every_partner_answer_declares_its_headers_with_their_entries() -> None:
    for version in (OLD, NEW):
        for path, operations in _document(version)["paths"].items():
            if path.startswith("/_sim"):
                continue
            for operation in operations.values():
                for status, response in operation["responses"].items():
                    headers = response.get("headers", {})
                    assert (
                        headers["svc-request-id"]["required"]
                        and headers["svc-request-id"]["x-assumption"] == "A28"
                    )
                    assert headers["svc-api-version"]["x-assumption"] == "A27", (version, path, status)
                    for name, header in headers.items():
                        assert header["x-assumption"] in header["description"], (path, name)
                        assert f"header {name.lower()}" not in HEADER_BASIS or (
                            HEADER_BASIS[f"header {name.lower()}"] == header["x-assumption"]
                        ), (path, name)


def test_change_7_and_change_1_headers_are_declared_for_1_2_0_only() -> None:
    for path, status in (("/p2p/transfers", "201"), ("/p2p/transfers/{transfer_id}", "200")):
        new = _headers(NEW, path, "post" if status == "201" else "get", status)
        assert new[ROLE]["required"] is True and new[ROLE]["x-assumption"] == "A18"
        assert ROLE not in _headers(OLD, path, "post" if status == "201" else "get", status)
    legacy = _headers(NEW, LEGACY, "post", "200")
    assert legacy["Deprecation"]["x-assumption"] == legacy["Link"]["x-assumption"] == "A03"
    assert "Link" not in _headers(NEW, LEGACY, "delete", "204")
    assert _headers(NEW, LEGACY, "delete", "204")["Deprecation"]["required"] is True
    assert not {"Deprecation", "Link"} & set(_headers(OLD, LEGACY, "post", "200"))


def _service(version: str = NEW) -> dict[str, str]:
    return {"svc-request-id": "req_1", "svc-api-version": version}


@pytest.mark.parametrize(
    ("method", "path", "status", "missing", "entry"),
    [
        ("POST", "/p2p/transfers", 201, ROLE, "A18"),
        ("GET", "/p2p/transfers/p2p_1", 200, ROLE, "A18"),
        ("POST", LEGACY, 200, "deprecation", "A03"),
        ("POST", LEGACY, 200, "link", "A03"),
        ("DELETE", LEGACY, 204, "deprecation", "A03"),
    ],
)
def test_a_missing_declared_header_is_a_difference_from_its_entry(
    method: str, path: str, status: int, missing: str, entry: str
) -> None:
    present = {
        ROLE: "sender",
        "deprecation": "@1671062400",
        "link": '</oauth/accesstoken>; rel="successor-version"',
    }
    headers = {**_service(), **{k: v for k, v in present.items() if k != missing}}
    rows = Contract.default().check(method, path, status, headers, None, has_content=False)
    found = [r for r in rows if r.field == f"header {missing}"]
    assert len(found) == 1, rows
    assert (found[0].kind, found[0].basis, found[0].differs) == ("header", entry, True)
    complete = {**_service(), **present}
    assert not [
        r for r in Contract.default().check(method, path, status, complete, None) if r.kind == "header"
    ]


def test_under_1_1_0_no_role_header_is_expected() -> None:
    rows = Contract.for_version(OLD).check("GET", "/p2p/transfers/p2p_1", 200, _service(OLD), None)
    assert not [r for r in rows if r.kind == "header"], rows
