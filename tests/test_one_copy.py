"""One copy of each thing: a helper the kit needs in several rooms is written once, in one
module, and the others import it (the house's issue 60, item 5).

The kit's modules are read with :mod:`ast`, never imported for this, so that a second copy is
found whatever it is called from."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

KIT = Path(__file__).resolve().parents[1] / "kit"


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(KIT.rglob("*.py")):
        yield str(path.relative_to(KIT.parent)), ast.parse(path.read_text(encoding="utf-8"))


def _definitions() -> Counter[str]:
    """How many times each function or class name is defined at any depth in kit/."""
    found: Counter[str] = Counter()
    for _, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found[node.name] += 1
    return found


def _constants() -> Counter[str]:
    """How many times each string constant stands in kit/'s code (docstrings included)."""
    found: Counter[str] = Counter()
    for _, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found[node.value] += 1
    return found


# --- the redaction vocabulary ---------------------------------------------------------------


@pytest.mark.parametrize(
    "names",
    [
        ("fingerprint", "_hash"),  # the salted hash of a secret
        ("jose_kind", "_jose_kind"),  # what a compact JOSE string is
        ("marker",),  # what stands in place of a hidden value
    ],
    ids=lambda names: names[0],
)
def test_each_redaction_helper_is_defined_once(names: tuple[str, ...]) -> None:
    defined = _definitions()
    assert sum(defined[n] for n in names) == 1, {n: defined[n] for n in names}


def test_the_word_splitter_of_names_is_written_once() -> None:
    """PII's names and secrets' are cut by one pattern (``kit._pii.words``)."""
    assert _constants()[r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+"] == 1


def test_a_salted_sha256_is_computed_in_one_place() -> None:
    salted = [
        where
        for where, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "sha256"
        and any(isinstance(a, ast.BinOp) and "salt" in ast.unparse(a) for a in node.args)
    ]
    assert salted == ["kit/_redaction.py"]


def test_the_recorder_and_the_leak_scan_share_one_vocabulary() -> None:
    from kit import _pii, _redaction
    from kit.regress import leaks, names, scanner

    assert _redaction.words is _pii.words
    assert scanner.jose_kind is _redaction.jose_kind
    assert scanner.fingerprint is _redaction.fingerprint
    # one table of secret names: a field's kind in a leak report is the recorder's marker's
    for field, kind in names._FIELD_KIND.items():
        assert kind == _redaction.secret_kind(field), field
        assert kind in scanner.HINTS, kind
    assert names._FIELD_KIND["access_token"] == "partner-token"
    # one marker style: the recorder's, in a report and an executed notebook alike
    token = "Zk3vQ9xLw2Rb7Tn1Yp5Hc8Md"
    recorded = _redaction.Redactor().json({"access_token": token})
    reported = leaks.redact(f'{{"access_token": "{token}"}}', environ={})
    assert recorded == {"access_token": "<partner-token>"}
    assert reported == '{"access_token": "<partner-token>"}'
    header = leaks.redact(f"Authorization: Bearer {token}", environ={})
    assert header == "Authorization: Bearer <partner-token>"
