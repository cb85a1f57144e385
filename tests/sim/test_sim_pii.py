"""Clear-text PII judged by meaning (A11): any spelling of the register's names, at any depth.

The spec accepts personal data only encrypted. A field named as personal data in any spelling
— case, separators, camelCase, a prefix — in an object or an array at any depth of a partner
request body is 422 ``pii-must-be-encrypted``: nothing submitted comes back and nothing changes.
Field names that only look alike (``internationalId``, ``adobe``, ``last4``…) and PII words
used as values still pass, so real requests of the contract are never refused.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.sim.helpers.contract import ECHO
from tests.sim.helpers.control import snapshot
from tests.sim.helpers.journeys import Journey, journey
from tests.sim.helpers.resources import send_event
from tests.sim.helpers.wire import assert_problem

VALUE = ECHO + "-000-00-0001-1990-01-01"

#: Spellings of the register's names (A11): the seed's own words, camelCase, case, separators,
#: acronyms, prefixes and suffixes, full-width letters.
SPELLINGS = [
    "national_identification_number",  # the seed's words
    "nationalId",
    "NationalID",
    "national-id",
    "nationalIdentityNumber",
    "national_insurance_number",
    "dateOfBirth",
    "DateOfBirth",
    "DATE_OF_BIRTH",
    "date-of-birth",
    "Date.Of.Birth",
    "date of birth",
    "birthdate",
    "birth_date",
    "BirthDate",
    "birthday",
    "DOB",
    "dob",
    "customer_dob",
    "dob_verified",
    "placeOfBirth",
    "social_security_number",
    "SocialSecurityNumber",
    "SSN",
    "userSSN",
    "SSNNumber",
    "ssn_last4",
    "firstName",
    "FIRST_NAME",
    "first-name",
    "first__name",
    "givenName",
    "family_name",
    "lastName",
    "Surname",
    "middleName",
    "fullName",
    "mothersMaidenName",
    "taxId",
    "TIN",
    "tax_identification_number",
    "taxpayerId",
    "passportNumber",
    "PASSPORT-NUMBER",
    "idNumber",
    "identity_number",
    "driverLicenseNumber",
    "drivers_license_number",
    "customer_date_of_birth",
    "ＦｉｒｓｔＮａｍｅ",  # full-width letters, the same name after NFKC
]


def _placed(name: str, where: str) -> dict[str, Any]:
    """An inbound event whose body holds ``name`` at the placement ``where``."""
    field = {name: VALUE}
    details: Any = {
        "top": None,
        "details": field,
        "nested": {"context": {"customer": field}},
        "in-a-list": {"items": [{"note": "x"}, field]},
        "list-in-list": {"rows": [[1, 2], [{"ok": True}, field]]},
        "deep": _deep(field, 25),
    }[where]
    body: dict[str, Any] = {"event_type": "password.changed"}
    if details is None:
        body.update(field)
    else:
        body["details"] = details
    return body


def _deep(leaf: Any, depth: int) -> Any:
    for level in range(depth):
        leaf = {"level": level, "next": [leaf]} if level % 2 else {"child": leaf}
    return leaf


PLACEMENTS = ["top", "details", "nested", "in-a-list", "list-in-list", "deep"]
# Every spelling once (at a placement that rotates), and every placement for a few of them.
CASES = [(name, PLACEMENTS[i % len(PLACEMENTS)]) for i, name in enumerate(SPELLINGS)] + [
    (name, where) for name in ("nationalId", "dateOfBirth", "SSN") for where in PLACEMENTS
]


@pytest.fixture
def customer(http: httpx.Client) -> Journey:
    return journey(http, until="account")


@pytest.mark.parametrize(("name", "where"), CASES, ids=[f"{n}@{w}" for n, w in CASES])
def test_a_pii_name_in_any_spelling_and_place_is_refused(
    http: httpx.Client, customer: Journey, name: str, where: str
) -> None:
    before = snapshot(http)
    resp = send_event(http, customer.token, customer.account_id, _placed(name, where))
    problem = assert_problem(resp, 422, "pii-must-be-encrypted", not_echo=(VALUE, ECHO))
    (error,) = problem["errors"]
    assert error["field"].endswith("/" + name.replace("~", "~0").replace("/", "~1")), error
    assert "A11" in resp.headers["svc-assumptions"].split(",")
    assert snapshot(http) == before


#: Names that share letters with a PII name but are not one, and PII words used as values.
HARMLESS: list[dict[str, Any]] = [
    {"memo": "lunch", "device_id": "dev-1", "reason": "user asked"},
    {"last4": "1234", "card_id": "card_x", "account_id": "acc_x", "person_id": "per_x"},
    {"name": "work laptop", "username": "jdoe", "screen_name": "jd", "nickname": "j"},
    {"internationalId": "x", "international_id": "x", "adobe": "x", "dobby": "x"},
    {"setting": "on", "destination": "home", "tinted": True, "business_number": "7"},
    {"first_seen": "2025-01-01", "last_login": "2025-01-02", "date_of_issue": "2024-12-01"},
    {"passport_country": "FR", "tax_rate": "0.2", "birth": "x", "number": 4, "id": "x"},
    {"filename": "a.pdf", "namespace": "n", "surnames_count": 2},
    {"field": "ssn", "fields": ["date_of_birth", "first_name"], "note": "dob is asked later"},
    {"items": [{"label": "first name"}, {"label": "national id"}], "ip_address": "127.0.0.1"},
]


@pytest.mark.parametrize("details", HARMLESS, ids=[",".join(d)[:40] for d in HARMLESS])
def test_names_that_only_look_alike_and_pii_words_as_values_pass(
    http: httpx.Client, customer: Journey, details: dict[str, Any]
) -> None:
    body = {"event_type": "password.changed", "details": details}
    resp = send_event(http, customer.token, customer.account_id, body)
    assert resp.status_code == 202, resp.text


def test_the_tables_are_large_enough() -> None:
    assert len(SPELLINGS) >= 40 and len(set(SPELLINGS)) == len(SPELLINGS)
    assert len(CASES) >= 40


# --- the rule itself, without HTTP ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("dateOfBirth", ["date", "of", "birth"]),
        ("SSNNumber", ["ssn", "number"]),
        ("ssn_last4", ["ssn", "last", "4"]),
        ("DATE-OF-BIRTH", ["date", "of", "birth"]),
        ("ＦｉｒｓｔＮａｍｅ", ["first", "name"]),
        ("encrypted_pii", ["encrypted", "pii"]),
    ],
)
def test_names_are_cut_into_words(name: str, words: list[str]) -> None:
    from kit.sim import pii

    assert pii.words(name) == words


def test_an_objects_own_names_are_read_before_its_childrens() -> None:
    from kit.sim import pii

    assert pii.pii_path({"a": {"b": [{"ok": 1}, {"ssn": 1}]}, "dob": 2}) == ("dob",)
    assert pii.pii_path({"a": {"b": [{"ok": 1}, {"ssn": 1}]}, "c": {"dob": 2}}) == ("a", "b", 1, "ssn")
    assert pii.pii_path({"a": [[{"x": {"lastName": 1}}]]}) == ("a", 0, 0, "x", "lastName")
    assert pii.pii_path({"memo": "x", "details": {"last4": "1"}}) is None


def test_a_very_deep_or_very_long_body_needs_no_recursion() -> None:
    from kit.sim import pii

    assert pii.pii_path(_deep({"dob": 1}, 5000)) is not None
    assert not pii.is_pii_name("x_" * 20000)  # a long name is cut once; runs are short
    assert pii.is_pii_name("x_" * 20000 + "ssn")


def test_every_register_name_is_refused_written_as_snake_and_camel_case() -> None:
    from kit import register
    from kit.sim import pii

    for words in register.value("A11")["pii_names"]:
        parts = words.split()
        assert pii.is_pii_name("_".join(parts)), words
        assert pii.is_pii_name(parts[0] + "".join(p.title() for p in parts[1:])), words
