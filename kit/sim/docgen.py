"""The contract in the repository: ``docs/contract.md`` and ``data/openapi.json``, generated.

``data/openapi.json`` is exactly the OpenAPI document the simulator serves at ``/openapi.json``
(default settings), pretty-printed. ``docs/contract.md`` puts together, per area, the routes,
their answers and codes, and for each behaviour whether the spec states it (its words, from
``data/spec.toml``) or the simulator chose it (the register entry of ``data/assumptions.toml``).
Both are generated, never edited; ``tests/test_contract_docs.py`` fails when either is stale.

    $ python -m kit.sim.docgen           # writes both files
    $ python -m kit.sim.docgen --check   # exit status 1 when either is not current

Raises nothing itself; ``main`` returns the exit status.

    >>> "## The register" in contract_markdown(openapi_document())  # doctest: +SKIP
    True
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kit import register
from kit._dialect import DEFAULT as DEFAULT_DIALECT

METHODS = ("get", "post", "put", "patch", "delete")
NAMING_RULE = (
    "Every answer's `svc-assumptions` header names the register entries of the path the request "
    "actually took. A step of the order of checks names its entry as it runs: the bearer header "
    "(A02) whenever the partner token is checked, an `Idempotency-Key` sent or required (A20), a "
    "valid session's lifetime (A06), the session an endpoint needs (A43), the binding of a session to "
    "the resource (A31), the JWE rules (A04) and the route's body shape. A check that is only a limit "
    "or a refusal names its entry when it refuses: body limits (A22), clear-text PII (A11), session "
    "validity (A06, A07, A30, A34), not found (A30 and the resource's entry), business rules. What "
    "shapes a success is named by the route (its representation, A35, A36…); every problem+json "
    "answer names A21, every control-plane answer A45. An idempotent replay repeats the stored "
    "answer's list. A behaviour no entry names comes from the spec itself."
)


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document a simulator with default settings serves at ``/openapi.json``."""
    from kit.sim.app import create_app
    from kit.sim.settings import Settings

    return create_app(Settings()).openapi()


def openapi_documents() -> dict[str, dict[str, Any]]:
    """Every served version's OpenAPI document (A27): 1.2.0-20221215's is ``openapi_document()``."""
    from kit.sim.app import create_app
    from kit.sim.settings import Settings

    app = create_app(Settings()).fastapi()
    app.openapi()
    return dict(app.state.openapi_documents)


def document_path(root: Path, version: str) -> Path:
    """Where a version's document is kept: ``data/openapi.json`` for the spec's version,
    ``data/openapi-<version>.json`` beside it for another."""
    from kit.sim.versions import CURRENT

    return root / "data" / ("openapi.json" if version == CURRENT else f"openapi-{version}.json")


def openapi_text(document: dict[str, Any]) -> str:
    """``document`` as stored in ``data/openapi.json``: indented, key order kept, newline-ended."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """``(METHOD, path, operation)`` for every operation of ``document``, in its order."""
    return [
        (method.upper(), path, op)
        for path, ops in document["paths"].items()
        for method, op in ops.items()
        if method in METHODS
    ]


def covering_entries(method: str, path: str, status: str) -> list[dict[str, Any]]:
    """The register entries whose ``covers.routes`` names ``METHOD path status`` (wildcards too)."""
    found = []
    for entry in register.assumptions():
        for route in entry.get("covers", {}).get("routes", []):
            if route_matches(route, method, path, status):
                found.append(entry)
                break
    return found


def route_matches(route: str, method: str, path: str, status: str) -> bool:
    """Whether a ``covers`` route (``"POST /sessions 201"``, ``"* /_sim/* 2xx"``) names this one."""
    r_method, r_path, r_status = route.split(" ")
    if r_method not in ("*", method):
        return False
    if r_status != status and not (r_status.endswith("xx") and status[0] == r_status[0]):
        return False
    return r_path == path or (r_path.endswith("*") and path.startswith(r_path[:-1]))


def covered_codes() -> dict[tuple[int, str], list[str]]:
    """``(status, code)`` → the ids of the entries whose ``covers.codes`` name it."""
    codes: dict[tuple[int, str], list[str]] = {}
    for entry in register.assumptions():
        for item in entry.get("covers", {}).get("codes", []):
            status, code = item.split(" ", 1)
            codes.setdefault((int(status), code), []).append(entry["id"])
    return codes


# --- the markdown --------------------------------------------------------------------------------


def _quote(text: str, indent: str = "") -> list[str]:
    """A quote of the spec, marked the one way: a blockquote ending "— the spec (ids)"."""
    ids = ", ".join(register.cite(text))
    return [f"{indent}> {text}", f"{indent}> — the spec ({ids})", ""]


def _row_words(row: dict[str, str]) -> str:
    """A row of the spec's endpoint table, its cells as the spec writes them."""
    return " | ".join(row[key] for key in ("method", "path", "sent", "returned", "notes"))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _entry_ref(entry: dict[str, Any]) -> str:
    return f"[{entry['id']}](#{entry['id'].lower()}) {entry['topic']}"


