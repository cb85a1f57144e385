"""Notebooks 03, 05 and 12: each check rests on what its basis says, and 12's prose holds no
figure of one run.

- 03's rule.5 check looks at the requests made for the account (the session each carried),
  not at the direct session, which is A08's;
- 05's change.2 check reads the closes as they went over the wire (a `reason` in the body, or
  none), not the list of reasons the simulator's refusal names (A15's);
- 12 cites no P2P refusal order (A37) for its accounting or its ledger; its accounting compares
  the summary with the steps read sender by sender (a sum of the summary's own parts could not
  fail); and its Markdown names no customer and no count of the stored run, which papermill's
  `customers=` or `seed=` would change.
"""

from __future__ import annotations

import re

from tests.notebooks.test_notebook_bases import _cells, _checks, _source

N03 = "03_sessions_and_promotion.ipynb"
N05 = "05_cards_close_with_reason.ipynb"
N12 = "12_population_simulation.ipynb"


def _by_basis(name: str, kind: str, basis: str) -> list[tuple[str, str]]:
    return [(title, guarded) for title, b, guarded in _checks(name) if b.get(kind) == basis]


def test_03_the_rule_5_check_reads_the_requests_made_for_the_account() -> None:
    ((_, guarded),) = _by_basis(N03, "spec", "rule.5")
    assert "direct" not in guarded and "sessions.open" not in guarded, guarded
    assert "account.account_id" in guarded and "session_type" in guarded, guarded
    direct = [t for t, g in _by_basis(N03, "choice", "A08") if "direct." in g]
    assert direct == ["'a session for the known account is established directly'"]


def test_05_the_change_2_check_reads_the_closes_on_the_wire() -> None:
    ((_, guarded),) = _by_basis(N05, "spec", "change.2")
    for chosen in ("allowed", "reasons", "closed", "A15"):
        assert not re.search(rf"\b{chosen}\b", guarded), (chosen, guarded)
    assert "api.wire(" in guarded and '"reason"' in guarded and "None" in guarded, guarded


def test_12_no_check_rests_on_the_order_of_p2p_refusals() -> None:
    checks = _checks(N12)
    assert not [t for t, b, _ in checks if b.get("choice") == "A37"]
    (accounted,) = [g for t, b, g in checks if "accounted for" in t]
    assert "transfers()" in accounted, accounted
    (money,) = [b for t, b, _ in checks if "money conserved across every" in t]
    assert money == {"choice": "A36"}
    code = "\n".join(_source(c) for c in _cells(N12) if c["cell_type"] == "code")
    assert '(the ledger)", needs="control plane", choice="A36")' in code


_HEADING = re.compile(r"^#+ .*$", re.M)
_CODE = re.compile(r"`[^`]*`")
_LINK = re.compile(r"\]\([^)]*\)")
#: Figures the prose may name: a section, an HTTP status, a version, the sandbox population's default size.
_ALLOWED = re.compile(r"section \d\b|\b[245]\d\d\b|\b\d+\.\d+\.\d+\b|\(5 by default\)")


def test_12_prose_names_no_figure_of_the_stored_run() -> None:
    found = []
    for cell in _cells(N12):
        if cell["cell_type"] != "markdown" or _source(cell).startswith("```"):
            continue
        text = _ALLOWED.sub("", _LINK.sub("]", _CODE.sub("", _HEADING.sub("", _source(cell)))))
        found += re.findall(r"[^\n]{0,30}\b\d+\b[^\n]{0,30}", text)
    assert not found, f"numbers in 12's prose: print them in an output instead: {found}"


def test_the_figure_rule_would_catch_the_old_prose() -> None:
    old = "Here 63 = 57 + 0 + 3 + 3, and customers 55 and 111, whose recipients (37 and 101) were lost."
    text = _ALLOWED.sub("", old)
    assert re.findall(r"\b\d+\b", text) == ["63", "57", "0", "3", "3", "55", "111", "37", "101"]
