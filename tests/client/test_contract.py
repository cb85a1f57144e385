"""The contract check answer by answer (:mod:`kit._contract`), the memo of verdicts by shape
(:mod:`kit._shapes`) and where drift is collected (:mod:`kit._drift`)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kit
import kit._drift
import kit.notebook
from kit import _contract as contract
from kit import _env as env
from kit import register
from kit._contract import Contract
from kit._drift import Drift, DriftLog
from kit._shapes import Memo, conforms

VERSION = str(register.spec()["version"])

OK = {"svc-request-id": "req_1", "svc-api-version": VERSION, "content-type": "application/json"}
PROBLEM = {**OK, "content-type": "application/problem+json"}
CARD = {
    "card_id": "card_1",
    "account_id": "acc_1",
    "type": "temporary",
    "status": "active",
    "last4": "1234",
    "expires_on": "2025-02-01",
    "close_reason": None,
    "created_at": "2025-01-06T09:00:00Z",
}


def _problem(code: object) -> dict[str, object]:
    return {"type": "urn:x", "title": "t", "status": 404, "detail": "d", "code": code}


@pytest.mark.parametrize(
    ("method", "path", "status", "headers", "body", "expected"),
    [
        ("GET", "/cards/card_1", 200, OK, CARD, []),
        (
            "GET",
            "/cards/card_1",
            200,
            {**OK, "svc-request-id": ""},
            CARD,
            [("header svc-request-id", "missing")],
        ),
        ("GET", "/cards/card_1", 200, OK, {**CARD, "close_reason": 3}, [("body.close_reason", "integer")]),
        ("GET", "/cards/card_1", 200, OK, None, [("body", "empty")]),
        (
            "GET",
            "/cards/card_1",
            200,
            {**OK, "content-type": "text/html"},
            None,
            [("content-type", "text/html")],
        ),
        ("GET", "/cards/card_1", 404, PROBLEM, _problem("card-not-found"), []),
        ("GET", "/cards/card_1", 404, PROBLEM, _problem("card-vanished"), [("body.code", "card-vanished")]),
        (
            "GET",
            "/cards/card_1",
            404,
            PROBLEM,
            _problem(12),
            [("body.code", "an integer"), ("body.code", "integer")],
        ),
        ("GET", "/no/such/path", 404, PROBLEM, _problem("not-found"), []),
        ("GET", "/no/such/path", 200, OK, {}, [("operation", "200")]),
        ("DELETE", "/sessions", 204, OK, None, []),
    ],
)
def test_one_answer_against_the_contract(
    method: str,
    path: str,
    status: int,
    headers: dict[str, str],
    body: object,
    expected: list[tuple[str, str]],
) -> None:
    rows = Contract.default().check(method, path, status, headers, body)
    assert sorted((r.field, r.got) for r in rows) == sorted(expected)


def test_operations_are_found_by_their_templates() -> None:
    contract = Contract.default()
    assert contract.operation("GET", "/cards/card_123?x=1") == "GET /cards/{card_id}"
    assert contract.operation("post", "/accounts/acc_1/persons") == "POST /accounts/{account_id}/persons"
    assert contract.operation("POST", "/sessions") == "POST /sessions"
    assert contract.operation("PUT", "/sessions") is None
    assert contract.operation("GET", "/cards/a/b") is None


# -- the memo never hides a drift ----------------------------------------------------------------

DOCUMENT = {
    "components": {
        "schemas": {
            "Token": {
                "type": "object",
                "required": ["token_type", "n"],
                "properties": {"token_type": {"type": "string", "const": "Bearer"}, "n": {"type": "integer"}},
            }
        }
    }
}


class Counting:
    """A jsonschema validator that counts the bodies it validates."""

    def __init__(self, schema: dict[str, object]) -> None:
        from jsonschema import Draft202012Validator

        self.inner = Draft202012Validator({**schema, "components": DOCUMENT["components"]})
        self.calls = 0

    def iter_errors(self, body: object) -> list[object]:
        self.calls += 1
        return list(self.inner.iter_errors(body))


def test_a_shape_that_passed_is_not_validated_again_but_a_new_value_is() -> None:
    schema = {"$ref": "#/components/schemas/Token"}
    validator = Counting(schema)
    memo = Memo(validator, schema, DOCUMENT)
    assert memo.errors({"token_type": "Bearer", "n": 1}) == []  # surely valid: no validator asked
    assert memo.errors({"token_type": "Bearer", "n": 2}) == [] and validator.calls == 0
    assert memo.errors({"token_type": "bearer", "n": 2})  # another value of the const: validated
    assert memo.errors({"token_type": "Bearer", "n": 2.5})  # a float where an integer is due
    assert memo.errors({"token_type": "Bearer"})  # a required field dropped
    assert memo.errors({"token_type": "bearer", "n": 2}) and validator.calls == 4  # failures are never kept


def test_only_structural_schemas_are_remembered() -> None:
    pattern = {"type": "string", "pattern": "^a"}
    validator = Counting(pattern)
    memo = Memo(validator, pattern, DOCUMENT)
    assert memo.errors("abc") == [] and memo.errors("bcd") and memo.errors("abc") == []
    assert validator.calls == 3
    integer = {"type": "integer"}
    validator = Counting(integer)
    memo = Memo(validator, integer, DOCUMENT)
    assert memo.errors(1.0) == [] and memo.errors(1.5) and validator.calls == 1


def test_the_validator_is_built_only_for_a_body_not_surely_valid() -> None:
    built: list[Counting] = []
    schema = {"$ref": "#/components/schemas/Token"}

    def build() -> Counting:
        built.append(Counting(schema))
        return built[-1]

    memo = Memo(build, schema, DOCUMENT)
    assert memo.errors({"token_type": "Bearer", "n": 1}) == [] and built == []
    assert memo.errors({"token_type": "Bearer", "n": "1"}) and len(built) == 1
    assert memo.errors({"token_type": "Bearer", "n": []}) and len(built) == 1 and built[0].calls == 2


def _document() -> dict[str, Any]:
    with open(register.data_dir() / contract.DOCUMENT, encoding="utf-8") as f:
        return dict(json.load(f))


_VALIDATORS: dict[str, Any] = {}


def _validator(name: str) -> Any:
    if name not in _VALIDATORS:
        from jsonschema_path import SchemaPath
        from openapi_core.validation.schemas import oas31_schema_validators_factory

        spec = SchemaPath.from_dict(_document())
        schema = spec / "components" / "schemas" / name
        _VALIDATORS[name] = oas31_schema_validators_factory.create(spec, schema).validator
    return _VALIDATORS[name]


def _examples(schema: dict[str, Any]) -> list[Any]:
    return [*schema.get("examples", ()), *([schema["example"]] if "example" in schema else [])]


#: Every property name of the contract's schemas, so generated bodies meet their fields.
_NAMES = sorted(
    {n for schema in _document()["components"]["schemas"].values() for n in schema.get("properties", {})}
)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([1.0, 2.5])
    | st.sampled_from(["Bearer", "x"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_NAMES), inner, max_size=4),
    max_leaves=8,
)


@pytest.mark.parametrize("name", sorted(_document()["components"]["schemas"]))
@given(body=JSON)
@settings(max_examples=40, deadline=None)
def test_surely_valid_is_what_openapi_core_says(name: str, body: object) -> None:
    """``conforms`` may say "not sure" for a valid body, never "valid" for an invalid one: on
    every schema of the contract and generated bodies (the schema's own examples included)."""
    document = _document()
    schema = {"$ref": f"#/components/schemas/{name}"}
    validator = _validator(name)
    if conforms(schema, body, document):
        assert list(validator.iter_errors(body)) == []
    for example in _examples(document["components"]["schemas"][name]):
        assert not conforms(schema, example, document) or list(validator.iter_errors(example)) == []


def test_the_first_answers_of_a_session_need_no_openapi_core() -> None:
    """A token, init data and a session are judged without importing openapi-core (a quarter of a
    second of every fresh process's first session)."""
    code = (
        "import sys, kit; api = kit.connect('sim'); api.sessions.create('anonymous'); "
        "assert len(api.drift) == 0; "
        "print(sorted(m for m in sys.modules if m.startswith(('openapi_core', 'jsonschema'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]"


# -- where drift goes ------------------------------------------------------------------------------


def test_a_log_is_bounded() -> None:
    log = DriftLog(limit=2)
    row = Drift("status", "GET /x", "status", "one of 200", "418", "req_1")
    log.record([row, row, row])
    assert (len(log), log.dropped) == (2, 1)
    assert list(log.frame().columns) == kit._drift.COLUMNS
    assert (
        kit.notebook.text_line(row)
        == "contract drift: GET /x: status: expected one of 200, got 418 (request req_1)"
    )


@pytest.mark.drift_expected
def test_an_injected_fault_is_drift_outside_the_sim_profile(
    make_client: Callable[..., kit.Client], sim_url: str
) -> None:
    """The simulator's injected faults are asked for: not drift in ``sim``. The same answer to a
    sandbox-profile client is a status the contract does not list."""
    sim = make_client()
    sim.sim.add_fault("GET", "/webhooks/jwks", status=503, times=2)
    own = make_client(max_retries=0)
    with pytest.raises(kit.errors.ServiceUnavailable):
        own.webhooks.jwks()
    assert own.drift.empty
    client_id, secret = next(iter(env.SIM_PARTNER_CLIENTS.items()))
    with kit.connect(
        "sandbox", base_url=sim_url, client_id=client_id, client_secret=secret, max_retries=0
    ) as api:
        with pytest.raises(kit.errors.ServiceUnavailable):
            api.webhooks.jwks()
        assert [(d.operation, d.field, d.got) for d in api.drift.itertuples()] == [
            ("GET /webhooks/jwks", "status", "503")
        ]


# -- seed or choice: the explicit table ----------------------------------------------------------


def test_every_operation_of_the_document_names_its_basis() -> None:
    document = json.loads((register.data_dir() / "openapi.json").read_text(encoding="utf-8"))
    operations = {f"{method.upper()} {path}" for path, ops in document["paths"].items() for method in ops}
    partner = {op for op in operations if not op.split(" ", 1)[1].startswith("/_sim/")}
    assert set(contract.OPERATIONS) == partner
    entries = {a["id"] for a in register.assumptions()}
    assert {entry for _, entry in contract.OPERATIONS.values()} <= entries
    assert set(contract.HEADER_BASIS.values()) <= entries


def test_the_seed_statements_of_the_table_name_those_endpoints() -> None:
    statements = {s["id"]: s for s in getattr(register, "statements", list)()}
    if not statements:
        pytest.skip("data/spec.toml has no statement ids yet")
    named = {op: seed for op, (seed, _) in contract.OPERATIONS.items() if seed} | dict(contract.REMOVED)
    for operation, seed in named.items():
        method, path = operation.split(" ", 1)
        assert statements[seed]["row"][:2] == [method, path], (operation, seed)
    assert contract.VERSION_STATEMENT in statements


@pytest.mark.parametrize(
    ("kind", "operation", "status", "field", "basis"),
    [
        ("status", "POST /sessions", 404, "status", "endpoint.5"),  # a seed endpoint missing: drift
        ("status", "POST /sessions", 418, "status", "A21"),  # another error status: a choice
        ("body", "POST /sessions", 201, "body.session_token", "A05"),
        ("body", "GET /cards/{card_id}", 200, "body.created_at", "A35"),
        ("code", "POST /cards/{card_id}/close", 409, "body.code", "A21"),
        ("header", "GET /cards/{card_id}", 200, "header svc-request-id", "A28"),
        ("header", "GET /cards/{card_id}", 200, "header svc-api-version", "A27"),
        ("version", "GET /cards/{card_id}", 200, "header svc-api-version", "version.1"),
        ("operation", "POST /accounts/acc_1/savings/close", 200, "operation", "endpoint.8"),
        ("operation", "GET /somewhere", 200, "operation", "A44"),
        ("body", "GET /_sim/clock", 200, "body.now", "A45"),
    ],
)
def test_each_row_rests_on_a_seed_statement_or_a_register_entry(
    kind: str, operation: str, status: int, field: str, basis: str
) -> None:
    assert contract.basis_of(kind, operation, status, field) == basis
    row = Drift(kind, operation, field, "x", "y", None, basis)
    assert row.differs == basis.startswith("A")