def _seed_row(method: str, path: str) -> dict[str, str] | None:
    for row in register.spec().get("endpoint", []):
        if (row["method"], row["path"]) == (method, path):
            return dict(row)
    return None


def _route_section(method: str, path: str, op: dict[str, Any]) -> list[str]:
    responses = op.get("responses", {})
    success = [s for s in responses if s.startswith("2")]
    errors = [s for s in responses if not s.startswith("2")]
    lines = [f"#### `{method} {path}`", ""]
    if op.get("summary"):
        lines += [f"{op['summary']}{' (deprecated)' if op.get('deprecated') else ''}.", ""]
    lines += [
        f"- Answers: {', '.join(f'`{s}`' for s in success)}; errors: {', '.join(errors) or 'none'}.",
        "",
    ]
    seed = _seed_row(method, path)
    key = DEFAULT_DIALECT.operation(method, path)
    if seed is None and key is not None:
        lines += [
            f"The endpoint is not in the spec's table: its path is **choice A67** `paths.{key}` (a "
            "dialect file may give another), its body and answers are the simulator's.",
            "",
        ]
        lines += _quote("All other endpoints of the service: not shown.")
    elif seed is None:
        lines += ["The endpoint is not in the spec's table: path, body and answers are the simulator's.", ""]
        lines += _quote("All other endpoints of the service: not shown.")
    else:
        lines += [f"The spec's table ({seed['id']}: method, path, sent, returned, notes):", ""]
        lines += _quote(_row_words(seed))
    for status in success:
        for entry in covering_entries(method, path, status):
            if _covers_by_wildcard(entry, method, path, status):
                # an entry for a whole family of routes (the control plane's A45) is said once,
                # in the register, and linked from each of them
                lines.append(
                    f"- **Choice [{entry['id']}](#{entry['id'].lower()})** ({entry['topic']}), `{status}`: "
                    "one rule for every route of the family, stated once in the register."
                )
            else:
                lines.append(f"- **Choice {entry['id']}** ({entry['topic']}), `{status}`: {entry['choice']}")
    return [*lines, ""]


def _covers_by_wildcard(entry: dict[str, Any], method: str, path: str, status: str) -> bool:
    """Whether ``entry`` covers ``METHOD path status`` only through a ``*`` route."""
    routes = [r for r in entry.get("covers", {}).get("routes", []) if route_matches(r, method, path, status)]
    return all("*" in r.split(" ")[1] or r.startswith("* ") for r in routes)


def _areas(document: dict[str, Any]) -> list[str]:
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for method, path, op in operations(document):
        by_tag.setdefault((op.get("tags") or ["other"])[0], []).append((method, path, op))
    lines = ["## Routes, by area", ""]
    for tag, ops in by_tag.items():
        lines += [f"### {tag[0].upper()}{tag[1:]}", ""]
        for method, path, op in ops:
            lines += _route_section(method, path, op)
    return lines


