"""The contract in the repository: docs/contract.md and data/openapi.json are current, and every
route, status and code of the simulator is covered by a register entry or a fact of the seed.

The coverage is data (each register entry's ``covers``: routes and codes, in
data/assumptions.toml; the seed's endpoint table in data/spec.toml), read here, not a table of
this test. The codes the simulator can answer are ``kit._codes``' (the only ones its problems take),
so a new code without an entry fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from kit import _codes, register
from kit.sim import docgen

ROOT = Path(__file__).resolve().parent.parent
#: Codes the simulator's source names but that no partner answer carries on purpose: the
#: fallback for an HTTP error Starlette raises that is neither 404 nor 405 (never on a partner
#: route; the fast-path test provokes one).
NOT_A_CONTRACT_CODE = {"http-error"}


@pytest.fixture(scope="module")
def document() -> dict:
    return docgen.openapi_document()


@pytest.fixture(scope="module")
def documents() -> dict[str, dict]:
    """Every served version's document (A27)."""
    return docgen.openapi_documents()


# --- the files are current ------------------------------------------------------------------------


def test_data_openapi_json_is_the_document_the_simulator_serves(document: dict) -> None:
    stored = (ROOT / "data" / "openapi.json").read_text(encoding="utf-8")
    assert stored == docgen.openapi_text(document), "stale: run python -m kit.sim.docgen"


def test_the_served_document_is_the_stored_one(http: httpx.Client) -> None:
    served = http.get("/openapi.json").json()
    assert served == json.loads((ROOT / "data" / "openapi.json").read_text(encoding="utf-8"))


def test_docs_contract_md_is_current(document: dict, documents: dict[str, dict]) -> None:
    stored = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    assert stored == docgen.contract_markdown(document, documents), "stale: run python -m kit.sim.docgen"


def test_each_version_has_its_stored_document(documents: dict[str, dict]) -> None:
    assert set(documents) == {"1.1.0", "1.2.0-20221215"}
    assert documents["1.2.0-20221215"] == docgen.openapi_document()
    for version, doc in documents.items():
        stored = docgen.document_path(ROOT, version).read_text(encoding="utf-8")
        assert stored == docgen.openapi_text(doc), f"stale: run python -m kit.sim.docgen ({version})"
        assert doc["info"]["version"] == version
    old, new = documents["1.1.0"]["paths"], documents["1.2.0-20221215"]["paths"]
    assert "/oauth/accesstoken" in new and "/oauth/accesstoken" not in old  # change 1
    assert "/accounts/{account_id}/savings/close" in old and "/accounts/{account_id}/savings/close" not in new


def test_the_check_command_finds_a_stale_file(tmp_path: Path) -> None:
    assert docgen.main(["--root", str(tmp_path)]) == 0  # writes both
    assert docgen.main(["--check", "--root", str(tmp_path)]) == 0
    (tmp_path / "docs" / "contract.md").write_text("edited by hand\n", encoding="utf-8")
    assert docgen.main(["--check", "--root", str(tmp_path)]) == 1


# --- coverage: routes, statuses, codes ----------------------------------------------------------


def test_every_route_and_success_is_covered_by_a_register_entry(documents: dict[str, dict]) -> None:
    missing = [
        f"{method} {path} {status}"
        for document in documents.values()
        for method, path, op in docgen.operations(document)
        for status in op["responses"]
        if status.startswith("2") and not docgen.covering_entries(method, path, status)
    ]
    assert not missing, f"no register entry covers: {missing}"


def test_every_covered_route_exists(documents: dict[str, dict]) -> None:
    ops = [op for d in documents.values() for op in docgen.operations(d)]
    served = {(m, p, s) for m, p, op in ops for s in op["responses"]}
    for entry in register.assumptions():
        for route in entry.get("covers", {}).get("routes", []):
            assert any(docgen.route_matches(route, *r) for r in served), (entry["id"], route)


def test_every_error_status_has_a_covered_code(document: dict) -> None:
    statuses = {status for status, _ in docgen.covered_codes()}
    for method, path, op in docgen.operations(document):
        for status in op["responses"]:
            if not status.startswith("2"):
                assert int(status) in statuses, f"{method} {path} {status}: no code of that status"


def test_the_seeds_endpoints_are_served_or_removed(document: dict) -> None:
    served = {(m, p) for m, p, _ in docgen.operations(document)}
    removed = {(e["method"], e["path"]) for e in register.spec()["removed_endpoints"]}
    for row in register.spec()["endpoint"]:
        key = (row["method"], row["path"])
        assert key in served or key in removed, key


def answerable_codes() -> set[str]:
    """Every error code the simulator can answer (``kit._codes``, the types its problems take)."""
    return set(_codes.SIMULATED) - NOT_A_CONTRACT_CODE


def test_every_code_the_simulator_can_answer_is_covered() -> None:
    answerable = answerable_codes()
    assert len(answerable) > 40  # the scan finds them (it is not vacuous)
    missing = sorted(answerable - {code for _, code in docgen.covered_codes()})
    assert not missing, f"codes without a register entry's covers.codes: {missing}"


