"""The data files (register, spec facts, personas) as code reads them, through kit.register."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

import pytest

from kit import register
from kit._choices import SERVED
from tests.sim.helpers.contract import (
    CARD_TYPES,
    CLOSE_REASONS,
    INBOUND_EVENT_TYPES,
    KYC_QUESTION_TEXTS,
    PII_ABBREVIATIONS,
    PII_DATE_IN_WORDS,
    PII_NAMES,
    PII_PART_WORDS,
    RETRY_OFFSETS,
    WEBHOOK_EVENTS,
)

REQUIRED_KEYS = {"id", "topic", "summary", "spec", "choice", "enforced_in"}
ALLOWED_KEYS = REQUIRED_KEYS | {"value", "covers"}
#: "METHOD /path STATUS" (a route and its success answer) and "STATUS code" (an error answer).
COVERED_ROUTE = re.compile(r"(GET|POST|PUT|PATCH|DELETE|\*) /\S+ ([1-5][0-9][0-9]|2xx)")
COVERED_CODE = re.compile(r"[1-5][0-9][0-9] [a-z0-9_-]+")

# (id, key, expected): the values code reads. Kept literal here (the lists are the wire
# contract's, written once in tests/sim/helpers/contract.py) so that an edit of the register
# that changes behaviour fails this test and has to be made on purpose.
ID_PREFIXES = {
    "account": "acc_",
    "person": "per_",
    "card": "card_",
    "session": "ses_",
    "transfer": "p2p_",
    "event": "evt_",
    "document_request": "doc_",
    "subscription": "sub_",
    "request": "req_",
}
REGISTER_VALUES: list[tuple[str, str, Any]] = [
    ("A01", "token_lifetime_seconds", 86400),
    ("A01", "token_type", "Bearer"),
    ("A01", "scope", "partner"),
    ("A01", "grant_types", ["client_credentials"]),
    ("A02", "header", "Authorization"),
    ("A02", "scheme", "Bearer"),
    ("A03", "deprecation", "@1671062400"),
    ("A03", "link_relation", "successor-version"),
    ("A04", "nonce_lifetime_seconds", 300),
    ("A04", "key_algorithms", ["RSA-OAEP-256", "ECDH-ES+A256KW"]),
    ("A04", "content_encryption", ["A256GCM"]),
    ("A04", "rsa_bits", 2048),
    ("A04", "ec_curve", "P-256"),
    ("A05", "session_types", ["anonymous", "account", "person"]),
    ("A05", "platforms", ["ios", "android", "web"]),
    ("A06", "strategies", ["fixed", "sliding"]),
    ("A06", "fixed_seconds", 1800),
    ("A06", "sliding_idle_seconds", 900),
    ("A06", "sliding_max_seconds", 43200),
    ("A01", "client_auth", "either"),
    ("A20", "replayed_header", "Idempotent-Replayed"),
    (
        "A67",
        "paths",
        {
            "create_account": "/accounts",
            "create_person": "/accounts/{account_id}/persons",
            "kyc_questions": "/persons/{person_id}/kyc/questions",
            "kyc_answers": "/persons/{person_id}/kyc/answers",
            "create_card": "/accounts/{account_id}/cards",
            "get_card": "/cards/{card_id}",
            "end_session": "/sessions",
            "create_transfer": "/p2p/transfers",
            "get_transfer": "/p2p/transfers/{transfer_id}",
            "subscribe_webhooks": "/webhooks/subscriptions",
            "webhook_keys": "/webhooks/jwks",
            "list_document_requests": "/persons/{person_id}/document_requests",
            "submit_document": "/document_requests/{document_request_id}/submit",
        },
    ),
    (
        "A67",
        "methods",
        {
            "create_account": "POST",
            "create_person": "POST",
            "kyc_questions": "GET",
            "kyc_answers": "POST",
            "create_card": "POST",
            "get_card": "GET",
            "end_session": "DELETE",
            "create_transfer": "POST",
            "get_transfer": "GET",
            "subscribe_webhooks": "POST",
            "webhook_keys": "GET",
            "list_document_requests": "GET",
            "submit_document": "POST",
        },
    ),
    ("A68", "renames", {}),
    ("A68", "field_case", "snake"),
    ("A10", "products", ["spending"]),
    ("A10", "starting_balance", "500.00"),
    ("A10", "currency", "USD"),
    ("A11", "pii_names", PII_NAMES),
    ("A11", "national_id_pattern", r"(?<![0-9])[0-9]{3}([- ])[0-9]{2}\1[0-9]{4}(?![0-9])"),
    ("A11", "part_words", PII_PART_WORDS),
    ("A11", "birth_words", ["birth", "born", "birthday", "birthdate", "birthplace", "natal"]),
    (
        "A11",
        "national_id_words",
        [
            "social security",
            "social insurance",
            "national id",
            "national insurance",
            "tax id",
            "taxpayer id",
            "tax number",
        ],
    ),
    ("A11", "nearness", 5),
    (
        "A11",
        "date_pattern",
        r"(?<![0-9])(?:[0-9]{4}([-/.])[0-9]{1,2}\1[0-9]{1,2}|[0-9]{1,2}([-/.])[0-9]{1,2}\2[0-9]{4})(?![0-9])",
    ),
    ("A11", "nine_digits_pattern", r"(?<![0-9])[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}(?![0-9])"),
    ("A11", "date_in_words_pattern", PII_DATE_IN_WORDS),
    (
        "A11",
        "national_insurance_pattern",
        r"(?<![A-Za-z0-9])[A-Za-z]{2} ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-Da-d](?![A-Za-z0-9])",
    ),
    ("A11", "tax_number_pattern", r"(?<![0-9])[0-9]{2}-[0-9]{7}(?![0-9])"),
    ("A11", "tax_words", ["tax", "taxpayer", "ein", "employer id"]),
    ("A11", "id_words", ["id"]),
    ("A11", "id_nearness", 2),
    ("A11", "abbreviations", PII_ABBREVIATIONS),
    ("A12", "question_count", 3),
    ("A12", "choices_per_question", 4),
    ("A12", "max_failed_attempts", 3),
    ("A12", "question_texts", KYC_QUESTION_TEXTS),
    ("A13", "types", CARD_TYPES),
    ("A14", "months", 36),
    ("A14", "temporary_days", 30),
    ("A15", "reasons", CLOSE_REASONS),
    ("A18", "role_header", "svc-p2p-role"),
    ("A19", "pattern", r"^[0-9]+(\.[0-9]{1,2})?$"),
    ("A19", "currencies", ["USD"]),
    ("A20", "header", "Idempotency-Key"),
    ("A20", "retention_seconds", 86400),
    ("A21", "type_prefix", "urn:partner-api-kit:problem:"),
    ("A22", "max_body_bytes", 65536),
    ("A24", "header", "svc-webhook-signature"),
    ("A24", "algorithm", "ES256"),
    ("A24", "max_skew_seconds", 300),
    ("A25", "timeout_seconds", 5),
    ("A25", "retry_offsets_seconds", RETRY_OFFSETS),
    ("A25", "answer_read_bytes", 4096),
    ("A27", "header", "svc-api-version"),
    ("A27", "version", "1.2.0-20221215"),
    ("A27", "versions", ["1.1.0", "1.2.0-20221215"]),
    ("A27", "card_fields_hidden", ["close_reason"]),
    ("A27", "card_type_shown", {"temporary": "virtual"}),
    ("A60", "id_format", "prefixed"),
    ("A61", "send_assumptions", True),
    (
        "A62",
        "sent",
        [
            "account.created_at",
            "card.last4",
            "card.created_at",
            "event.received_at",
            "transfer.created_at",
            "document_request.created_at",
        ],
    ),
    ("A63", "cards_and_events_require_session", False),
    # the default personality renames no code: each problem code maps to itself
    ("A64", "codes", {code: code for code in register.value("A64")["codes"]}),
    ("A66", "paths", ["/accounts/{account_id}/referral_code", "/accounts/{account_id}/referrals"]),
    ("A66", "code_prefix", "raf_"),
    ("A69", "areas", ["external card transfers", "digital wallet tokens", "payback rewards", "savings"]),
    ("A28", "request_id", "svc-request-id"),
    ("A28", "session_expires_at", "svc-session-expires-at"),
    ("A28", "assumptions", "svc-assumptions"),
    ("A28", "session_id", "svc-session-id"),
    ("A32", "max_sessions_per_device_per_minute", 30),
    ("A32", "window_seconds", 60),
    ("A33", "max_jwe_bytes", 16384),
    ("A41", "id_prefixes", ID_PREFIXES),
    ("A46", "retries_every_seconds", 1),
    ("A46", "expiry_and_bounds_every_seconds", 60),
    ("A47", "memo_max_chars", 140),
    ("A47", "webhook_url_max_chars", 2000),
    ("A47", "events_per_subscription_max", 20),
    ("A47", "device_id_max_chars", 200),
    ("A47", "device_model_max_chars", 200),
    ("A47", "os_version_max_chars", 100),
    ("A47", "name_max_chars", 200),
    ("A47", "national_id_max_chars", 64),
    ("A47", "idempotency_key_max_chars", 255),
    ("A47", "clock_advance_max_seconds", 316224000),
    ("A47", "fault_status_min", 400),
    ("A47", "fault_status_max", 599),
    ("A47", "fault_retry_after_max_seconds", 3600),
    ("A47", "fault_latency_max_ms", 10000),
    ("A50", "max_outstanding_per_partner", 1000),
    ("A51", "max_keys_per_partner", 20000),
    ("A52", "max_sessions_per_partner", 10000),
    ("A52", "kept_after_expiry_seconds", 86400),
    ("A53", "max_deliveries_per_partner", 5000),
    ("A53", "kept_after_last_attempt_seconds", 86400),
    ("A54", "max_tokens_per_partner", 10000),
    ("A55", "max_devices_per_partner", 10000),
    ("A56", "max_events_per_partner", 1000),
    ("A57", "max_subscriptions_per_partner", 100),
    ("A58", "max_faults", 100),
]

# Entries that carry no machine-readable value (their choice is behaviour, not a number).
NO_VALUE = {
    "A07",
    "A08",
    "A09",
    "A16",
    "A17",
    "A23",
    "A26",
    "A29",
    "A30",
    "A31",
    *(f"A{n}" for n in range(34, 46) if n != 41),
    "A48",
    "A59",
    "A65",
}
#: The entries these tests know: A01-A48, A50-A59 (the bounds of the simulator's stores), A60-A64
#: (what an overlay may re-choose), A65-A66 (1.1.0's savings close and Refer a Friend), A67-A68
#: (the dialect: paths and field names), A69 (the areas of service.1 not simulated).
KNOWN = [f"A{n:02d}" for n in (*range(1, 49), *range(50, 70))]


# --- the assumptions register ---------------------------------------------------------------


def test_register_ids_are_unique_in_order_and_the_known_ones_all_there() -> None:
    ids = [entry["id"] for entry in register.assumptions()]
    assert all(re.fullmatch(r"A\d\d", i) for i in ids), ids
    assert ids == sorted(set(ids)), "ids unique and in order"
    assert [i for i in ids if i in KNOWN] == KNOWN


@pytest.mark.parametrize("entry", register.assumptions(), ids=lambda e: e["id"])
def test_register_entry_has_the_required_keys(entry: dict[str, Any]) -> None:
    assert entry.keys() >= REQUIRED_KEYS
    assert entry.keys() <= ALLOWED_KEYS
    for key in ("topic", "summary", "spec", "choice"):
        assert isinstance(entry[key], str)
        assert entry[key].strip() == entry[key] and entry[key], f"{entry['id']}.{key}"
    assert isinstance(entry["enforced_in"], list) and entry["enforced_in"]
    if "value" in entry:
        assert isinstance(entry["value"], dict) and entry["value"]
    if "covers" in entry:
        covers = entry["covers"]
        assert covers and set(covers) <= {"routes", "codes"}, entry["id"]
        for route in covers.get("routes", []):
            assert COVERED_ROUTE.fullmatch(route), (entry["id"], route)
        for code in covers.get("codes", []):
            assert COVERED_CODE.fullmatch(code), (entry["id"], code)


#: A summary's bound, in words: what a reader takes in at a glance in a notebook's closing table.
SUMMARY_WORDS = 25
#: What a partner reading the register has no use for: a source file, an issue, the authors.
_NOT_FOR_A_PARTNER = re.compile(r"\bkit/|\.py\b|\bissue \d|#\d|\b[Ww]e\b|\bour\b")


@pytest.mark.parametrize("entry", register.assumptions(), ids=lambda e: e["id"])
def test_each_entry_sums_its_choice_up_in_one_plain_sentence(entry: dict[str, Any]) -> None:
    summary = entry["summary"]
    assert len(summary.split()) <= SUMMARY_WORDS, (entry["id"], len(summary.split()))
    assert summary.endswith(".") and ". " not in summary, f"{entry['id']}: one sentence"
    assert not _NOT_FOR_A_PARTNER.search(summary), (entry["id"], _NOT_FOR_A_PARTNER.search(summary))


@pytest.mark.parametrize("entry", register.assumptions(), ids=lambda e: e["id"])
def test_a_choice_names_no_source_file_nor_a_key_only_the_code_reads(entry: dict[str, Any]) -> None:
    """A value key a dialect file sets (``send_assumptions``, A68's ``field_case``) is the
    reader's to use and may be named; one only the code reads (A27's view of a card under 1.1.0,
    A11's word lists) is the register's inside, said in words instead."""
    choice = entry["choice"]
    assert not re.search(r"\bkit/|\w\.py\b", choice), entry["id"]
    served = SERVED.get(entry["id"], frozenset())
    internal = set(entry.get("value", {})) - (set(entry.get("value", {})) if served is None else served)
    named = {m.split(" = ")[0] for m in re.findall(r"`([^`]+)`", choice)}
    assert not named & internal, (entry["id"], sorted(named & internal))


@pytest.mark.parametrize("entry", register.assumptions(), ids=lambda e: e["id"])
def test_the_spec_words_are_the_seeds_quoted_exactly(entry: dict[str, Any]) -> None:
    """Each ``spec`` is the seed's words: verbatim fragments joined by " … ", each a whole
    sentence, item or cell unless an "…" marks the cut (kit.register.quote_faults)."""
    assert not register.quote_faults(entry["spec"]), (entry["id"], register.quote_faults(entry["spec"]))
    assert register.cite(entry["spec"]), entry["id"]


@pytest.mark.parametrize("entry", register.assumptions(), ids=lambda e: e["id"])
def test_enforced_in_names_modules_of_the_kit(entry: dict[str, Any]) -> None:
    paths = entry["enforced_in"]
    assert len(paths) == len(set(paths))
    for path in paths:
        assert isinstance(path, str)
        assert path.startswith("kit/"), path
        assert path.endswith(".py"), path


def test_only_the_listed_entries_carry_values() -> None:
    with_value = {e["id"] for e in register.assumptions() if "value" in e and e["id"] in KNOWN}
    assert with_value == set(KNOWN) - NO_VALUE
    assert {entry_id for entry_id, _, _ in REGISTER_VALUES} == with_value


@pytest.mark.parametrize(("assumption_id", "key", "expected"), REGISTER_VALUES)
def test_register_value(assumption_id: str, key: str, expected: Any) -> None:
    value = register.value(assumption_id)
    assert key in value, f"{assumption_id} has no value key {key!r}"
    assert value[key] == expected
    assert type(value[key]) is type(expected)


def test_register_value_keys_are_exactly_the_listed_ones() -> None:
    listed: dict[str, set[str]] = {}
    for entry_id, key, _ in REGISTER_VALUES:
        listed.setdefault(entry_id, set()).add(key)
    for entry_id, keys in listed.items():
        assert set(register.value(entry_id)) == keys, entry_id


def test_value_of_an_entry_without_value_is_empty_and_unknown_id_raises() -> None:
    assert register.value("A07") == {}
    with pytest.raises(KeyError):
        register.assumption("A49")


def test_register_copies_cannot_alter_the_register() -> None:
    register.value("A13")["types"] = ["gold"]
    register.assumption("A13")["topic"] = "changed"
    assert register.value("A13")["types"] == ["physical", "virtual", "temporary"]
    assert register.assumption("A13")["topic"] == "Card types"


def test_money_pattern_accepts_and_refuses_as_designed() -> None:
    pattern = re.compile(register.value("A19")["pattern"])
    for good in ("0", "12", "12.5", "12.50", "1000000.01"):
        assert pattern.fullmatch(good), good
    for bad in ("", "-1", "1.", ".5", "1.234", "1e3", "1,00", " 1"):
        assert not pattern.fullmatch(bad), bad


def test_register_agrees_with_the_spec_facts() -> None:
    spec = register.spec()
    assert register.value("A27")["version"] == spec["version"]
    assert set(spec["card_types_added"]) <= set(register.value("A13")["types"])
    # the successor the POST's Link names is the seed's ("Replaced by POST /oauth/accesstoken"),
    # and the DELETE has none: nothing of it is a register value
    replaced = {e["method"]: e.get("replaced_by") for e in spec["deprecated_endpoints"]}
    assert replaced == {"POST": "POST /oauth/accesstoken", "DELETE": None}
    assert "successor" not in register.value("A03")


def test_sliding_sessions_are_capped_beyond_their_idle_time() -> None:
    lifetimes = register.value("A06")
    assert 0 < lifetimes["sliding_idle_seconds"] < lifetimes["sliding_max_seconds"]
    assert 0 < lifetimes["fixed_seconds"] <= lifetimes["sliding_max_seconds"]


def test_webhook_retries_are_increasing() -> None:
    offsets = register.value("A25")["retry_offsets_seconds"]
    assert offsets == sorted(set(offsets)) and offsets[0] > 0


# --- the spec's facts ------------------------------------------------------------------------


def test_spec_version_and_date() -> None:
    spec = register.spec()
    assert spec["version"] == "1.2.0-20221215"
    assert spec["date"] == "2022-12-15"
    assert spec["version"].endswith(spec["date"].replace("-", ""))


def test_spec_lists_the_eight_inbound_event_types_in_order() -> None:
    assert register.spec()["inbound_event_types"] == INBOUND_EVENT_TYPES


def test_spec_has_nine_changes_numbered_1_to_9() -> None:
    changes = register.spec()["change"]
    assert [c["number"] for c in changes] == list(range(1, 10))
    assert [c["id"] for c in changes] == [f"change.{n}" for n in range(1, 10)]
    for change in changes:
        assert {"id", "number", "spec", "chosen_by", "see", "operations", "previously"} <= set(change), change
        assert f"  {change['number']}. {change['spec']}\n" in register.seed_text()


def test_spec_webhook_events_and_renames() -> None:
    spec = register.spec()
    events = spec["webhook_events"]
    assert list(events) == WEBHOOK_EVENTS
    assert spec["deprecated_webhook_events"] == ["card.expired"]
    assert events["card.expired"].startswith("Deprecated")
    renamed = spec["renamed_webhook_events"]
    assert renamed == {
        "person.document_request.created": "document_request.created",
        "person.document_request.completed": "document_request.completed",
    }
    assert set(renamed.values()) <= set(events)
    assert not set(renamed) & set(events)


def test_spec_categories_two_renames_one_merge_one_new() -> None:
    """category.1: two renames, Image merged into Payback Rewards, Document Request webhooks a
    category of their own; nothing the seed does not give (no former name of the new one)."""
    categories = register.spec()["categories"]
    assert categories == {
        "renamed": {"External Card Transfers": "Top Up", "Digital Wallet Tokens": "Tokens"},
        "merged": {"Payback Rewards": "Image"},
        "own_category": ["Document Request"],
    }
    text = register.statement("category.1")["text"]
    for new, old in categories["renamed"].items():
        assert f'"{new}" (formerly {old})' in text
    assert '"Payback Rewards" (which also holds what was the Image category)' in text


def test_spec_removed_and_deprecated_endpoints() -> None:
    spec = register.spec()
    removed = spec["removed_endpoints"]
    savings = removed[0]
    assert (savings["method"], savings["path"]) == ("POST", "/accounts/{account_id}/savings/close")
    assert all(e["removed_in"] == "1.2.0" for e in removed)
    assert any("Refer a Friend" in e["note"] and e["path"] == "" for e in removed)
    for endpoint in removed:
        assert endpoint["note"] in register.seed_text()
    deprecated = spec["deprecated_endpoints"]
    assert sorted(e["method"] for e in deprecated) == ["DELETE", "POST"]
    for endpoint in deprecated:
        assert endpoint["path"] == "/authorization/server_api/access_tokens"
        assert "successor" not in endpoint


# --- the personas ----------------------------------------------------------------------------

NATIONAL_ID = re.compile(r"000-00-\d{4}")


def test_there_are_twelve_personas_with_unique_ids() -> None:
    people = register.personas()
    assert len(people) == 12
    assert [p["persona_id"] for p in people] == [f"persona-{n:02d}" for n in range(1, 13)]
    for key in ("national_id", "date_of_birth"):
        assert len({p[key] for p in people}) == 12, key
    assert len({p["device"]["device_id"] for p in people}) == 12


@pytest.mark.parametrize("persona", register.personas(), ids=lambda p: p["persona_id"])
def test_persona_is_well_formed_and_obviously_fake(persona: dict[str, Any]) -> None:
    assert persona["national_id"].startswith("000-")  # area 000 is never issued
    assert NATIONAL_ID.fullmatch(persona["national_id"])
    born = date.fromisoformat(persona["date_of_birth"])
    assert 1950 <= born.year <= 2004
    assert persona["first_name"] and persona["last_name"]
    device = persona["device"]
    assert set(device) == {"device_id", "platform", "model", "os_version"}
    assert device["device_id"] == "dev-" + persona["persona_id"]
    assert device["platform"] in register.value("A05")["platforms"]
    assert all(isinstance(v, str) and v for v in device.values())


def test_personas_cover_every_platform_and_vary_in_age() -> None:
    people = register.personas()
    assert {p["device"]["platform"] for p in people} == set(register.value("A05")["platforms"])
    assert len({p["date_of_birth"][:4] for p in people}) == 12


def test_persona_copies_cannot_alter_the_data() -> None:
    register.personas()[0]["device"]["platform"] = "changed"
    assert register.personas()[0]["device"]["platform"] != "changed"
