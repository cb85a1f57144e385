"""The seed's words, exactly: ``data/spec.toml`` holds every statement of the seed and nothing
else, and every quote of the seed in the docs and notebooks is the seed's.

- Every statement (``id``, ``text`` or ``row``) is verbatim in ``data/seed.txt``, and every line
  of the seed that states something is held by a statement.
- A quote of the seed is marked one way everywhere: a Markdown blockquote whose last line is
  ``— the spec (ids)``, naming the statements it quotes (each id may link to its words in
  ``docs/contract.md``). Every marked quote in ``docs/`` and the
  notebooks' Markdown is checked against ``data/seed.txt`` (``kit.register.quote_faults``):
  verbatim fragments, whole sentences, items or cells unless an "…" marks an elision. A quote of
  the seed written any other way ("the seed: "…"") is refused.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kit import register

ROOT = Path(__file__).resolve().parent.parent
SEED = (ROOT / "data" / "seed.txt").read_text(encoding="utf-8")
STATEMENTS = register.statements()
IDS = {s["id"] for s in STATEMENTS}

#: Lines of the seed that state nothing themselves: its title and opening, lead-ins of lists,
#: table headers. Everything else must be held by a statement.
NOT_STATEMENTS = {
    "This document covers the whole interface of the service as far as it is specified: the two levels of session (partner level and user/device level), the endpoints that create them, the inbound and outbound events that are named, and the changes of version 1.2.0-20221215.",  # noqa: E501
    "Rules that hold for the service as a whole:",
    "Changes in 1.2.0:",
}
_TABLE_RULE = re.compile(r"^\|(\s*-+\s*\|)+$")
_MARK = re.compile(r"^\s*>\s*— the spec \(((?:[^()]|\([^()]*\))*)\)\s*$")
#: A statement id linked to its words in the contract: ``[auth.1](../docs/contract.md#auth.1)``.
_LINKED = re.compile(r"\[([^\]]+)\]\([^)]*\)")
#: A span in double quotes (straight or curly), and inline code (left out before looking).
_QUOTED = re.compile(r"[\"“]([^\"“”\n]+)[\"”]")
_CODE = re.compile(r"`[^`\n]*`")


def unmarked_quotes(markdown: str) -> list[str]:
    """Quotes of the seed not marked the one way: outside marked blockquotes and code, a span of
    two or more words in double quotes that is the seed's text, or stands on a line that speaks
    of the seed. The seed's own term "not shown" is a term, not a quote."""
    marked = {line for line in markdown.splitlines() if line.lstrip().startswith(">")}
    found = []
    for line in markdown.splitlines():
        if line in marked and any(_MARK.match(m) for m in marked):
            continue
        plain = _CODE.sub("", line)
        for span in _QUOTED.findall(plain):
            if len(span.split()) < 2 or span.strip() == "not shown":
                continue
            if span in SEED or re.search(r"\bseed\b|\bthe spec\b", plain, re.IGNORECASE):
                found.append(span)
    return found


