"""Each speed-up the kit's code points at with a ``FIXES: "…"`` quote has its entry in
``benchmarks/bench.py``'s FIXES, the ledger that keeps the figures and why the code is so: a
quote that matches no entry points nowhere. A quote may leave words out with ``…``; it is
compared with the entry's ``fix`` text, line breaks and indentation read as one space."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.bench import FIXES

KIT = Path(__file__).resolve().parents[1] / "kit"
QUOTE = re.compile(r'FIXES:\s*"([^"]+)"')


def _spaced(text: str) -> str:
    return " ".join(text.replace("#", " ").split())


def _quotes() -> list[tuple[str, str]]:
    found = []
    for path in sorted(KIT.rglob("*.py")):
        for match in QUOTE.finditer(path.read_text(encoding="utf-8")):
            found.append((str(path.relative_to(KIT.parent)), _spaced(match.group(1))))
    return found


QUOTES = _quotes()
ENTRIES = [_spaced(str(entry["fix"])) for entry in FIXES]


def test_the_code_points_at_the_ledger() -> None:
    assert len(QUOTES) >= 10, QUOTES  # the pattern still finds the quotes


@pytest.mark.parametrize(("module", "quote"), QUOTES)
def test_each_quote_names_an_entry_of_the_ledger(module: str, quote: str) -> None:
    pieces = [piece.strip() for piece in re.split(r"…|\.\.\.", quote) if piece.strip()]
    assert pieces, quote
    assert any(all(piece in entry for piece in pieces) for entry in ENTRIES), (
        f"{module}: FIXES: {quote!r} matches no entry of benchmarks/bench.py's FIXES"
    )
