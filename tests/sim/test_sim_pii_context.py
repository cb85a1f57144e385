"""Clear-text PII by what is near it (A11, rule.3 and auth.4): a date under a name meaning birth,
and nine digits (dashed or not) near a word meaning a national id, refused wherever they stand:
a field at any depth, an array item, free text before or after other words, a query parameter.

Properties (Hypothesis) run over the spellings of the words, the shapes of the values, the depth
and the placement; the register's words and nearness are read, never restated.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kit import _pii as pii
from kit import register
from tests.sim.helpers.control import snapshot
from tests.sim.helpers.journeys import Journey, journey
from tests.sim.helpers.properties import PROPERTY
from tests.sim.helpers.resources import send_event
from tests.sim.helpers.wire import assert_problem

RULE = register.value("A11")
NEAR = RULE["nearness"]
BIRTH_NAMES = [
    "born_on",
    "bornOn",
    "date_born",
    "birth",
    "dob_verified",
    "BirthDay",
    "dob",
    "natal-date",
    "bday",
]
DATES = ["1990-01-01", "1990/1/31", "01/31/1990", "31.01.1990", "1990-1-1"]
ID_WORDS = [
    "ssn",
    "SSN",
    "SSN:",
    "Social Security",
    "social-security no",
    "national id",
    "National ID",
    "tax id",
    "TaxID",
    "TIN",
    "taxpayer id",
    "national insurance",
    "SIN",
]
NINES = ["123456789", "123-45-6789", "123 45 6789", "123-456789", "12345-6789"]
FILLER = ["is", "my", "the", "number", "please", "note", "here", "x", "old", "value"]


@pytest.fixture
def customer(http: httpx.Client) -> Journey:
    return journey(http, until="account")


def nested(leaf: Any, path: list[int]) -> Any:
    """``leaf`` wrapped by ``path``: 0 an object, 1 an array next to a harmless item."""
    for step in reversed(path):
        leaf = {"context": leaf, "note": "x"} if step == 0 else [{"note": "x"}, leaf]
    return leaf


def sentence(word: str, value: str, gap: int, before: bool) -> str:
    """``word`` and ``value`` in free text, ``gap`` filler words apart (capped so that every word
    of ``word`` stays within the register's nearness when ``gap`` is below it)."""
    if gap < NEAR:
        gap = min(gap, NEAR - len(re.findall(r"[^\W\d_]+", word)))
    filler = " ".join((FILLER * 3)[:gap])
    return f"{word} {filler} {value}" if before else f"{value} {filler} {word}"


NESTINGS = st.lists(st.integers(0, 1), max_size=5)


# --- the two cases over HTTP ----------------------------------------------------------------


@pytest.mark.parametrize("details", [{"born_on": "1990-01-01"}, {"note": "ssn 123456789"}])
def test_the_two_cases_are_refused_and_change_nothing(
    http: httpx.Client, customer: Journey, details: dict[str, str]
) -> None:
    before = snapshot(http)
    resp = send_event(
        http, customer.token, customer.account_id, {"event_type": "password.changed", "details": details}
    )
    problem = assert_problem(resp, 422, "pii-must-be-encrypted", not_echo=("1990-01-01", "123456789"))
    assert problem["errors"][0]["field"] == "/details/" + next(iter(details))
    assert snapshot(http) == before


def test_a_query_parameter_is_judged_by_its_words_too(http: httpx.Client, customer: Journey) -> None:
    init = "/sessions/user_session_initialization_data"
    auth = {"Authorization": f"Bearer {customer.token}"}
    before = snapshot(http)
    for query in ({"q": "tax id 987654321"}, {"born": "1990-01-01"}):
        resp = http.get(init, headers=auth, params=query)
        assert_problem(resp, 422, "pii-must-be-encrypted", not_echo=("987654321", "1990-01-01"))
    assert snapshot(http) == before
    assert http.get(init, headers=auth, params={"q": "order 987654321"}).status_code == 200


# --- properties: spellings, shapes, depths, placements ---------------------------------------------------


@PROPERTY
@given(name=st.sampled_from(BIRTH_NAMES), date=st.sampled_from(DATES), path=NESTINGS, as_item=st.booleans())
def test_property_a_date_under_a_name_meaning_birth_is_refused(
    name: str, date: str, path: list[int], as_item: bool
) -> None:
    leaf = {name: [date] if as_item else date}
    assert pii.pii_path({"details": nested(leaf, path)}) is not None, leaf


@PROPERTY
@given(
    word=st.sampled_from(["born", "birth", "DOB", "birthday", "Birthdate", "bday"]),
    date=st.sampled_from(DATES),
    gap=st.integers(0, NEAR - 1),
    before=st.booleans(),
    path=NESTINGS,
)
def test_property_a_date_near_a_birth_word_in_free_text_is_refused(
    word: str, date: str, gap: int, before: bool, path: list[int]
) -> None:
    text = sentence(word, date, gap, before)
    assert pii.pii_path({"details": nested({"memo": text}, path)}) is not None, text


@PROPERTY
@given(
    word=st.sampled_from(ID_WORDS),
    nine=st.sampled_from(NINES),
    gap=st.integers(0, NEAR - 2),
    before=st.booleans(),
    path=NESTINGS,
    as_item=st.booleans(),
)
def test_property_nine_digits_near_a_national_id_word_are_refused(
    word: str, nine: str, gap: int, before: bool, path: list[int], as_item: bool
) -> None:
    text = sentence(word, nine, gap, before)
    leaf = {"note": [text] if as_item else text}
    assert pii.pii_path({"details": nested(leaf, path)}) is not None, text


@PROPERTY
@given(word=st.sampled_from(ID_WORDS), nine=st.sampled_from(NINES), path=NESTINGS)
def test_property_nine_digits_under_a_name_meaning_a_national_id_are_refused(
    word: str, nine: str, path: list[int]
) -> None:
    name = word.replace(" ", "_").replace(":", "").replace("-", "_") + "_ref"
    assert pii.pii_path({"details": nested({name: nine}, path)}) is not None, name


@PROPERTY
@given(
    word=st.sampled_from(
        ["order", "invoice", "phone", "reference", "account", "start", "renewal", "created"]
    ),
    value=st.sampled_from([*NINES[:1], "2025-01-06", "01/31/1990"]),
    gap=st.integers(0, 3),
    before=st.booleans(),
    path=NESTINGS,
)
def test_property_dates_and_numbers_near_other_words_pass(
    word: str, value: str, gap: int, before: bool, path: list[int]
) -> None:
    text = sentence(word, value, gap, before)
    assert pii.pii_path({"details": nested({"memo": text, f"{word}_date": value}, path)}) is None, text


@PROPERTY
@given(word=st.sampled_from(ID_WORDS), nine=st.sampled_from(NINES[:1]), extra=st.integers(1, 3))
def test_property_a_national_id_word_farther_than_the_nearness_does_not_count(
    word: str, nine: str, extra: int
) -> None:
    text = sentence(word, nine, NEAR + extra, True)
    assert pii.pii_path({"memo": text}) is None, text
