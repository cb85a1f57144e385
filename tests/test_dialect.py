"""The dialect (A67 paths, A68 names, headers, codes): how it spells the wire, what it refuses,
and the two tools that start and check a dialect file."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from kit import _choices, _dialect, register
from kit._choicetool import check, template

ROOT = Path(__file__).resolve().parent.parent
CAMEL_FILE = ROOT / "data" / "choices" / "camel.toml"
CAMEL = _dialect.Dialect.of(_choices.parse({"A68": {"field_case": "camel"}}))


def refused(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    with pytest.raises(_choices.ChoicesError) as caught:
        _choices.parse(data)
    return [tuple(p) for p in caught.value.problems]


# --- spelling --------------------------------------------------------------------------------


def test_the_default_dialect_is_the_registers_and_maps_nothing() -> None:
    body = {"session_token": "x", "device": {"os_version": "17"}}
    assert _dialect.DEFAULT.paths == register.value("A67")["paths"]
    assert _dialect.DEFAULT.to_wire(body) is body and _dialect.DEFAULT.from_wire(body) is body


def test_camel_case_spells_our_names_and_keeps_the_standard_ones() -> None:
    answer = {
        "session_token": "ses_1",
        "expiration_strategy": "fixed",
        "expires_at": "2025-01-06T09:00:00Z",
        "device_jwks": {"keys": [{"kty": "EC", "key_ops": ["encrypt"]}]},
        "errors": [{"field": "/device/os_version", "message": "m"}],
        "details": {"merchant_name": "x"},
        "renamed": {"person.document_request.created": "document_request.created"},
        "access_token": "t",
        "token_type": "Bearer",
        "reason": "lost",
    }
    wire = CAMEL.to_wire(answer)
    assert wire == {
        "sessionToken": "ses_1",
        "expirationStrategy": "fixed",
        "expiresAt": "2025-01-06T09:00:00Z",
        "deviceJwks": {"keys": [{"kty": "EC", "key_ops": ["encrypt"]}]},
        "errors": [{"field": "/device/os_version", "message": "m"}],
        "details": {"merchant_name": "x"},
        "renamed": {"person.document_request.created": "document_request.created"},
        "access_token": "t",
        "token_type": "Bearer",
        "reason": "lost",
    }
    assert CAMEL.from_wire(wire) == answer
    assert CAMEL.pointer_to_wire("/device/os_version") == "/device/osVersion"
    assert CAMEL.pointer_from_wire("/answers/0/questionId") == "/answers/0/question_id"


def test_renames_win_over_the_case_both_ways() -> None:
    dialect = _dialect.Dialect.of(
        _choices.parse({"A68": {"field_case": "camel", "renames": {"session_token": "token"}}})
    )
    assert dialect.to_wire({"session_token": "s", "session_type": "t"}) == {"token": "s", "sessionType": "t"}
    assert dialect.from_wire({"token": "s", "sessionType": "t"}) == {
        "session_token": "s",
        "session_type": "t",
    }


def test_a_re_chosen_path_is_found_by_method_and_template() -> None:
    dialect = _dialect.Dialect.of(_choices.load(CAMEL_FILE))
    assert dialect.operation("POST", "/v2/accounts/{id}/people") == "create_person"
    assert dialect.operation("GET", "/v2/accounts/{id}/people") is None
    assert _dialect.DEFAULT.operation("GET", "/cards/{id}") == "get_card"


def test_codes_values_and_headers_of_the_second_dialect() -> None:
    dialect = _dialect.Dialect.of(_choices.load(CAMEL_FILE))
    assert dialect.code_to_wire("card-not-found") == "not-found"
    assert set(dialect.codes_from_wire("not-found")) >= {"card-not-found", "endpoint-removed", "not-found"}
    assert dialect.codes_from_wire("insufficient-funds") == ("insufficient-funds",)
    assert dialect.value_to_wire("A05", "anonymous") == "ANONYMOUS"
    assert dialect.value_from_wire("A06", "ROLLING") == "sliding"
    assert dialect.chosen("A24", "algorithm") == "EdDSA"


def test_the_second_dialect_differs_from_the_simulator_in_every_item() -> None:
    overlay = _choices.load(CAMEL_FILE)
    for op, path in register.value("A67")["paths"].items():
        assert overlay.value("A67")["paths"][op] != path, op
    assert overlay.chosen("A68", "field_case") == "camel" and overlay.chosen("A68", "renames")
    for entry, key in _dialect.HEADERS:
        assert overlay.chosen(entry, key) != register.value(entry)[key], (entry, key)
    for entry, key in (
        ("A01", "client_auth"),
        ("A02", "scheme"),
        ("A24", "algorithm"),
        ("A24", "max_skew_seconds"),
    ):
        assert overlay.chosen(entry, key) != register.value(entry)[key], (entry, key)
    assert overlay.chosen("A01", "client_auth") == "post"
    assert overlay.chosen("A05", "session_types") != register.value("A05")["session_types"]
    assert overlay.chosen("A06", "strategies") != register.value("A06")["strategies"]
    sent = list(overlay.chosen("A64", "codes").values())
    assert any(sent.count(code) > 1 for code in sent), "generic codes: several of ours as one"


# --- what a file may not say -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "entry", "key", "why"),
    [
        ({"A67": {"paths": {"get_card": "/cards"}}}, "A67", "paths.get_card", "card_id"),
        (
            {"A67": {"paths": {"create_account": "/accounts/{account_id}"}}},
            "A67",
            "paths.create_account",
            "no param",
        ),
        ({"A67": {"paths": {"create_account": "accounts"}}}, "A67", "paths.create_account", "not a path"),
        (
            {"A67": {"paths": {"create_card": "/cards/{account_id}/close"}}},
            "A67",
            "paths.create_card",
            "the spec's",
        ),
        (
            {"A67": {"paths": {"get_card": "/accounts/{card_id}/savings/close"}}},
            "A67",
            "paths.get_card",
            "spec's",
        ),
        ({"A67": {"paths": {"get_card": "/accounts/{card_id}/referrals"}}}, "A67", "paths.get_card", "A66's"),
        ({"A67": {"paths": {"create_account": "/p2p/transfers"}}}, "A67", "paths.", "collides"),
        ({"A68": {"field_case": "kebab"}}, "A68", "field_case", "snake"),
        ({"A68": {"renames": {"access_token": "token"}}}, "A68", "renames.access_token", "standard"),
        ({"A68": {"renames": {"reason": "why"}}}, "A68", "renames.reason", "standard"),
        ({"A68": {"renames": {"card_id": "id", "account_id": "id"}}}, "A68", "renames.account_id", "also"),
        ({"A28": {"request_id": "svc-session-id"}}, "A28", "request_id", "session.4"),
        ({"A20": {"header": "Bad Header"}}, "A20", "header", "not a header name"),
        ({"A24": {"algorithm": "HS256"}}, "A24", "algorithm", "EdDSA"),
        ({"A01": {"client_auth": "mtls"}}, "A01", "client_auth", "either"),
        ({"A05": {"session_types": ["account", "anonymous", "person"]}}, "A05", "session_types", "order"),
        ({"A06": {"strategies": ["same", "same"]}}, "A06", "strategies", "distinct"),
    ],
)
def test_a_file_that_breaks_a_rule_is_refused_naming_entry_and_key(
    data: dict[str, Any], entry: str, key: str, why: str
) -> None:
    problems = refused(data)
    assert any(e == entry and k.startswith(key) and why in m for e, k, m in problems), problems


# --- kit choices template / check --------------------------------------------------------------


def uncommented(text: str) -> str:
    """The template with every value line and table header uncommented (the defaults, as a file)."""
    out = []
    for line in text.splitlines():
        if re.fullmatch(r"# \[[A-Za-z0-9_.\-\"]+\]", line) or re.match(r"# [A-Za-z0-9_\-\"]+ = ", line):
            out.append(line[2:])
    return "\n".join(out) + "\n"


def test_the_template_names_every_dialect_key_and_uncommented_is_a_good_file(tmp_path: Path) -> None:
    text = template()
    for op in register.value("A67")["paths"]:
        assert re.search(rf"^# {op} = ", text, re.M), op
    assert "# field_case = " in text and "# client_auth = " in text and "# algorithm = " in text
    assert "All other endpoints of the service: not shown." in text  # the spec's words it fills in
    path = tmp_path / "defaults.toml"
    path.write_text(uncommented(text))
    data = tomllib.loads(path.read_text())
    assert data["A67"]["paths"] == register.value("A67")["paths"]
    assert check(str(path)) == []


def test_check_names_the_line_of_each_problem(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'description = "x"\n\n[A67.paths]\ncreate_account = "/v2/accounts"\nget_card = "/cards"\n\n'
        '[A68]\nrenames = { reason = "why" }\n\n[A99]\nx = 1\n'
    )
    problems = check(str(path))
    assert any(p.startswith(f"{path}:5: [A67] paths.get_card") for p in problems), problems
    assert any(p.startswith(f"{path}:10: [A99]") for p in problems), problems


def test_the_commands_print_and_exit_as_documented(tmp_path: Path) -> None:
    run = [sys.executable, "-m", "kit", "choices"]
    printed = subprocess.run([*run, "template"], capture_output=True, text=True, check=True).stdout
    assert printed == template()
    good = subprocess.run([*run, "check", str(CAMEL_FILE)], capture_output=True, text=True)
    assert good.returncode == 0, good.stderr
    bad_file = tmp_path / "bad.toml"
    bad_file.write_text('[A24]\nalgorithm = "HS256"\n')
    bad = subprocess.run([*run, "check", str(bad_file)], capture_output=True, text=True)
    assert bad.returncode == 1 and f"{bad_file}:2: [A24] algorithm" in bad.stderr


def test_the_contract_marks_each_path_the_spec_does_not_show_with_its_a67_key() -> None:
    text = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    a67 = register.value("A67")
    for op, path in a67["paths"].items():
        section = text.split(f"#### `{a67['methods'][op]} {path}`", 1)[1].split("####", 1)[0]
        assert f"**choice A67** `paths.{op}`" in section, op
    assert "Field names are snake_case: choice A68" in text
