"""One value, one place: the header names the client writes and reads come from the register
(through ``kit._outgoing.HEADERS``), the version from ``kit/_version.py``."""

from __future__ import annotations

import ast
from pathlib import Path

import kit
from kit import register
from kit._outgoing import HEADERS
from kit._transport import USER_AGENT
from tests.support.source import constants

KIT = Path(__file__).resolve().parents[2] / "kit"
#: The client's modules (the simulator and the other rooms read the register themselves).
CLIENT = sorted([*KIT.glob("*.py"), *(KIT / "_resources").glob("*.py")])


def _register_header_names() -> set[str]:
    """The names of the register's headers (A02's ``Authorization`` left out: RFC 6749's client
    authentication and the recorder's redaction name that header for the standard's sake)."""
    answers = register.value("A28")
    return {
        str(register.value("A18")["role_header"]),
        str(register.value("A20")["header"]),
        str(register.value("A24")["header"]),
        str(register.value("A27")["header"]),
        *(str(answers[key]) for key in ("request_id", "session_expires_at", "assumptions", "session_id")),
    }


def _strings(tree: ast.Module) -> list[tuple[int, str]]:
    """String constants of the code (docstrings left out: they may name a header)."""
    return list(constants(tree))


def test_the_header_names_are_the_registers() -> None:
    assert HEADERS.session_expires_at == register.value("A28")["session_expires_at"]
    assert HEADERS.idempotency_key == register.value("A20")["header"]
    assert HEADERS.p2p_role == register.value("A18")["role_header"]
    assert HEADERS.api_version == register.value("A27")["header"]


def test_no_client_module_spells_a_register_header_name() -> None:
    names = {name.lower() for name in _register_header_names()} | {HEADERS.replayed.lower()}
    found = {}
    for path in CLIENT:
        if path.name == "_outgoing.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        hits = [f"line {line}: {text}" for line, text in _strings(tree) if text.lower() in names]
        if hits:
            found[path.name] = hits
    assert found == {}


def test_the_version_is_written_once() -> None:
    assert f"partner-api-kit/{kit.__version__}" == USER_AGENT
    spelled = [
        path.name
        for path in KIT.rglob("*.py")
        if path != KIT / "_version.py"
        for _, text in _strings(ast.parse(path.read_text(encoding="utf-8")))
        if kit.__version__ in text.split("/")
    ]
    assert spelled == []