def _codes() -> list[str]:
    entries = {e["id"]: e for e in register.assumptions()}
    lines = [
        "## Problem and error codes",
        "",
        "Every code is the simulator's choice. Problems are RFC 9457 (A21); the token endpoints answer "
        "RFC 6749 errors (A01).",
        "",
        *_quote(register.statement("error.1")["text"]),
        "| status | code | decided by |",
        "|---|---|---|",
    ]
    for (status, code), ids in sorted(covered_codes().items()):
        lines.append(f"| {status} | `{code}` | {'; '.join(_entry_ref(entries[i]) for i in ids)} |")
    return [*lines, ""]


def _register() -> list[str]:
    lines = [
        "## The register",
        "",
        "The simulator's choices, each beside the spec's words that leave it open.",
        "",
    ]
    for entry in register.assumptions():
        # the heading carries the topic; the anchor stays the bare id (#a07) that pages link
        lines += [f'<a id="{entry["id"].lower()}"></a>', "", f"### {entry['id']} — {entry['topic']}", ""]
        lines += [f"**In short:** {entry['summary']}", ""]
        lines += _quote(entry["spec"])
        lines.append(f"- **Choice:** {entry['choice']}")
        if entry.get("value"):
            lines.append(f"- **Value:** `{json.dumps(entry['value'], ensure_ascii=False)}`")
        covers = entry.get("covers", {})
        named = [f"`{r}`" for r in covers.get("routes", [])] + [f"`{c}`" for c in covers.get("codes", [])]
        if named:
            lines.append(f"- **Covers:** {', '.join(named)}")
        lines.append("")
    return lines


def _seed_statements() -> list[str]:
    spec = register.spec()
    lines = [
        "## The spec",
        "",
        f"Every statement of the spec (the API's description, version {spec['version']}), in its own "
        "words and with its id (`data/spec.toml`; the whole text is `data/seed.txt`). Nothing here is "
        "a choice: where a statement leaves something open, the register entries that choose are named.",
        "",
    ]
    section = None
    for statement in register.statements():
        if statement["section"] != section:
            section = statement["section"]
            lines += [f"### {section}", ""]
        words = statement.get("text") or " | ".join(statement["row"])
        # an anchor per statement: notebooks and guides link a quote's id to its words here
        lines += [f'<a id="{statement["id"]}"></a>**{statement["id"]}**', ""]
        lines += _quote(words)
        if "types" in statement:
            lines += [*(f"- `{t}`" for t in statement["types"]), ""]
        if statement["id"] == "category.1":
            categories = spec["categories"]
            renamed = "; ".join(f"{old} → {new}" for new, old in categories["renamed"].items())
            merged = "; ".join(f"{old} into {new}" for new, old in categories["merged"].items())
            own = ", ".join(categories["own_category"])
            lines += [
                f"Two renames ({renamed}), one merge ({merged}) and a category of its own for {own} "
                "webhooks (the spec names no category they were in before); paths unchanged.",
                "",
            ]
        if statement.get("chosen_by"):
            lines += [
                "Chosen by: " + ", ".join(f"[{i}](#{i.lower()})" for i in statement["chosen_by"]) + ".",
                "",
            ]
    return lines


def _versions(documents: dict[str, dict[str, Any]]) -> list[str]:
    """What 1.1.0 serves beside 1.2.0-20221215: how a version is chosen, its document, and the
    operations only it has (A27)."""
    from kit.sim import versions

    previous = documents[versions.PREVIOUS]
    lines = [
        "## Versions",
        "",
        f"The simulator serves {' and '.join(versions.SUPPORTED)} (choice A27): a request names one in "
        f"`{versions.HEADER}` (absent: the server's default, `{versions.CURRENT}` unless `kit serve "
        "--api-version` sets another), every answer names the version that served it, and an unknown one "
        "is 400 `unsupported-api-version` before routing (the RFC 6749 `invalid_request` on the token "
        "endpoints). Each version has its own OpenAPI document, a second document rather than marked "
        f"operations in one: `data/openapi.json` is `{versions.CURRENT}`'s (served at `/openapi.json`) "
        f"and `data/openapi-{versions.PREVIOUS}.json` is `{versions.PREVIOUS}`'s, made from the same "
        "routes by undoing each change's gate, so a client or a drift check "
        "reads one whole contract per version and `data/openapi.json` stays exactly the spec "
        "version's. The client's drift check judges each answer by the document of the version that "
        "served it. The changes, as undone under "
        f"{versions.PREVIOUS}, are the table above; the operations only {versions.PREVIOUS} has:",
        "",
    ]
    for method, path, op in operations(previous):
        if path in versions.PREVIOUS_ONLY:
            lines += _route_section(method, path, op)
    return lines


