"""The leak scanner: every kind found in text, notebook outputs and DataFrames; no value echoed."""

from __future__ import annotations

import base64
import json
import secrets
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from kit import _env as env
from kit._sensitive import Sensitive
from kit.register import personas, value
from kit.regress import leaks
from tests.notebooks.helpers import FIXTURES


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwe() -> str:
    header = _b64(json.dumps({"alg": "ECDH-ES+A256KW", "enc": "A256GCM", "kid": "k1"}).encode())
    return ".".join([header, *(_b64(secrets.token_bytes(n)) for n in (40, 12, 64, 16))])


PERSONA = personas()[3]
SIM_SECRET, SIM_SECRET_B, *_ = env.SIM_PARTNER_CLIENTS.values()  # the simulator's built-in secrets
YEAR, MONTH, NATIONAL_ID_DIGITS = value("A12")["question_texts"]  # the KYC questions, decrypted
# kind -> a value of that kind, as it would appear in an output
SAMPLES = {
    "persona-dob": PERSONA["date_of_birth"],
    "persona-national-id": PERSONA["national_id"],
    "client-secret": SIM_SECRET,
    "jwe": _jwe(),
    "session-token": "ses_" + secrets.token_urlsafe(32),
    "kyc-question": NATIONAL_ID_DIGITS,
}
CLEAN = [
    "account acc_5ea792c644255bcf6a87 opened for per_0123456789abcdef0123",
    "created_at 2025-01-06T09:00:00Z, expires_on 2028-01-31, nonce expires 2025-01-06T09:05:00Z",
    "The partner sends a Bearer token with every call; a missing one is 401 invalid-partner-token "
    'with WWW-Authenticate: Bearer error="invalid_token". The KYC questions ask for the birth year.',
    'Sensitive(session_token=••••••) and {"access_token": "••••••", "token_type": "Bearer"}',
    "balance 500.00 USD after 3 transfers; request req_0962541c37bfcfbf384e; Idempotency-Key "
    "3f2b1c9d-1a2b-4c3d-8e9f-0a1b2c3d4e5f; 1000000001 events",
    f"client_id sim-partner; the secret comes from {env.CLIENT_SECRET} (never shown)",
]


@pytest.fixture(autouse=True)
def _no_secret_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (env.CLIENT_SECRET, env.ACCESS_TOKEN, env.SIM_PARTNERS, env.SIM_CONTROL_TOKEN):
        monkeypatch.delenv(name, raising=False)


def _never_echoed(findings: list[leaks.Finding], value: str) -> None:
    assert findings
    for finding in findings:
        assert value not in repr(finding) and value not in str(finding)
        assert finding.hint == leaks.HINTS[finding.kind]


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_kind_is_found_in_text(kind: str) -> None:
    value = SAMPLES[kind]
    findings = leaks.scan_text(f"first line\nthe value: {value}.\n", location="cell")
    assert [(f.kind, f.location) for f in findings] == [(kind, "cell, line 2")]
    _never_echoed(findings, value)


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_kind_is_found_in_a_notebook_output(kind: str, tmp_path: Path) -> None:
    value = SAMPLES[kind]
    nb = new_notebook(
        cells=[
            new_markdown_cell("# Clean"),
            new_code_cell(
                "show()",
                execution_count=1,
                outputs=[
                    new_output("stream", name="stdout", text="ok\n"),
                    new_output("execute_result", execution_count=1, data={"text/plain": f"'{value}'"}),
                ],
            ),
        ]
    )
    path = tmp_path / "leaky.ipynb"
    nbformat.write(nb, path)
    findings = leaks.scan_notebook(path)
    assert [(f.kind, f.location) for f in findings] == [
        (kind, f"{path}: cell 2 (In [1]) output 2 text/plain")
    ]
    _never_echoed(findings, value)
    assert [f.kind for f in leaks.scan_file(path)] == [kind]


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_kind_is_found_in_a_dataframe(kind: str) -> None:
    value = SAMPLES[kind]
    df = pd.DataFrame(
        {"path": ["/sessions", "/accounts"], "detail": [None, f"got {value}"], "status": [201, 200]}
    )
    findings = leaks.scan_dataframe(df, name="history")
    assert [(f.kind, f.location) for f in findings] == [(kind, "history row 2, column 'detail'")]
    _never_echoed(findings, value)


def test_every_persona_is_covered() -> None:
    for persona in personas():
        text = f"{persona['date_of_birth']} / {persona['national_id']}"
        assert [f.kind for f in leaks.scan_text(text)] == ["persona-dob", "persona-national-id"]


