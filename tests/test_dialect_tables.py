"""A dialect's tables are held once, by the ``Dialect`` object, and read both ways through it:
A64's problem codes, the reverse header map, an A67 path back to the kit's (issue 60, items 1-2).

The modules that apply them (the client's spelling and transport, its auth, the simulator's
service headers and OpenAPI document, the migration report) ask the dialect and keep no copy;
regress has no translator of its own. The simulator's personality reads its renamed codes from
its dialect; no module but the dialect reads a dialect's A64 table; and a header name a dialect
chooses is read through ``kit._headers.HeaderNames``, not from the register or the dialect's
entries."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from kit import _choices
from kit._dialect import DEFAULT, HEADERS, Dialect

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT / "kit"
#: The modules that apply A64's codes or the reverse header map (the issue's list).
APPLIERS = (
    "_spoken.py",
    "_transport.py",
    "_auth.py",
    "sim/dialect.py",
    "sim/openapi.py",
    "regress/attribution.py",
    "regress/migration.py",
)


@pytest.fixture(scope="module")
def camel() -> Dialect:
    """The second dialect (data/choices/camel.toml): other paths, headers and generic codes."""
    return Dialect.of(_choices.load(ROOT / "data" / "choices" / "camel.toml"))


def _copies(tree: ast.Module) -> list[str]:
    """Where a module keeps a table of its own: reads a ``codes`` table (A64's, or the
    personality's copy of it), or inverts a dialect's ``headers``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "codes":
            found.append(f"line {node.lineno}: .codes")
        if isinstance(node, ast.DictComp):
            for generator in node.generators:
                source = ast.unparse(generator.iter)
                if source.endswith("dialect.headers.items()"):
                    found.append(f"line {node.lineno}: {source} inverted")
    return found


@pytest.mark.parametrize("module", APPLIERS)
def test_a_module_that_applies_the_dialect_keeps_no_copy_of_its_tables(module: str) -> None:
    assert _copies(ast.parse((KIT / module).read_text(encoding="utf-8"))) == []


def test_regress_has_no_translator_of_its_own() -> None:
    from kit.regress import attribution, migration

    assert not hasattr(attribution, "KitNames") and not hasattr(migration, "KitNames")


def test_the_reverse_header_map_is_the_dialects(camel: Dialect) -> None:
    assert camel.header_from_wire("x-transfer-role") == "svc-p2p-role"
    assert camel.header_from_wire("x-request-id") == "svc-request-id"
    assert camel.header_from_wire("deprecation") == "deprecation"  # no entry names it: as it came
    assert camel.headers_from_wire == {w.lower(): k for k, w in camel.headers.items()}
    assert DEFAULT.header_from_wire("svc-p2p-role") == "svc-p2p-role"


def test_a_moved_path_reads_back_as_the_kits(camel: Dialect) -> None:
    assert camel.path_to_kit("POST", "/v2/transfers") == "/p2p/transfers"
    assert camel.path_to_kit("GET", "/v2/payment-cards/{id}") == "/cards/{id}"
    assert camel.path_to_kit("GET", "/v2/people/{a}/document-requests") == "/persons/{a}/document_requests"
    assert camel.path_to_kit("POST", "/cards/{id}/close") == "/cards/{id}/close"  # the spec's own path
    assert camel.path_to_kit("DELETE", "/v2/transfers") == "/v2/transfers"  # no operation takes DELETE
    assert DEFAULT.path_to_kit("GET", "/cards/{id}") == "/cards/{id}"


def test_codes_read_back_both_ways(camel: Dialect) -> None:
    generic = camel.codes_from_wire("not-found")
    assert len(generic) > 1 and "card-not-found" in generic
    assert camel.code_from_wire("not-found") == "not-found"  # one of the codes it stands for
    assert camel.code_from_wire("unauthorized") == "invalid-partner-token"  # else the first of them
    assert camel.only_code_from_wire("not-found") == "not-found"  # generic: as it came
    renamed = Dialect.of(_choices.parse({"A64": {"codes": {"card-already-closed": "card-closed"}}}))
    assert renamed.only_code_from_wire("card-closed") == "card-already-closed"
    assert renamed.code_from_wire("card-closed") == "card-already-closed"
    assert renamed.renamed_codes == {"card-already-closed": "card-closed"}
    assert DEFAULT.renamed_codes == {} and DEFAULT.only_code_from_wire("card-not-found") == "card-not-found"


def test_a_problem_is_spelled_the_wires_way_by_the_dialect(camel: Dialect) -> None:
    problem = {"type": "https://kit.example/problems/card-not-found", "code": "card-not-found", "status": 404}
    assert camel.problem_to_wire(problem) == {
        "type": "https://kit.example/problems/not-found",
        "code": "not-found",
        "status": 404,
    }
    assert list(camel.problem_to_wire(problem)) == ["type", "code", "status"]  # members in order
    kept = {"code": "card-already-closed", "status": 409}
    assert camel.problem_to_wire(kept) is kept and DEFAULT.problem_to_wire(problem) is problem


def test_the_personality_and_the_dialect_rename_the_same_codes(camel: Dialect) -> None:
    from kit.sim.personality import resolve

    overlay = _choices.load(ROOT / "data" / "choices" / "camel.toml")
    assert dict(resolve(overlay).codes) == camel.renamed_codes


def test_the_personality_keeps_no_copy_of_the_renamed_codes() -> None:
    from kit.sim.personality import Personality, resolve

    assert "codes" not in {f.name for f in dataclasses.fields(Personality)}
    chosen = resolve(_choices.parse({"A64": {"codes": {"card-already-closed": "card-closed"}}}))
    assert chosen.codes is chosen.dialect.renamed_codes
    assert chosen.codes == {"card-already-closed": "card-closed"}


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _called(node: ast.AST) -> str | None:
    """The name of the function ``node`` calls (``f`` of ``f(...)`` or ``x.f(...)``)."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _entry_reads(tree: ast.Module) -> list[tuple[int, str, str | None]]:
    """Where a module reads a register entry's key by name, as ``(line, entry, key)``: a
    dialect's ``values["Axx"]["key"]``, ``chosen("Axx", "key")``, or ``value("Axx")["key"]`` (the
    register's or an overlay's value)."""
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node) == "chosen" and len(node.args) >= 2:
            entry = _literal(node.args[0])
            if entry:
                found.append((node.lineno, entry, _literal(node.args[1])))
        elif isinstance(node, ast.Subscript):
            inner = node.value
            if isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Attribute):
                entry = _literal(inner.slice) if inner.value.attr == "values" else None
            elif isinstance(inner, ast.Call) and _called(inner) == "value" and inner.args:
                entry = _literal(inner.args[0])
            else:
                entry = None
            if entry:
                found.append((node.lineno, entry, _literal(node.slice)))
    return found


def _modules() -> dict[str, ast.Module]:
    return {
        path.relative_to(KIT).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(KIT.rglob("*.py"))
    }


def _a64_reads(tree: ast.Module) -> list[int]:
    """The lines where a module reads a dialect's A64 table: ``values["A64"]`` or
    ``chosen("A64", …)`` (an overlay's raw ``value("A64")``, which the simulator validates, is
    not a dialect's)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
            entry = _literal(node.slice) if node.value.attr == "values" else None
        elif isinstance(node, ast.Call) and _called(node) == "chosen" and node.args:
            entry = _literal(node.args[0])
        else:
            continue
        if entry == "A64":
            found.append(node.lineno)
    return found


def test_no_module_but_the_dialect_reads_a_dialects_a64_table() -> None:
    found = {
        module: lines
        for module, tree in _modules().items()
        if module != "_dialect.py" and (lines := _a64_reads(tree))
    }
    assert found == {}


#: Every header name a dialect chooses, as (entry, key): A28's ``session_id`` is the spec's
#: ``svc-session-id``, which A28 records.
_HEADER_KEYS = frozenset(HEADERS) | {("A28", "session_id")}
#: Where a header name may be read from its entry: its home, the dialect that holds the entries,
#: and the rules that check a dialect file's own values.
_READ_AT_HOME = frozenset({"_headers.py", "_dialect.py", "_dialect_rules.py"})


def test_header_names_are_read_through_their_home() -> None:
    found = {
        module: [f"line {line}: {entry} {key}" for line, entry, key in reads]
        for module, tree in _modules().items()
        if module not in _READ_AT_HOME
        if (reads := [r for r in _entry_reads(tree) if (r[1], r[2]) in _HEADER_KEYS])
    }
    assert found == {}