def test_every_covered_code_is_one_the_simulator_can_answer() -> None:
    stale = sorted({code for _, code in docgen.covered_codes()} - answerable_codes())
    assert not stale, f"covers.codes the simulator never answers: {stale}"


def test_the_named_issue_items_are_registered() -> None:
    """The inventions issue 13 listed, each decided by an entry (by what it covers or says)."""
    codes = docgen.covered_codes()
    for code in [
        (400, "invalid_scope"),
        (400, "idempotency-key-invalid"),
        (429, "rate-limited"),
        (422, "webhook-url-not-allowed"),
        (422, "self-transfer"),
        (422, "insufficient-funds"),
    ]:
        assert code in codes, code
    assert docgen.covering_entries("DELETE", "/sessions", "204")
    assert docgen.covering_entries("GET", "/cards/{card_id}", "200")
    assert docgen.covering_entries("POST", "/p2p/transfers", "201")
    texts = {e["id"]: e["choice"] for e in register.assumptions()}
    assert any("card.expired" in t and "Deprecation" in t for t in texts.values())
    assert any("Other webhook events" in e["spec"] for e in register.assumptions())
    assert any("snake_case" in t and "RFC 3339" in t and "acc_" in t for t in texts.values())
    assert any("completed" in t and "/p2p/transfers" in t for t in texts.values())


# --- no citation of files outside the repository --------------------------------------------------

#: DESIGN.md / STYLE.md, "DESIGN §3.4", or a bare "§3.4" that is not an RFC's section.
_OUTSIDE = re.compile(r"\bDESIGN\b|\bSTYLE\.md\b|(?<!RFC \d{4} )§ ?\d")


@pytest.mark.parametrize("folder", ["kit", "docs", "data", "tests", "notebooks", "."])
def test_nothing_cites_files_outside_the_repository(folder: str) -> None:
    """A partner receives the repository alone: README, docs, notebooks and code cite what is in it."""
    hits = []
    paths = (ROOT / folder).glob("*") if folder == "." else (ROOT / folder).rglob("*")
    for path in sorted(paths):
        suffixes = (".py", ".md", ".toml", ".json", ".cfg", ".ipynb")
        if path.suffix not in suffixes or "node_modules" in path.parts or not path.is_file():
            continue
        if path.name == "openapi.json":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _OUTSIDE.search(line) and path != Path(__file__):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}")
    assert not hits, "cite the register or docs/contract.md instead:\n" + "\n".join(hits)


# --- the spec's section holds the spec, and only the spec -----------------------------------------


def _spec_section() -> str:
    text = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    return text[text.index("\n## The spec\n") :]


def test_the_spec_section_holds_every_statement_with_its_id() -> None:
    section = _spec_section()
    for statement in register.statements():
        assert f"**{statement['id']}**" in section, statement["id"]
        words = statement.get("text") or " | ".join(statement["row"])
        assert f"> {words}\n> — the spec ({statement['id']})" in section, statement["id"]


@pytest.mark.parametrize(
    "choice",
    ["svc-p2p-role", "410", "30 days", "event-renamed", "endpoint-removed", "successor", 'Image" = '],
)
def test_the_spec_section_presents_no_choice_as_the_specs(choice: str) -> None:
    """The simulator's choices the issue found presented as the spec's words are not in it."""
    assert choice not in _spec_section()


def test_the_categories_are_said_as_the_spec_says() -> None:
    section = _spec_section()
    assert "Two renames (Top Up → External Card Transfers; Tokens → Digital Wallet Tokens)" in section
    assert "one merge (Image into Payback Rewards)" in section
    assert "Document Request webhooks (the spec names no category they were in before)" in section
    assert "Document Request webhooks →" not in section and "Image → Payback" not in section


def test_the_change_table_in_the_docs_comes_from_the_records() -> None:
    """The nine changes' table of docs/contract.md is ``register.changes_markdown``, from their
    records (notebook 10 ends with another view of them: tests/notebooks/test_whats_new.py)."""
    table = register.changes_markdown()
    assert table in (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    assert all(f"| change.{n} |" in table for n in range(1, 10))


# --- the page is the contract, for a partner ------------------------------------------------------


def test_the_contract_names_no_source_file() -> None:
    """Where a choice is enforced is the maintainers' (``enforced_in``), not the contract's."""
    page = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    assert "Enforced in" not in page
    assert not re.findall(r"`kit/[\w/]+\.py`", page)


def test_a_rule_for_a_family_of_routes_is_stated_once() -> None:
    page = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    control_plane = register.assumption("A45")["choice"]
    assert page.count(control_plane) == 1
    assert page.count("- **Choice [A45](#a45)** (The simulator's control plane)") > 5


def test_each_register_heading_carries_its_topic_and_keeps_its_anchor() -> None:
    page = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    for entry in register.assumptions():
        anchor = entry["id"].lower()
        assert f'<a id="{anchor}"></a>\n\n### {entry["id"]} — {entry["topic"]}\n' in page, entry["id"]
