"""The wire's header names have one home, ``kit/_headers.py``: the client, the simulator, the
checks and regress read them there, and no other module of ``kit`` spells one (issue 60, item 1).

HTTP's own headers are the standards' names, not the wire's choices, and stay where they are
used: ``Authorization`` (A02's default, and RFC 6749's client authentication, the recorder's
redaction and the dialect rules name it for the standard's sake), ``Content-Type``,
``Deprecation``, ``Link``, ``Retry-After``, ``WWW-Authenticate``…

The kit's modules are read with :mod:`ast`, never imported for the scan, so that a name is found
whatever the module is; docstrings may name a header."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from kit import register
from tests.support.source import constants

KIT = Path(__file__).resolve().parents[1] / "kit"
HOME = KIT / "_headers.py"
#: The header names the register chooses that are HTTP's own (see the module docstring).
HTTP_OWN = frozenset({"authorization"})
#: The control plane's headers, its token's and a snapshot's: the simulator's own, not a
#: register entry's.
CONTROL_TOKEN = "svc-control-token"
STATE_VERSION = "svc-state-version"


def _wire_names() -> set[str]:
    """Every header name of the wire (lower case): the register's choices and the spec's
    ``svc-session-id`` (A28 records it), the control plane's headers; HTTP's own left out."""
    answers = register.value("A28")
    names = {
        register.value("A02")["header"],
        register.value("A18")["role_header"],
        register.value("A20")["header"],
        register.value("A20")["replayed_header"],
        register.value("A24")["header"],
        register.value("A27")["header"],
        *(answers[key] for key in ("request_id", "session_expires_at", "assumptions", "session_id")),
        CONTROL_TOKEN,
        STATE_VERSION,
    }
    return {str(name).lower() for name in names} - HTTP_OWN


def _constants(path: Path) -> Iterator[tuple[int, str]]:
    """The string (and bytes) constants of a module's code, docstrings left out."""
    return constants(ast.parse(path.read_text(encoding="utf-8")))


def test_no_module_spells_a_wire_header_name_outside_its_home() -> None:
    names = _wire_names()
    found = [
        f"{path.relative_to(KIT.parent)}:{line}: {text!r}"
        for path in sorted(KIT.rglob("*.py"))
        if path != HOME
        for line, text in _constants(path)
        if text.lower() in names
    ]
    assert found == []


def test_the_home_holds_every_name_of_the_wire() -> None:
    from kit import _headers

    held = {name.lower() for name in _headers.HEADERS} | {_headers.CONTROL_TOKEN, _headers.STATE_VERSION}
    assert held - HTTP_OWN == _wire_names()


def test_the_client_and_the_simulator_read_the_same_home() -> None:
    from kit import _headers, _outgoing
    from kit.sim import headers as sim

    names = _headers.HEADERS
    assert _outgoing.HEADERS is names and _outgoing.HeaderNames is _headers.HeaderNames
    assert tuple(names) == (
        sim.AUTHORIZATION,
        sim.SESSION_ID,
        sim.IDEMPOTENCY_KEY,
        sim.REPLAYED,
        sim.REQUEST_ID,
        sim.ASSUMPTIONS,
        sim.SESSION_EXPIRES_AT,
        sim.API_VERSION,
        sim.ROLE,
        sim.SIGNATURE,
    )
    assert sim.STATE_VERSION == _headers.STATE_VERSION


def test_the_control_token_header_is_the_homes() -> None:
    from kit import _env, _headers

    assert _headers.CONTROL_TOKEN == CONTROL_TOKEN
    assert not hasattr(_env, "SIM_CONTROL_TOKEN_HEADER")  # one home: _env imports no kit module
