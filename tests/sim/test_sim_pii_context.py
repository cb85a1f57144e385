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


# --- the issue's two cases over HTTP ----------------------------------------------------------------


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


# --- the shapes issue 59 found passing: a date in words, NI and tax numbers, nine digits by id ------

ID_NEAR = RULE["id_nearness"]
#: (words that make a shape personal data, values of that shape, how many words before it count).
NEW_SHAPES: dict[str, tuple[list[str], list[str], int]] = {
    "date in words": (
        ["born", "birth", "DOB", "birthday", "Birthdate", "bday"],
        [
            "14 March 1950",
            "March 14, 1950",
            "14th of March, 1950",
            "Mar 14 1950",
            "14-Mar-1950",
            "Sept. 3rd 2001",
        ],
        NEAR,
    ),
    "national insurance": (
        ["NI", "ni number", "national insurance", "NINO", "National Insurance no"],
        ["AB123456C", "ab 12 34 56 c", "QQ 12 34 56 A"],
        NEAR,
    ),
    "tax number": (
        ["tax", "TAX", "taxpayer", "EIN", "employer id", "tax id"],
        ["12-3456789", "98-7654321"],
        NEAR,
    ),
    "nine digits by id": (["id", "ID", "ID:", "identity no", "Id no."], ["000000001", "123456789"], ID_NEAR),
}


@st.composite
def new_shape_texts(draw: st.DrawFn) -> tuple[str, str]:
    """A shape and one of its words, ``gap`` words apart in free text: (the text, the value)."""
    words, values, near = NEW_SHAPES[draw(st.sampled_from(sorted(NEW_SHAPES)))]
    word, value = draw(st.sampled_from(words)), draw(st.sampled_from(values))
    before = True if near == ID_NEAR else draw(st.booleans())  # id counts before the digits only
    gap = max(0, min(draw(st.integers(0, near - 1)), near - len(re.findall(r"[^\W\d_]+", word))))
    filler = " ".join((FILLER * 3)[:gap])
    text = f"{word} {filler} {value}" if before else f"{value} {filler} {word}"
    return " ".join(text.split()), value


@pytest.mark.parametrize(
    "details",
    [
        {"note": "born 14 March 1950"},
        {"ni": "AB123456C"},
        {"tax": "12-3456789"},
        {"note": "id 000000001"},
    ],
)
def test_the_issues_four_details_are_refused_and_change_nothing(
    http: httpx.Client, customer: Journey, details: dict[str, str]
) -> None:
    before = snapshot(http)
    body = {"event_type": "password.changed", "details": details}
    resp = send_event(http, customer.token, customer.account_id, body)
    value = next(iter(details.values())).split(" ", 1)[-1]
    problem = assert_problem(resp, 422, "pii-must-be-encrypted", not_echo=(value,))
    assert problem["errors"][0]["field"] == "/details/" + next(iter(details))
    assert snapshot(http) == before


@PROPERTY
@given(shaped=new_shape_texts(), path=NESTINGS, as_item=st.booleans())
def test_property_a_new_shape_beside_its_word_is_refused_at_any_depth(
    shaped: tuple[str, str], path: list[int], as_item: bool
) -> None:
    text, _ = shaped
    leaf = {"note": [text] if as_item else text}
    assert pii.pii_path({"details": nested(leaf, path)}) is not None, text


#: Names holding a word of a shape's rule, with that shape.
NAMED_SHAPES = {
    "ni": "national insurance",
    "NI_ref": "national insurance",
    "nino": "national insurance",
    "tax": "tax number",
    "taxRef": "tax number",
    "ein": "tax number",
    "birth_note": "date in words",
    "bornOn": "date in words",
}


@PROPERTY
@given(name=st.sampled_from(sorted(NAMED_SHAPES)), path=NESTINGS, data=st.data())
def test_property_a_new_shape_under_a_name_of_its_word_is_refused(
    name: str, path: list[int], data: st.DataObject
) -> None:
    value = data.draw(st.sampled_from(NEW_SHAPES[NAMED_SHAPES[name]][1]))
    assert pii.pii_path({"details": nested({name: value}, path)}) is not None, (name, value)


