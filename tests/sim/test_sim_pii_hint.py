"""The quick searches ahead of the national-id pattern (``kit._pii._DASHED`` and ``_SPACED``)
change no verdict: every string the register's pattern finds a number in, the hint finds too."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kit import _pii as pii
from kit import register

PATTERN = re.compile(register.value("A11")["national_id_pattern"])


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet="0123456789- x.", max_size=40))
def test_the_hint_never_rules_out_a_match(text: str) -> None:
    assert pii.is_pii_value(text) == (PATTERN.search(text) is not None)


def test_the_hint_is_used_for_the_registers_pattern_and_a_jwe_is_not_a_number() -> None:
    assert pii._HINTS_APPLY
    assert pii.is_pii_value("memo 000-12-3456 and more") and pii.is_pii_value("000 12 3456")
    assert not pii.is_pii_value("eyJhbGciOiJSU0EtT0FFUC0yNTYi-12-x." * 20)
