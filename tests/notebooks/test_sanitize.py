"""``data/nbval_sanitize.cfg``: read by nbval's own parser, touching only what truly varies."""

from __future__ import annotations

import configparser
import re

import pytest
from nbval.plugin import get_sanitize_patterns

from tests.notebooks.helpers import ROOT

CFG = ROOT / "data" / "nbval_sanitize.cfg"


def _sanitize(text: str) -> str:
    for regex, replace in get_sanitize_patterns(CFG.read_text(encoding="utf-8")):
        text = re.sub(regex, replace, text)
    return text


def test_every_section_is_a_rule_nbval_reads() -> None:
    sections = configparser.ConfigParser(interpolation=None)
    sections.read(CFG, encoding="utf-8")
    rules = get_sanitize_patterns(CFG.read_text(encoding="utf-8"))
    assert len(rules) == len(sections.sections()) >= 4
    for name in sections.sections():
        assert (sections[name]["regex"], sections[name]["replace"]) in rules, name


@pytest.mark.parametrize(
    ("varying", "stable"),
    [
        ("Serving on http://127.0.0.1:54321", "Serving on http://127.0.0.1:PORT"),
        ("webhooks to http://localhost:8123/hook", "webhooks to http://localhost:PORT/hook"),
        ("answered in 0.84 ms", "answered in N ms"),
        ("answered in 12ms", "answered in N ms"),
        ("ran for 1.23 s", "ran for N s"),
        ("<Receiver object at 0x7f3a2b1c9d80>", "<Receiver object at 0xADDRESS>"),
        ("Idempotency-Key: 3f2b1c9d-1a2b-4c3d-8e9f-0a1b2c3d4e5f", "Idempotency-Key: UUID"),
        ("user-agent: partner-api-kit/0.1.0", "user-agent: partner-api-kit/VERSION"),
        ("user-agent: python-httpx/0.28.1", "user-agent: python-httpx/VERSION"),
    ],
)
def test_what_varies_is_replaced(varying: str, stable: str) -> None:
    assert _sanitize(varying) == stable


@pytest.mark.parametrize(
    "deterministic",
    [
        "acc_5ea792c644255bcf6a87 req_0962541c37bfcfbf384e",
        "created_at 2025-01-06T09:00:00Z expires_at 2025-01-06T09:15:00Z",
        "balance 500.00 USD, 12.50 USD sent, 3 sessions, retry after 30 s",
        "expires_in 86400, status 201, card last4 4242",
    ],
)
def test_deterministic_values_are_left_alone(deterministic: str) -> None:
    assert _sanitize(deterministic) == deterministic
