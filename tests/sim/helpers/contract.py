"""Literal values of the wire contract, written out on purpose: tests built from the contract
do not read them from the register or the simulator (``tests/test_register.py`` checks the
register against these same lists)."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx

from kit._env import SIM_PARTNER_CLIENTS

API_VERSION = "1.2.0-20221215"
#: The versions served (A27): a request naming one is answered under it.
SUPPORTED_VERSIONS = ("1.1.0", API_VERSION)


def served_version(resp: httpx.Response) -> str:
    """The version that must serve ``resp``'s request: the one it named, when served (A27); the
    OpenAPI document may name it in its ``version`` query parameter instead (A48)."""
    asked = resp.request.headers.get("svc-api-version")
    if asked is None and resp.request.url.path == "/openapi.json":
        asked = resp.request.url.params.get("version")
    return asked if asked in SUPPORTED_VERSIONS else API_VERSION


PROBLEM_PREFIX = "urn:partner-api-kit:problem:"
PROBLEM_CT = "application/problem+json"
#: The fields every problem body carries (RFC 9457 and the contract's ``code``).
PROBLEM_FIELDS = ("type", "title", "status", "detail", "code")
#: The simulator's two built-in partner clients, (client id, secret) each: its configuration
#: (one home, ``kit._env``), not the contract.
PARTNER_A, PARTNER_B = tuple(SIM_PARTNER_CLIENTS.items())[:2]
DEPRECATION = "@1671062400"
SUCCESSOR_LINK = '</oauth/accesstoken>; rel="successor-version"'
#: Where the simulator's clock stands after a reset (the seeded start).
CLOCK_START = datetime(2025, 1, 6, 9, 0, 0, tzinfo=UTC)
INBOUND_EVENT_TYPES = [
    "email_address.update_fails_verification",
    "login.failed_too_many_times",
    "password.change_failure",
    "password.changed",
    "password.forgot",
    "password.reset_failed",
    "username.forgot",
    "username.reset_failed",
]
CLOSE_REASONS = ["lost", "stolen", "damaged", "fraud_suspected", "customer_request", "account_closed"]
CARD_TYPES = ["physical", "virtual", "temporary"]
WEBHOOK_EVENTS = [
    "card.closed",
    "card.expired",
    "document_request.created",
    "document_request.completed",
]
#: When a failed webhook delivery is tried again, in seconds after the first attempt (A25).
RETRY_OFFSETS = [1, 2, 4, 8, 16]
PII_FIELDS = [
    "first_name",
    "last_name",
    "date_of_birth",
    "dob",
    "birth_date",
    "national_id",
    "ssn",
    "tax_id",
    "passport_number",
]
#: The register's names and synonyms of personal data (A11), in words: a field whose name holds
#: one of them, in any spelling, is refused in clear text.
PII_NAMES = [
    "first name", "last name", "given name", "family name", "middle name", "full name", "surname",
    "maiden name", "legal name", "date of birth", "birth date", "birthday", "year of birth", "birth year",
    "place of birth", "birth place", "national id", "national id number", "national insurance number",
    "social security number", "social insurance number", "tax id", "tax id number", "taxpayer id",
    "taxpayer id number", "passport number", "passport id", "id number", "id card number",
    "driver license number", "drivers license number", "driving license number",
]  # fmt: skip
PII_PART_WORDS = [
    "last", "first", "digits", "digit", "year", "month", "day", "value", "text", "string", "str", "raw",
    "clear", "plain", "part", "prefix", "suffix", "full",
]  # fmt: skip
#: A date with its month in words (A11): a day, a month's name or its abbreviation, a year.
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY, _SEP = r"[0-9]{1,2}(?:st|nd|rd|th)?", r"[\s,./-]{1,3}"
PII_DATE_IN_WORDS = (
    rf"(?i)(?<![a-z0-9])(?:{_DAY}(?:{_SEP}of)?{_SEP}{_MONTH}{_SEP}[0-9]{{4}}"
    rf"|{_MONTH}{_SEP}{_DAY}{_SEP}[0-9]{{4}})(?![0-9])"
)
PII_ABBREVIATIONS = {
    "dob": "date of birth", "bday": "birthday", "dt": "date", "ssn": "social security number",
    "sin": "social insurance number", "tin": "tax id number", "no": "number", "num": "number",
    "nr": "number", "nbr": "number", "nat": "national", "natl": "national", "identifier": "id",
    "identification": "id", "identity": "id", "ident": "id", "fname": "first name", "lname": "last name",
    "licence": "license", "dl": "driver license", "ni": "national insurance",
    "nino": "national insurance number",
}  # fmt: skip
KYC_QUESTION_TEXTS = [
    "In which year were you born?",
    "In which month were you born?",
    "What are the last two digits of your national identification number?",
]
FORBIDDEN_JWE_HEADERS = ["zip", "jku", "jwk", "x5u", "x5c", "crit"]

#: A value no simulator would make up: it must never come back in an error body.
ECHO = "Zq9EchoCanary4242"
