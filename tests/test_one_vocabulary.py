"""One vocabulary: no path of the wire, and no name of a member sent encrypted, is spelled
outside the table of operations (``kit/_operations.py``), which derives each from the spec and
the register (issue 60, item 1); the client's models read only the members the OpenAPI document
declares.

Every string constant of ``kit/**/*.py`` is read with :mod:`ast` (docstrings aside, and the
control plane's own paths, under ``/_sim``) and none may hold one of the table's path
templates as a word: a path elsewhere would not follow the spec's rows, the register or a
dialect that moves an operation."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path

from kit._operations import OPERATIONS
from tests.support.source import constants

KIT = Path(__file__).resolve().parents[1] / "kit"
HOME = KIT / "_operations.py"
#: A template as a word of a constant: not inside a longer path (``/v2/accounts``, ``/_sim/…``).
TEMPLATES = re.compile(
    r"(?<![\w/{}])(?:"
    + "|".join(re.escape(p) for p in sorted({op.path for op in OPERATIONS}, key=len, reverse=True))
    + r")(?![\w/{}])"
)


def _control_plane_paths(tree: ast.Module) -> set[int]:
    """The ids of the paths a ``/_sim`` router declares (``router.get("/faults")``): they are
    the control plane's, under its prefix, not the partner API's."""
    prefixed = any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "APIRouter"
        and any(
            k.arg == "prefix" and isinstance(k.value, ast.Constant) and str(k.value.value).startswith("/_sim")
            for k in node.keywords
        )
        for node in ast.walk(tree)
    )
    if not prefixed:
        return set()
    return {
        id(node.args[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "router"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }


def spelled(root: Path) -> Iterator[str]:
    """``module:line: constant`` for each constant under ``root`` holding a path of the wire."""
    for path in sorted(root.rglob("*.py")):
        if path.name == HOME.name and path.parent.name == "kit":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, text in constants(tree, skip=_control_plane_paths(tree)):
            if TEMPLATES.search(text):
                yield f"{path.relative_to(root.parent)}:{line}: {text[:80]!r}"


def test_no_path_of_the_wire_is_spelled_outside_the_table() -> None:
    found = list(spelled(KIT))
    assert not found, "read the path from kit._operations (request_line, BY_KEY):\n" + "\n".join(found)


def test_the_scan_finds_a_path_as_a_word_and_leaves_longer_paths_alone(tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    kit.mkdir()
    (kit / "a.py").write_text(
        '"""A docstring may say POST /sessions."""\n'
        'router = APIRouter(prefix="/_sim")\n'
        'router.get("/accounts")\n'
        'MOVED = "/v2/accounts"\n'
        'HINT = "fetch GET /webhooks/jwks again"\n'
        'PATH = "/cards/{card_id}/close"\n'
    )
    found = list(spelled(kit))
    assert [line.split(":")[1] for line in found] == ["5", "6"], found


#: The members sent as compact JWEs, each way, as the table gives them.
ENCRYPTED = {m for op in OPERATIONS for m in (*op.encrypted, *op.encrypted_answer)}
MEMBERS = re.compile(r"\b(?:" + "|".join(sorted(ENCRYPTED)) + r")\b")
#: OpenAPI prose a route declares: a summary or description may name a member, as a docstring may.
PROSE = frozenset({"summary", "description"})


def _prose(tree: ast.Module) -> set[int]:
    return {
        id(k.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for k in node.keywords
        if k.arg in PROSE and isinstance(k.value, ast.Constant)
    }


def test_no_encrypted_member_is_spelled_outside_the_table() -> None:
    """Which members travel encrypted is the table's word (its ``encrypted`` and
    ``encrypted_answer``): the client seals and opens them, the simulator decrypts and seals
    them, by the operation's key, never by a name of their own."""
    assert ENCRYPTED  # the table names some: the scan below has something to look for
    found = []
    for path in sorted(KIT.rglob("*.py")):
        if path == HOME:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, text in constants(tree, skip=_prose(tree)):
            if MEMBERS.search(text):
                found.append(f"{path.relative_to(KIT.parent)}:{line}: {text[:80]!r}")
    assert not found, "read the member from kit._operations (Operation.encrypted):\n" + "\n".join(found)


def test_the_table_holds_the_encrypted_members_the_register_names() -> None:
    """The table writes what the register's entries say in words (A05, A08, A11, A12, A26):
    every ``encrypted_<name>`` member an entry names, and no other."""
    from kit import register

    texts = " ".join(str(a["choice"]) for a in register.assumptions())
    assert set(re.findall(r"\bencrypted_[a-z_]+\b", texts)) == ENCRYPTED


def test_the_simulator_models_declare_the_table_members() -> None:
    """Every route's body and answer models declare exactly the table's encrypted members
    (``declare`` refuses a route otherwise, when its module is imported: here, all of them)."""
    from kit.sim.table import build

    assert build().api_router().routes


def test_a_route_whose_model_disagrees_with_the_table_is_refused() -> None:
    import pytest
    from pydantic import BaseModel

    from kit.sim.openapi import declare
    from kit.sim.table import Routes, RouteTableError

    class PersonCreate(BaseModel):
        encrypted_person: str

    with pytest.raises(RouteTableError, match=r"create_person.*encrypted_person.*encrypted_pii"):
        declare(Routes(), "create_person", takes=PersonCreate, summary="a person")


#: The client's models built from something else than a partner operation's JSON answer, whose
#: fields are the kit's: the init data's keys (from its JWKS), the token's (RFC 6749's names,
#: kept by the client), the simulator's personas (its control plane) and a webhook delivery's
#: envelope (A23).
NOT_AN_ANSWER = frozenset({"InitData", "TokenInfo", "Persona", "WebhookEvent"})


def _document_members() -> set[str]:
    from kit import register

    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            found.update(node.get("properties", {}) if isinstance(node.get("properties"), dict) else ())
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads((register.data_dir() / "openapi.json").read_text(encoding="utf-8")))
    return found


def test_the_client_models_read_only_members_the_document_declares() -> None:
    """Member names have one home, the OpenAPI document (made from the simulator's models):
    each field of a client model built from an answer is a member it declares, so a renamed
    member cannot leave the client reading a name the server no longer sends. A dialect
    renames them in one place (``kit._dialect``, A68)."""
    import dataclasses
    import inspect

    import kit.models
    from kit._modelbase import Model

    members = _document_members()
    models = {
        name: cls
        for name, cls in inspect.getmembers(kit.models, inspect.isclass)
        if issubclass(cls, Model) and dataclasses.is_dataclass(cls)
    }
    assert set(models) >= NOT_AN_ANSWER
    unread = {
        name: [f.name for f in dataclasses.fields(cls) if f.name not in members]
        for name, cls in models.items()
        if name not in NOT_AN_ANSWER
    }
    assert len(unread) >= 9 and all(not fields for fields in unread.values()), unread
    assert all(any(f.name not in members for f in dataclasses.fields(models[n])) for n in NOT_AN_ANSWER)