def contract_markdown(document: dict[str, Any], documents: dict[str, dict[str, Any]] | None = None) -> str:
    """``docs/contract.md`` for the OpenAPI ``document`` and the data of ``kit.register``
    (with ``documents``, every version's, also the operations only an earlier version has)."""
    spec = register.spec()
    head = [
        "# The simulator's contract",
        "",
        "<!-- Generated by `python -m kit.sim.docgen` from data/assumptions.toml, data/spec.toml and "
        "the simulator's OpenAPI document (data/openapi.json). Do not edit by hand. -->",
        "",
        f"Partner Financial Services API {spec['version']}, as the simulator serves it. For every "
        "behaviour this page says whether the spec (the API's description, `data/seed.txt`, one id per "
        "statement in `data/spec.toml`) states it — its own words, quoted as blockquotes that end by "
        "naming the spec and the statement's id — or the simulator "
        "chose it where the spec says "
        "“not shown”: a **choice** with its register entry (`Axx`, below). A partner sandbox may choose "
        "differently.",
        "",
        "## Every answer",
        "",
        f"- The session token travels in `{spec['session_header']}` (the spec, session.4, sequence.4); "
        "the partner token in `Authorization: Bearer` (choice A02).",
        "- Every answer carries `svc-request-id`, `svc-api-version` and `svc-assumptions`, and "
        "`svc-session-expires-at` when a valid session was presented (choices A27, A28).",
        "- Errors, and which check answers first (the order of checks): choice A21. Conventions (ids, "
        "times): choice A41. Field names are snake_case: choice A68. Money: choice A19.",
        "- The simulator's paths, field names, header names and codes are its default dialect: a "
        "dialect file (`kit choices template`) says how another server spells them (A67, A68, A02, "
        "A18, A20, A24, A27, A28, A64).",
        f"- {NAMING_RULE}",
        "",
    ]
    changes = [
        "## The changes of 1.2.0",
        "",
        "The nine changes from the version before (1.1.0, the kit's name for it: A27), each as its record "
        "in `data/spec.toml` states it: what it touches, what it did, what the spec says of the version "
        "before, and the register entries that choose where the spec is silent.",
        "",
        register.changes_markdown(),
    ]
    versions_part = _versions(documents) if documents else []
    lines = head + changes + versions_part + _areas(document) + _codes() + _register() + _seed_statements()
    return "\n".join(lines).rstrip("\n") + "\n"


# --- the command ---------------------------------------------------------------------------------


def targets(root: Path) -> dict[Path, str]:
    """The generated files under ``root`` (the repository) and their current content."""
    from kit.sim.versions import CURRENT

    documents = openapi_documents()
    return {
        **{document_path(root, v): openapi_text(d) for v, d in documents.items()},
        root / "docs" / "contract.md": contract_markdown(documents[CURRENT], documents),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Write the generated files, or with ``--check`` report the stale ones (exit status 1)."""
    parser = argparse.ArgumentParser(prog="python -m kit.sim.docgen", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the files are current")
    parser.add_argument("--root", type=Path, default=register.data_dir().parent, help="the repository")
    args = parser.parse_args(argv)
    stale: list[Path] = []
    for path, text in targets(args.root).items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for path in stale:
        print(f"{'stale' if args.check else 'wrote'}: {path}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