def _row(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _held(line: str) -> bool:
    content = re.sub(r"^(#+ |- |\d+\. )", "", line.strip())
    if line.startswith("|"):
        if _TABLE_RULE.match(line.strip()):
            return True
        cells = _row(line)
        return any(s.get("row") == cells for s in STATEMENTS) or cells in (
            ["Attribute", "Meaning"],
            ["Subject", "State", "Moved by", "Condition", "Next state", "Other effects"],
            ["Method", "Path", "Sent", "Returned", "Notes"],
            ["Event", "Status"],
        )
    types = register.statement("event.1")["types"]
    rest = content
    for statement in STATEMENTS:  # a line may hold several statements (sequence.5, sequence.6)
        rest = rest.replace(statement.get("text", "\0"), "")
    return content in types or not rest.strip() or rest.strip() in NOT_STATEMENTS


# --- data/spec.toml: the seed, all of it, nothing else ---------------------------------------------


def test_every_statement_is_verbatim_in_the_seed() -> None:
    for s in STATEMENTS:
        assert ("text" in s) != ("row" in s), s["id"]
        if "text" in s:
            assert s["text"] in SEED, s["id"]
            assert not register.quote_faults(s["text"]), (s["id"], register.quote_faults(s["text"]))
        else:
            assert "| " + " | ".join(s["row"]) + " |" in SEED.splitlines(), s["id"]


def test_every_line_of_the_seed_that_states_something_is_a_statement() -> None:
    lines = [ln for ln in SEED.splitlines()[1:] if ln.strip() and not ln.startswith("#")]
    missing = [ln for ln in lines if not _held(ln)]
    assert not missing, missing
    assert len(STATEMENTS) >= 60


def test_ids_are_stable_in_the_seeds_order_and_the_changes_keep_their_numbers() -> None:
    ids = [s["id"] for s in STATEMENTS]
    assert len(ids) == len(IDS)
    by_prefix: dict[str, list[int]] = {}
    for statement_id in ids:
        prefix, number = statement_id.split(".")
        by_prefix.setdefault(prefix, []).append(int(number))
    for prefix, numbers in by_prefix.items():
        assert numbers == list(range(1, len(numbers) + 1)), prefix
    for n in range(1, 10):
        assert f"  {n}. {register.statement(f'change.{n}')['text']}" in SEED


def test_where_the_seed_leaves_something_open_the_register_chooses() -> None:
    entries = {a["id"] for a in register.assumptions()}
    for s in STATEMENTS:
        chosen = s.get("chosen_by", [])
        assert set(chosen) <= entries, (s["id"], chosen)
        words = s.get("text") or " ".join(s["row"])
        if "not shown" in words and s["id"] != "doc.1":  # doc.1 defines the words themselves
            assert chosen, f"{s['id']} leaves something open: which register entries choose?"


#: The lead-in of the change list: the version every change item is "in".
CHANGE_LEAD = "Changes in 1.2.0:"


def _own_words(s: dict) -> str:
    """A statement's own words: its text or row (and event.1's list items; a change item's list
    lead-in, which names the version)."""
    words = s.get("text") or " | ".join(s["row"])
    words += "\n" + "\n".join(s.get("types", []))
    return words + ("\n" + CHANGE_LEAD if s["id"].startswith("change.") else "")


def _values(value: object) -> list[str]:
    """Every string a fact holds (a list's items, a table's keys and values)."""
    if isinstance(value, dict):
        return [str(part) for item in value.items() for part in item]
    if isinstance(value, list):
        return [str(item) for item in value]
    return [str(value)]


def _in(part: str, words: str) -> bool:
    """``part`` in ``words``, or each of its words is ("POST /x" of "POST and DELETE /x")."""
    return part in words or all(token in words for token in part.split())


def test_the_statements_hold_no_choice() -> None:
    """No key beyond the statement's words and facts drawn from them (no ``successor`` of the
    DELETE, no ``shown_by``, no titles): every value of a statement's own keys is in its own words;
    a fact that other statements word is kept apart, under ``derived``, whose ``from`` names them
    and whose values are in their words."""
    allowed = {"id", "section", "text", "row", "chosen_by", "see", "derived"}
    for s in STATEMENTS:
        assert set(s.get("see", [])) <= IDS, s["id"]
        words = _own_words(s)
        for key, value in s.items():
            if key not in allowed:
                for part in _values(value):
                    assert _in(part, words), (s["id"], key, part)
        derived = dict(s.get("derived", {}))
        if derived:
            sources = derived.pop("from", [])
            assert sources and set(sources) <= IDS - {s["id"]}, (s["id"], sources)
            theirs = "\n".join(_own_words(register.statement(i)) for i in sources)
            for key, value in derived.items():
                for part in _values(value):
                    assert _in(part, theirs), (s["id"], "derived", key, part)


def test_what_other_statements_word_is_kept_apart() -> None:
    """endpoint.2 and .3 say "Deprecated", not when: that is change.1's; change.1 does not say what
    replaced what: that is endpoint.2's ("Replaced by POST /oauth/accesstoken"). Code reads both."""
    for endpoint in ("endpoint.2", "endpoint.3"):
        held = register.statement(endpoint)
        assert "deprecated_in" not in held and held["derived"]["from"] == ["change.1"], held
    change = register.statement("change.1")
    assert "previously" not in change and change["derived"]["from"] == ["endpoint.2"]
    assert [e["deprecated_in"] for e in register.fact("deprecated_endpoints")] == ["1.2.0", "1.2.0"]
    (first,) = [c for c in register.fact("change") if c["id"] == "change.1"]
    assert first["previously"] == {"POST /oauth/accesstoken": "POST /authorization/server_api/access_tokens"}


def test_every_register_entry_quoting_a_statement_is_listed_on_it() -> None:
    """Back-links complete: an entry whose ``spec`` quotes a statement is in that statement's
    ``chosen_by`` (a fragment that several statements share, "Response: not shown", needs one)."""
    from kit.register import _fragments

    by_id = {s["id"]: s for s in STATEMENTS}
    missing = []
    for entry in register.assumptions():
        parts, _, _ = _fragments(entry["spec"])
        for part in parts:
            holders = [s["id"] for s in STATEMENTS if part in _own_words(s).replace(CHANGE_LEAD, "")]
            assert holders, (entry["id"], part)
            if not any(entry["id"] in by_id[h].get("chosen_by", []) for h in holders):
                missing.append((entry["id"], holders, part[:40]))
    assert not missing, missing


def test_each_change_says_what_it_touches_and_what_it_did() -> None:
    """Every change names what it touches and what it did to it (or, for the categories, the
    seed's words that it has no effect on the wire); where the seed does not say how the version
    before behaved, a register entry chooses (all but change.9, which changes no path)."""
    for change in register.spec()["change"]:
        touched = [*change["operations"], *change["fields"], *change["card_types"], *change["event_types"]]
        touched += [*change["areas"], *change["headers"], *change["categories"]]
        assert touched and change["see"], change["id"]
        did = [*change["added"], *change["removed"], *change["deprecated"], *change["specified"]]
        assert did or change["previously"], change["id"]
        for item in [*change["added"], *change["removed"], *change["deprecated"]]:
            assert any(item == t or item in t or t in item for t in touched), (change["id"], item)
        if change["on_the_wire"]:
            assert change["id"] == "change.9" and not change["operations"]
        else:
            assert change["chosen_by"], change["id"]
    assert register.statement("change.7")["chosen_by"][0] == "A18"  # the header: the seed names none


def test_the_change_table_comes_from_the_records() -> None:
    rows = register.changes()
    assert [r["change"] for r in rows] == [f"change.{n}" for n in range(1, 10)]
    assert rows[4]["before 1.2.0 (the spec)"] == "had POST /accounts/{account_id}/savings/close"
    before = rows[5]["before 1.2.0 (the spec)"]
    assert "person.document_request.created (now document_request.created)" in before
    assert (rows[8]["on the wire"], rows[8]["chosen by"]) == ("no (category.1)", "nothing")
    assert rows[0]["on the wire"] == "yes"
    assert rows[3]["before 1.2.0 (the spec)"] == "not said" and "A27" in rows[3]["chosen by"]


# --- quotes of the seed, marked one way ----------------------------------------------------------


def marked_quotes(markdown: str) -> list[tuple[str, list[str]]]:
    """Every marked quote of ``markdown``: (the quoted words, the statement ids it names)."""
    found = []
    block: list[str] = []
    for line in [*markdown.splitlines(), ""]:
        if line.lstrip().startswith(">"):
            block.append(line)
            continue
        if block:
            mark = _MARK.match(block[-1])
            if mark:
                # a numbered item's number is the list's markup: the item is a fragment of its own
                lines = (re.sub(r"^\s*>\s?", "", b) for b in block[:-1])
                words = " ".join(re.sub(r"^\d+\. ", "… ", line) for line in lines).strip()
                ids = _LINKED.sub(r"\1", mark.group(1))
                found.append((words, [i.strip() for i in ids.split(",")]))
        block = []
    return found


def _markdown_sources() -> list[tuple[str, str]]:
    sources = [
        (str(p.relative_to(ROOT)), p.read_text(encoding="utf-8"))
        for p in sorted((ROOT / "docs").rglob("*.md"))
    ]
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for n, cell in enumerate(cells):
            if cell["cell_type"] == "markdown":
                sources.append((f"{path.name}[{n}]", "".join(cell["source"])))
    return sources


SOURCES = _markdown_sources()
QUOTES = [(where, words, ids) for where, text in SOURCES for words, ids in marked_quotes(text)]


def quote_problems(words: str, ids: list[str]) -> list[str]:
    """What is wrong with a marked quote: not the seed's words, or not from the statements it names."""
    problems = register.quote_faults(words)
    unknown = [i for i in ids if i not in IDS]
    if unknown:
        problems.append(f"no such statement: {unknown}")
    elif not problems and not set(register.cite(words)) & set(ids):
        problems.append(f"not from {ids} (it is from {register.cite(words)})")
    return problems


def test_there_are_marked_quotes_in_docs_and_notebooks() -> None:
    assert len(QUOTES) >= 20, len(QUOTES)
    assert any(where.startswith("docs/") for where, _, _ in QUOTES)
    assert any(".ipynb" in where for where, _, _ in QUOTES)


@pytest.mark.parametrize(("where", "words", "ids"), QUOTES, ids=[f"{q[0]}:{q[1][:30]}" for q in QUOTES])
def test_every_marked_quote_is_the_seeds(where: str, words: str, ids: list[str]) -> None:
    assert not quote_problems(words, ids), (where, words, quote_problems(words, ids))


@pytest.mark.parametrize(("where", "text"), SOURCES, ids=[s[0] for s in SOURCES])
def test_no_quote_of_the_seed_is_written_another_way(where: str, text: str) -> None:
    unmarked = unmarked_quotes(text)
    assert not unmarked, (
        f"{where}: mark a quote of the seed as a blockquote ending '— the spec (id)': {unmarked}"
    )


PLANTED = """Some notebook text.

> header names: not shown
> — the spec (p2p.1)

> P2P endpoints carry header information (added in 1.2.0); header names: not shown
> — the spec (p2p.1)

> P2P endpoints carry header information (added in 1.2.0); header names: not shown here beyond svc-session-id.
> — the spec (auth.4)
"""


def test_a_planted_elided_or_miscited_quote_fails() -> None:
    quotes = marked_quotes(PLANTED)
    assert len(quotes) == 3
    for words, ids in quotes:
        assert quote_problems(words, ids), words
    # marked elisions and whole sentences pass
    for good in (
        register.statement("p2p.1")["text"],
        "P2P endpoints carry header information (added in 1.2.0) … not shown here beyond svc-session-id.",
        "… header names: not shown here beyond svc-session-id.",
    ):
        assert not quote_problems(good, ["p2p.1"]), good
    assert unmarked_quotes('The seed: P2P endpoints carry header information, "header names: not shown".')
    assert unmarked_quotes('The legacy endpoints "must not be used": the client refuses them.')
    assert not unmarked_quotes('The seed leaves field names "not shown"; the client sends `"a b"`.')


def test_change_6_says_corrected_as_the_seed_does() -> None:
    """The seed says the two document-request names were "corrected", not renamed; refusing the
    old names is the simulator's choice (A23), named beside it; the problem code stays
    ``event-renamed`` (a binding name)."""
    (row,) = [r for r in register.changes() if r["change"] == "change.6"]
    assert "corrected person.document_request.created → document_request.created" in row["did"], row
    assert "renamed" not in row["did"] and "A23" in row["chosen by"].split(", ")
    (categories,) = [r for r in register.changes() if r["change"] == "change.9"]
    assert categories["did"].startswith("renamed ")  # change.9's own word: "renames"
    contract = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    (line,) = [x for x in contract.splitlines() if x.startswith("| change.6 |")]
    assert "corrected person.document_request" in line and "renamed person" not in line
