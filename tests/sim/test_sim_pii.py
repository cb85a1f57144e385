"""Clear-text PII judged by meaning (A11; the seed's rule.3 and auth.4), at any depth.

The seed accepts personal data only encrypted. A field named as personal data in any spelling
— case, separators, camelCase, abbreviations, a prefix — in an object or an array at any depth
of a partner request body, a query string or a form, and a value shaped like a national
identification number under any name or inside free text, is 422 ``pii-must-be-encrypted``:
nothing submitted comes back and nothing changes. Names that only look alike
(``internationalId``, ``adobe``, ``last4``…), names where the concept only qualifies something
else (``birthday_reminder_enabled``, ``dob_verified``), boolean values and PII words used as
values still pass, so real requests of the contract are never refused.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.sim.helpers.contract import ECHO
from tests.sim.helpers.control import snapshot
from tests.sim.helpers.journeys import Journey, journey
from tests.sim.helpers.resources import send_event
from tests.sim.helpers.wire import assert_problem, call

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
    "dob_year",
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
    # abbreviations and synonyms the issue named: all are the same concepts
    "socialSecurityNo",
    "nationalIdentifier",
    "national_identification_no",
    "social_insurance_number",
    "birth_dt",
    "nat_id_num",
    "TaxIdentifier",
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
    # the concept only qualifies something else, or the value is a flag
    {"birthday_reminder_enabled": True, "dob_verified": "yes", "date_of_birth_required": "no"},
    {"ssn": True, "has_national_id": False, "date_of_birth": None, "description": "x"},
    {"nationality_note": "n", "start_date": "2025-01-06", "end_dt": "2025-02-01", "dt_created": "x"},
    {"when": "1990-01-01", "at": "2025-01-06T09:00:00Z", "phone": "+1 555-123-4567", "ref": "12-345-6789"},
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
    from kit import _pii as pii

    assert pii.words(name) == words


def test_an_objects_own_names_are_read_before_its_childrens() -> None:
    from kit import _pii as pii

    assert pii.pii_path({"a": {"b": [{"ok": 1}, {"ssn": 1}]}, "dob": 2}) == ("dob",)
    assert pii.pii_path({"a": {"b": [{"ok": 1}, {"ssn": 1}]}, "c": {"dob": 2}}) == ("a", "b", 1, "ssn")
    assert pii.pii_path({"a": [[{"x": {"lastName": 1}}]]}) == ("a", 0, 0, "x", "lastName")
    assert pii.pii_path({"memo": "x", "details": {"last4": "1"}}) is None


def test_a_very_deep_or_very_long_body_needs_no_recursion() -> None:
    from kit import _pii as pii

    assert pii.pii_path(_deep({"dob": 1}, 5000)) is not None
    assert not pii.is_pii_name("x_" * 20000)  # a long name is cut once; runs are short
    assert pii.is_pii_name("x_" * 20000 + "ssn")


def test_every_register_name_is_refused_written_as_snake_and_camel_case() -> None:
    from kit import _pii as pii
    from kit import register

    for words in register.value("A11")["pii_names"]:
        parts = words.split()
        assert pii.is_pii_name("_".join(parts)), words
        assert pii.is_pii_name(parts[0] + "".join(p.title() for p in parts[1:])), words


# --- values, queries, forms, free text ------------------------------------------------------------

NIN = "000-12-3456"  # the personas' format, NNN-NN-NNNN


@pytest.mark.parametrize(
    "details",
    [
        {"note": NIN},
        {"reference": f"customer says {NIN} is theirs"},
        {"items": ["ok", f"x{NIN.replace('-', ' ')}y"]},
        {NIN: "a key shaped like one"},
    ],
    ids=["value", "inside-text", "with-spaces-in-a-list", "as-a-key"],
)
def test_a_value_shaped_like_a_national_id_is_refused_under_any_name(
    http: httpx.Client, customer: Journey, details: dict[str, Any]
) -> None:
    before = snapshot(http)
    body = {"event_type": "password.changed", "details": details}
    resp = send_event(http, customer.token, customer.account_id, body)
    assert_problem(resp, 422, "pii-must-be-encrypted", not_echo=(NIN, NIN.replace("-", " "), "customer says"))
    assert snapshot(http) == before


def test_a_p2p_memo_holding_a_national_id_is_refused_and_not_echoed(http: httpx.Client, pair: Any) -> None:
    from tests.sim.helpers.journeys import p2p_transfer

    a, b = pair
    before = snapshot(http)
    resp = p2p_transfer(http, a, b.person_id, "1.00", idem="pii-memo", memo=f"rent, my ssn {NIN}")
    problem = assert_problem(resp, 422, "pii-must-be-encrypted", not_echo=(NIN, "rent"))
    assert problem["errors"][0]["field"] == "/memo"
    assert snapshot(http) == before
    ok = p2p_transfer(http, a, b.person_id, "1.00", idem="pii-memo-2", memo="rent for 2025-01")
    assert ok.status_code == 201, ok.text
    assert ok.json()["memo"] == "rent for 2025-01"  # a memo that passes is kept and echoed


@pytest.mark.parametrize(
    "query", [{"dob": "1990-01-01"}, {"socialSecurityNo": "x"}, {"q": NIN}], ids=["name", "abbrev", "value"]
)
def test_a_query_string_is_checked_as_a_body_is(http: httpx.Client, customer: Journey, query: dict) -> None:
    init = "/sessions/user_session_initialization_data"
    auth = {"Authorization": f"Bearer {customer.token}"}
    before = snapshot(http)
    resp = http.get(init, headers=auth, params=query)
    assert_problem(resp, 422, "pii-must-be-encrypted", not_echo=("1990-01-01", NIN))
    assert "A11" in resp.headers["svc-assumptions"].split(",")
    assert snapshot(http) == before
    ok = http.get(init, headers=auth, params={"dob_verified": "true", "start_date": "2025-01-06"})
    assert ok.status_code == 200, ok.text


def test_a_form_body_is_checked_as_a_json_body_is(http: httpx.Client, customer: Journey) -> None:
    before = snapshot(http)
    resp = http.post(
        f"/accounts/{customer.account_id}/events",
        headers={"Authorization": f"Bearer {customer.token}"},
        data={"event_type": "password.changed", "birth_dt": "1990-01-01"},
    )
    assert_problem(resp, 422, "pii-must-be-encrypted", not_echo=("1990-01-01",))
    plain = http.post(
        f"/accounts/{customer.account_id}/events",
        headers={"Authorization": f"Bearer {customer.token}"},
        data={"event_type": "password.changed"},
    )
    assert_problem(plain, 415, "unsupported-media-type")  # a form without PII: still not JSON
    token_form = http.post(
        "/oauth/accesstoken",
        data={
            "grant_type": "client_credentials",
            "client_id": "sim-partner",
            "client_secret": "sim-secret",
            "national_identification_no": NIN,
        },
    )
    # the token endpoints refuse it too, in their own RFC 6749 shape (A01, A21)
    assert token_form.status_code == 400 and token_form.json()["error"] == "invalid_request"
    assert NIN not in token_form.text
    assert snapshot(http) == before


# --- the rule as a property (Hypothesis): spellings and nestings ----------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.sim.helpers.properties import PROPERTY  # noqa: E402

#: Concepts in words, with the spellings of their words a reader meets.
CONCEPTS: list[list[list[str]]] = [
    [["date"], ["of"], ["birth"]],
    [["dob"]],
    [["birth"], ["date", "dt"]],
    [["national", "nat"], ["identification", "identifier", "identity", "id"], ["number", "no", "num", "nr"]],
    [["national", "nat"], ["id", "identifier"]],
    [["social"], ["security", "insurance"], ["number", "no", "num"]],
    [["ssn"]],
    [["tax", "taxpayer"], ["id", "identifier"]],
    [["passport"], ["number", "no", "num"]],
    [["first", "last", "given", "family", "middle", "full", "maiden"], ["name"]],
    [["place"], ["of"], ["birth"]],
]
PREFIXES = ["", "customer", "user", "primary", "holder", "new"]
PARTS = ["", "last4", "year", "digits", "value"]
QUALIFIERS = ["verified", "enabled", "reminder", "required", "count", "status", "hint", "label", "format"]
ORDINARY = [
    "description",
    "nationality note",
    "start date",
    "memo",
    "reason",
    "device id",
    "last login",
    "card type",
    "business number",
    "international id",
    "passport country",
    "username",
    "adobe",
]


def styled(parts: list[str], style: str) -> str:
    parts = [p for p in parts if p]
    if style == "snake":
        return "_".join(parts)
    if style == "kebab":
        return "-".join(parts)
    if style == "upper":
        return "_".join(parts).upper()
    if style == "dotted":
        return ".".join(parts)
    if style == "pascal":
        return "".join(p.title() for p in parts)
    return parts[0] + "".join(p.title() for p in parts[1:])  # camel


STYLES = st.sampled_from(["snake", "kebab", "upper", "dotted", "pascal", "camel"])


@st.composite
def pii_names(draw: st.DrawFn) -> str:
    concept = draw(st.sampled_from(CONCEPTS))
    words = [draw(st.sampled_from(choices)) for choices in concept]
    prefix, part = draw(st.sampled_from(PREFIXES)), draw(st.sampled_from(PARTS))
    return styled([*prefix.split(), *words, *part.split()], draw(STYLES))


#: The concepts whose words mean birth: a date under a name holding one is personal data (A11).
UNDATED = [c for c in CONCEPTS if not any(w in ("birth", "dob") for words in c for w in words)]


@st.composite
def ordinary_names(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return styled(draw(st.sampled_from(ORDINARY)).split(), draw(STYLES))
    concept = draw(st.sampled_from(UNDATED))  # a concept that only qualifies something else
    words = [draw(st.sampled_from(choices)) for choices in concept]
    return styled([*words, draw(st.sampled_from(QUALIFIERS))], draw(STYLES))


def nested(leaf: dict[str, Any], path: list[int]) -> Any:
    """``leaf`` wrapped by ``path``: 0 an object, 1 an array next to a harmless item."""
    for step in reversed(path):
        leaf = {"context": leaf, "note": "x"} if step == 0 else [{"note": "x"}, leaf]  # type: ignore[assignment]
    return leaf


NESTINGS = st.lists(st.integers(0, 1), max_size=6)
VALUES = st.one_of(st.text(min_size=1, max_size=12), st.integers(), st.just("1990-01-01"))


@PROPERTY
@given(name=pii_names(), path=NESTINGS, value=VALUES)
def test_property_every_spelling_at_any_depth_is_refused(name: str, path: list[int], value: Any) -> None:
    from kit import _pii as pii

    assert pii.is_pii_name(name), name
    assert pii.pii_path({"details": nested({name: value}, path)}) is not None, name


@PROPERTY
@given(name=ordinary_names(), path=NESTINGS, flag=st.booleans())
def test_property_ordinary_fields_and_flags_are_not_refused(name: str, path: list[int], flag: bool) -> None:
    from kit import _pii as pii

    assert not pii.is_pii_name(name), name
    assert pii.pii_path({"details": nested({name: "2025-01-06", "n": flag}, path)}) is None, name


@PROPERTY
@given(name=pii_names(), path=NESTINGS)
def test_property_over_http_refused_and_nothing_changes(
    http: httpx.Client, customer: Journey, name: str, path: list[int]
) -> None:
    before = snapshot(http)
    body = {"event_type": "password.changed", "details": {"wrapped": nested({name: VALUE}, path)}}
    resp = send_event(http, customer.token, customer.account_id, body)
    assert_problem(resp, 422, "pii-must-be-encrypted", not_echo=(VALUE, ECHO))
    assert snapshot(http) == before


@PROPERTY
@given(name=ordinary_names(), path=NESTINGS)
def test_property_over_http_ordinary_fields_pass(
    http: httpx.Client, customer: Journey, name: str, path: list[int]
) -> None:
    details = {"wrapped": nested({name: "2025-01-06", "flag": True}, path)}  # details is an object
    body = {"event_type": "password.changed", "details": details}
    resp = send_event(http, customer.token, customer.account_id, body)
    assert resp.status_code == 202, (name, resp.text)


#: A JWE's shape (five segments, a JSON header) whose second segment reads as clear text.
FORGED = "eyJhbGciOiJSU0EtT0FFUC0yNTYifQ.born-1990-01-01.aaaa.bbbb.cccc"


def test_a_jwe_in_a_bodys_own_encrypted_field_is_ciphertext_and_decrypted_not_read(
    http: httpx.Client, customer: Journey
) -> None:
    """Ciphertext holds no clear text to judge: the route decrypts it at step 11, which refuses
    a forged one as invalid encrypted data; words inside its segments are not read (A11)."""
    before = snapshot(http)
    path = f"/accounts/{customer.account_id}/persons"
    resp = call(http, "POST", path, token=customer.token, session=customer.account_session,
                json_body={"encrypted_pii": FORGED})  # fmt: skip
    assert_problem(resp, 400, "invalid-encrypted-data", not_echo=("1990-01-01",))
    assert snapshot(http) == before


def test_a_jwe_shaped_value_anywhere_else_is_still_read(http: httpx.Client, customer: Journey) -> None:
    """Only a body's own ``encrypted_*`` fields are decrypted: the same value deeper, or under
    another name, is judged as any value is (a date beside the word born)."""
    for details in ({"encrypted_x": FORGED}, {"note": FORGED}):
        before = snapshot(http)
        body = {"event_type": "password.changed", "details": details}
        resp = send_event(http, customer.token, customer.account_id, body)
        assert_problem(resp, 422, "pii-must-be-encrypted", not_echo=("1990-01-01",))
        assert snapshot(http) == before


def test_a_national_id_in_a_jwe_shaped_encrypted_field_is_still_refused(
    http: httpx.Client, customer: Journey
) -> None:
    """A string shaped like a national id is personal data under any name, ciphertext's too."""
    before = snapshot(http)
    path = f"/accounts/{customer.account_id}/persons"
    forged = FORGED.replace("born-1990-01-01", f"x-{NIN}-y")
    resp = call(http, "POST", path, token=customer.token, session=customer.account_session,
                json_body={"encrypted_pii": forged})  # fmt: skip
    assert_problem(resp, 422, "pii-must-be-encrypted", not_echo=(NIN,))
    assert snapshot(http) == before
