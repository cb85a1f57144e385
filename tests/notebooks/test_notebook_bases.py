"""Each stored notebook's checks check what their basis says (the seed's statement or the
register entry they name), and what the notebooks and README say of the seed is the seed's.

- every ``check``/``skip`` names a basis and no code cell holds a bare ``assert`` (11);
- a check on the seed's word does not lean on a choice: 02's init.1 check is not A04's key ids
  and algorithms; 08's and 11's webhook.1 checks do not need a signature (A24);
- 00's quote of endpoint.7 cites endpoint.7 only; 03's stranger device check looks at the
  stranger's refusal; 10 does not say change 8 has nothing to call; the README calls the
  signature the simulator's (A24).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
CHECKERS = {"check", "skip"}


def _cells(name: str) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))["cells"]
    return cells


def _source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


def _checks(name: str) -> list[tuple[str, dict[str, str], str]]:
    """Every check of a notebook: (its name's text, its basis keywords, the source it guards: the
    ``with`` body or the decorated function's)."""
    found = []
    for cell in _cells(name):
        if cell["cell_type"] != "code":
            continue
        source = _source(cell)
        tree = ast.parse(source)
        for node in ast.walk(tree):
            calls: list[tuple[ast.Call, list[ast.stmt]]] = []
            if isinstance(node, ast.With):
                calls = [
                    (i.context_expr, node.body) for i in node.items if isinstance(i.context_expr, ast.Call)
                ]
            elif isinstance(node, ast.FunctionDef):
                calls = [(d, node.body) for d in node.decorator_list if isinstance(d, ast.Call)]
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                calls = [(node.value, [])]
            for call, body in calls:
                if isinstance(call.func, ast.Name) and call.func.id in CHECKERS:
                    title = ast.unparse(call.args[0]) if call.args else ""
                    basis = {
                        k.arg: ast.unparse(k.value).strip("\"'")
                        for k in call.keywords
                        if k.arg in ("spec", "choice")
                    }
                    guarded = "\n".join(ast.get_source_segment(source, stmt) or "" for stmt in body)
                    found.append((title, basis, guarded))
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_check_names_its_basis_and_no_assert_is_bare(path: Path) -> None:
    checks = _checks(path.name)
    unnamed = [title for title, basis, _ in checks if not basis]
    assert not unnamed, unnamed
    for cell in _cells(path.name):
        if cell["cell_type"] == "code":
            asserts = [n for n in ast.walk(ast.parse(_source(cell))) if isinstance(n, ast.Assert)]
            assert not asserts, f"{path.name}: a bare assert in {cell.get('id')}"


def test_02_the_init_1_check_does_not_check_a04s_key_ids_and_algorithms() -> None:
    seed = [
        guarded
        for _, basis, guarded in _checks("02_session_init_data.ipynb")
        if basis.get("spec") == "init.1"
    ]
    assert seed
    for guarded in seed:
        assert "kids" not in guarded and "algorithms" not in guarded, guarded
    chosen = [g for _, basis, g in _checks("02_session_init_data.ipynb") if basis.get("choice") == "A04"]
    assert any("kids" in g for g in chosen) and any("algorithms" in g for g in chosen)


@pytest.mark.parametrize("name", ["08_webhooks.ipynb", "11_explorer.ipynb"])
def test_a_webhook_1_check_needs_no_signature(name: str) -> None:
    """webhook.1 says card.closed was added; signing is "not shown" (webhook.5): a check on
    webhook.1 reads what was received, verified or not; the signature is A24's check."""
    checks = _checks(name)
    seed = [(t, g) for t, basis, g in checks if basis.get("spec") == "webhook.1"]
    assert seed
    for title, guarded in seed:
        assert "wait_for" not in guarded and "sign" not in title and "verif" not in title, (title, guarded)
        assert "verified" not in guarded or "signed or not" in guarded, (title, guarded)
    assert [t for t, basis, _ in checks if basis.get("choice") == "A24" and "card.closed" in t + _]


def test_00_quotes_endpoint_7_as_endpoint_7() -> None:
    text = "\n".join(_source(c) for c in _cells("00_quickstart.ipynb") if c["cell_type"] == "markdown")
    quote = re.search(
        r"> An inbound event with an event type; body shape: not shown[^\n]*\n"
        r"> — the spec \(\[?([\w.]+)",
        text,
    )
    assert quote is not None
    assert quote.group(1) == "endpoint.7"


def test_03_the_stranger_device_check_looks_at_the_strangers_refusal() -> None:
    checks = _checks("03_sessions_and_promotion.ipynb")
    (guarded,) = [g for title, _, g in checks if "a stranger device" in title]
    assert "stranger_error" in guarded and "device-not-recognized" in guarded, guarded
    (cell,) = [
        _source(c)
        for c in _cells("03_sessions_and_promotion.ipynb")
        if "stranger.sessions.open" in _source(c)
    ]
    assert "stranger_error = err" in cell


def test_10_does_not_say_change_8_has_nothing_to_call() -> None:
    cells = _cells("10_whats_new_in_1_2_0.ipynb")
    text = "\n".join(_source(c) for c in cells)
    for phrase in (
        "nothing to call (Refer a Friend",
        "no wire effect* for changes 8 and 9",
        "Change 9 has no wire effect either",
    ):
        assert phrase not in text, phrase
    assert "referral_code" in text  # it calls 1.1.0's path under 1.2.0


def test_the_readme_says_the_signature_is_the_simulators() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "signed webhooks" not in readme
    assert "a simulator of the whole API" not in readme and "simulator of the whole API" not in readme
    assert "A69" in readme and "A24" in readme