@PROPERTY
@given(shaped=new_shape_texts(), path=NESTINGS)
def test_property_over_http_a_new_shape_beside_its_word_is_refused_and_changes_nothing(
    http: httpx.Client, customer: Journey, shaped: tuple[str, str], path: list[int]
) -> None:
    text, value = shaped
    before = snapshot(http)
    body = {"event_type": "password.changed", "details": {"wrapped": nested({"note": text}, path)}}
    resp = send_event(http, customer.token, customer.account_id, body)
    assert_problem(resp, 422, "pii-must-be-encrypted", not_echo=(value,))
    assert snapshot(http) == before


#: Plain words, the words of every rule among them, and numbers that are no shape (at most five
#: digits, never two side by side): free text a partner sends, which must stay accepted.
PLAIN_WORDS = ["lunch", "rent", "thanks", "for", "the", "order", "paid", "on", "my", "note", "split"]
RULE_WORDS = ["born", "birthday", "tax", "TIN", "id", "ID", "NI", "national insurance", "ssn", "EIN"]
#: The shapes without a word of theirs near them: a date in words, a month alone, NI and tax
#: numbers, nine digits.
LONE_SHAPES = ["14 March 1950", "March 2020", "AB123456C", "12-3456789", "000000001", "1 May 2024"]


@st.composite
def plain_texts(draw: st.DrawFn) -> str:
    """Free text holding either the rules' words (and no shape) or the shapes (and none of the
    words): one without the other is never personal data."""
    with_words = draw(st.booleans())
    vocabulary = PLAIN_WORDS + (RULE_WORDS if with_words else [])
    words = draw(st.lists(st.sampled_from(vocabulary), min_size=1, max_size=10))
    out: list[str] = []
    for word in words:
        out.append(word)
        if draw(st.booleans()):
            out.append(str(draw(st.integers(0, 99999))) if with_words else draw(st.sampled_from(LONE_SHAPES)))
            out.append(draw(st.sampled_from(PLAIN_WORDS)))  # never two numbers side by side
    return " ".join(out)


@PROPERTY
@given(text=plain_texts(), path=NESTINGS)
def test_property_over_http_plain_free_text_is_still_accepted(
    http: httpx.Client, customer: Journey, text: str, path: list[int]
) -> None:
    body = {"event_type": "password.changed", "details": {"wrapped": nested({"note": text}, path)}}
    resp = send_event(http, customer.token, customer.account_id, body)
    assert resp.status_code == 202, (text, resp.text)


def _without_lookarounds(pattern: str) -> str:
    """A shape's pattern without its ``(?<![…])`` and ``(?![…])`` guards, for ``from_regex``."""
    return re.sub(r"\(\?<?!\[[^\]]*\]\)", "", pattern)


@pytest.mark.parametrize(
    "rule", [r for r in pii._NEAR if r.needs is not None], ids=lambda r: r.shape.pattern[:24]
)
@given(data=st.data())
def test_what_a_shape_needs_is_in_every_text_it_matches(rule: Any, data: st.DataObject) -> None:
    """The quick test before a shape's search (``_Near.needs``) never skips a text the shape
    would match: every text the register's pattern matches holds it."""
    text = data.draw(st.from_regex(re.compile(_without_lookarounds(rule.shape.pattern)), fullmatch=True))
    assert rule.needs.search(text) is not None, (rule.needs.pattern, text)


@pytest.mark.parametrize(
    "rule", [r for r in pii._NEAR if r.needs is not None], ids=lambda r: r.shape.pattern[:24]
)
@given(data=st.data())
def test_every_text_a_quick_test_finds_holds_four_digits_in_a_row(rule: Any, data: st.DataObject) -> None:
    """A text without four digits in a row is searched only for the shapes that need nothing
    (``kit._pii._NEEDS_NOTHING``): every text each ``needs`` finds holds them."""
    assert rule not in pii._NEEDS_NOTHING
    text = data.draw(st.from_regex(rule.needs, fullmatch=True))
    assert pii._FOUR_DIGITS.search(text) is not None, (rule.needs.pattern, text)


@pytest.mark.parametrize("rule", pii._NEAR, ids=lambda r: r.shape.pattern[:24])
@given(data=st.data())
def test_every_text_a_shape_matches_holds_a_digit(rule: Any, data: st.DataObject) -> None:
    """A text without a digit is not searched for any shape (``kit._pii._ANY_DIGIT``): every
    text a register's pattern matches holds one."""
    text = data.draw(st.from_regex(re.compile(_without_lookarounds(rule.shape.pattern)), fullmatch=True))
    assert pii._ANY_DIGIT.search(text) is not None, (rule.shape.pattern, text)