@pytest.mark.parametrize(
    "written",
    [
        "14/03/1950",
        "03/14/1950",
        "14.03.1950",
        "1950/03/14",
        "March 14, 1950",
        "14 Mar 1950",
        "19500314",
        "datetime.date(1950, 3, 14)",
    ],
)
def test_a_dob_written_in_other_forms_is_found(written: str) -> None:
    assert personas()[0]["date_of_birth"] == "1950-03-14"
    assert [f.kind for f in leaks.scan_text(f"born {written}")] == ["persona-dob"]


def test_national_id_without_separators_is_found() -> None:
    assert [f.kind for f in leaks.scan_text("id 000000004")] == ["persona-national-id"]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Authorization: Bearer " + secrets.token_urlsafe(32), "partner-token"),
        ('{"access_token": "' + secrets.token_urlsafe(32) + '", "token_type": "Bearer"}', "partner-token"),
        ("{'session_token': '" + secrets.token_urlsafe(32) + "'}", "session-token"),
        ("eyJhbGciOiJFUzI1NiIsImtpZCI6IncxIn0.." + _b64(secrets.token_bytes(64)), "jws-detached"),
        (SIM_SECRET_B, "client-secret"),
        (MONTH, "kyc-question"),
    ],
    ids=[
        "bearer-header",
        "access-token-json",
        "session-token-dict",
        "detached-jws",
        "simulator-secret-b",
        "kyc",
    ],
)
def test_other_token_shapes_are_found(text: str, kind: str) -> None:
    assert [f.kind for f in leaks.scan_text(text)] == [kind]


def test_environment_and_given_secrets_are_found(monkeypatch: pytest.MonkeyPatch) -> None:
    client_secret, access, partner = (secrets.token_urlsafe(20) for _ in range(3))
    monkeypatch.setenv(env.CLIENT_SECRET, client_secret)
    monkeypatch.setenv(env.ACCESS_TOKEN, access)
    monkeypatch.setenv(env.SIM_PARTNERS, f"p1:{partner},p2:other-secret-2")
    text = f"a={client_secret} b={access} c={partner}"
    assert [f.kind for f in leaks.scan_text(text)] == ["client-secret", "partner-token", "client-secret"]
    given = Sensitive("my-own-secret-42", label="secret")
    assert [f.kind for f in leaks.scan_text("x my-own-secret-42 y", secrets=[given])] == ["secret"]
    assert [f.kind for f in leaks.scan_text("Card status: frozen", extra=["card status"])] == [
        "sensitive-text"
    ]


@pytest.mark.parametrize("text", CLEAN)
def test_no_false_positive_on_ids_timestamps_and_prose(text: str) -> None:
    assert leaks.scan_text(text) == []


def test_sources_and_papermill_metadata_are_scanned() -> None:
    nb = new_notebook(cells=[new_code_cell(f'client = connect(client_secret="{SIM_SECRET}")')])
    nb.metadata["papermill"] = {"parameters": {"profile": "sim", "note": SAMPLES["jwe"]}}
    found = {(f.kind, f.location) for f in leaks.scan_notebook(nb)}
    assert found == {
        ("client-secret", "notebook: cell 1 source"),
        ("jwe", "notebook: metadata.papermill.parameters.note"),
    }


def test_error_outputs_are_scanned_without_colour_codes() -> None:
    token = SAMPLES["session-token"]
    error = new_output(
        "error",
        ename="AssertionError",
        evalue="mismatch",
        traceback=["\x1b[31mAssertionError\x1b[39m: " + token[:10] + "\x1b[0m" + token[10:]],
    )
    nb = new_notebook(cells=[new_code_cell("check()", execution_count=4, outputs=[error])])
    assert [(f.kind, f.location) for f in leaks.scan_notebook(nb)] == [
        ("session-token", "notebook: cell 1 (In [4]) output 1 traceback")
    ]


def test_a_notebook_reading_personas_is_not_a_leak_by_itself() -> None:
    # The fixture loads kit.register.personas() in a cell: only what it shows could leak.
    assert leaks.scan_notebook(FIXTURES / "03_guarded.ipynb") == []


def test_dataframe_headers_and_index_labels_are_scanned_by_position() -> None:
    nid = PERSONA["national_id"]
    df = pd.DataFrame({nid: [1]}, index=[SAMPLES["session-token"]])
    findings = leaks.scan_dataframe(df)
    assert [(f.kind, f.location) for f in findings] == [
        ("persona-national-id", "DataFrame column 1 (its name)"),
        ("session-token", "DataFrame row 1 (its index label)"),
    ]
    _never_echoed(findings, nid)


def test_redact_replaces_values_and_keeps_clean_text() -> None:
    token = SAMPLES["session-token"]
    assert leaks.redact(f"got {token} for {SIM_SECRET}") == "got <session-token> for <client-secret>"
    coloured = "\x1b[31mAssertionError\x1b[39m: fine"
    assert leaks.redact(coloured) == coloured
