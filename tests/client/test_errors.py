"""Every problem code maps to its class, in one function; messages say what to do."""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import get_args, get_type_hints

import httpx
import pytest

import kit
from kit import _codes, errors
from kit.errors import by_code, error_from_response

from .conftest import onboard

ROOT = Path(kit.__file__).resolve().parent.parent

# The codes of the contract (docs/contract.md, "Problem and error codes"), with the class a caller
# handles them by.
EXPECTED = {
    "invalid-partner-token": errors.InvalidPartnerToken,
    "session-required": errors.SessionRequired,
    "invalid-session": errors.InvalidSession,
    "session-expired": errors.SessionExpired,
    "session-superseded": errors.SessionSuperseded,
    "session-type-not-allowed": errors.SessionTypeNotAllowed,
    "session-not-bound": errors.SessionNotBound,
    "device-not-recognized": errors.DeviceNotRecognized,
    "invalid-session-transition": errors.InvalidSessionTransition,
    "nonce-invalid": errors.NonceInvalid,
    "invalid-device-key": errors.InvalidDeviceKey,
    "invalid-encrypted-data": errors.InvalidEncryptedData,
    "pii-must-be-encrypted": errors.PiiMustBeEncrypted,
    "malformed-json": errors.MalformedJson,
    "payload-too-large": errors.PayloadTooLarge,
    "unsupported-media-type": errors.UnsupportedMediaType,
    "validation-error": errors.ValidationError,
    "unknown-field": errors.UnknownField,
    "unknown-session-type": errors.UnknownSessionType,
    "unknown-expiration-strategy": errors.UnknownExpirationStrategy,
    "unknown-platform": errors.UnknownPlatform,
    "unknown-product": errors.UnknownProduct,
    "unknown-card-type": errors.UnknownCardType,
    "unknown-close-reason": errors.UnknownCloseReason,
    "unknown-event-type": errors.UnknownEventType,
    "event-renamed": errors.EventRenamed,
    "invalid-amount": errors.InvalidAmount,
    "unsupported-currency": errors.UnsupportedCurrency,
    "self-transfer": errors.SelfTransfer,
    "recipient-not-eligible": errors.RecipientNotEligible,
    "insufficient-funds": errors.InsufficientFunds,
    "card-already-closed": errors.CardAlreadyClosed,
    "card-not-active": errors.CardNotActive,
    "kyc-locked": errors.KycLocked,
    "document-request-not-open": errors.DocumentRequestNotOpen,
    "idempotency-key-required": errors.IdempotencyKeyRequired,
    "idempotency-key-reused": errors.IdempotencyKeyReused,
    "idempotency-key-in-use": errors.IdempotencyKeyInUse,
    "not-found": errors.NotFound,
    "card-not-found": errors.CardNotFound,
    "account-not-found": errors.AccountNotFound,
    "person-not-found": errors.PersonNotFound,
    "transfer-not-found": errors.TransferNotFound,
    "document-request-not-found": errors.DocumentRequestNotFound,
    "method-not-allowed": errors.MethodNotAllowed,
    "endpoint-removed": errors.EndpointRemoved,
    "endpoint-deprecated": errors.EndpointDeprecated,
    "webhook-url-not-allowed": errors.WebhookUrlNotAllowed,
    "injected-fault": errors.InjectedFault,
    "internal-error": errors.ServerError,
}


@pytest.mark.parametrize("code", sorted(EXPECTED))
def test_every_problem_code_maps_to_its_class(code: str) -> None:
    assert by_code[code] is EXPECTED[code]
    err = error_from_response(
        418,
        {"type": f"urn:partner-api-kit:problem:{code}", "code": code, "detail": "d."},
        request_id="req_1",
    )
    assert type(err) is EXPECTED[code]
    assert isinstance(err, errors.ApiError) and isinstance(err, errors.KitError)
    assert (err.status, err.code, err.request_id) == (418, code, "req_1")
    assert err.hint, f"{type(err).__name__} needs a hint"
    assert "req_1" in str(err)


def test_every_mapped_class_has_its_own_hint_or_a_family_hint() -> None:
    for code, cls in by_code.items():
        assert cls.hint, code


def test_by_code_is_read_from_the_classes() -> None:
    for code, cls in by_code.items():
        assert code == cls.code or code in cls.aliases, code
    classes = {c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, errors.ApiError)}
    coded = {c for c in classes if vars(c).get("code")}
    assert set(by_code.values()) == coded
    assert errors.SessionError.code == "" and "" not in by_code  # a family has no code of its own


def test_the_tree_shows_every_class_once_under_its_base() -> None:
    rows = [re.sub(r"^[│├└─ ]*", "", line) for line in errors.tree().splitlines()]
    names = [re.match(r"\w+", row).group(0) for row in rows]  # type: ignore[union-attr]
    kinds = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, errors.KitError)]
    classes = {c.__name__ for c in kinds}
    assert sorted(names) == sorted(classes)
    assert "    │   └── InvalidClient: invalid_client" in errors.tree().splitlines()
    assert "NotAvailable (also AttributeError)" in rows


def test_the_tree_in_the_docstring_is_the_classes_tree() -> None:
    """A class added, moved or given another code changes tree(): paste it into the docstring."""
    block = (errors.__doc__ or "").split("stands for::\n\n", 1)[1].split("\n\n", 1)[0]
    assert textwrap.dedent(block) == errors.tree(), "kit.errors' docstring: paste print(errors.tree())"


def test_every_code_of_the_catalogue_has_its_class_and_no_class_another() -> None:
    """``kit._codes`` is the one list: the simulator answers only its codes (mypy), and kit.errors
    has a class for each, no more (checked at import; here too)."""
    assert set(by_code) == _codes.KNOWN
    assert set(by_code) >= _codes.SIMULATED - _codes.GENERIC
    assert {"invalid_client", "session-expired", "card-not-found", "unknown-close-reason"} <= _codes.SIMULATED


def test_the_simulators_problems_take_only_the_catalogues_codes() -> None:
    """What makes mypy refuse a code spelled anywhere else: the simulator's problem classes, its
    not-found codes and its enum tables take the catalogue's types."""
    from kit.sim import problems, schema

    assert get_type_hints(problems.Problem.__init__)["code"] == _codes.ProblemCode
    assert get_type_hints(problems.OAuthError.__init__)["error"] == _codes.OAuthCode
    assert get_type_hints(problems.validation_problem)["code"] == _codes.ProblemCode
    assert get_args(get_args(schema.Enums)[1])[0] == _codes.ProblemCode
    assert set(problems.NOT_FOUND.values()) <= _codes.SIMULATED


@pytest.mark.slow  # a mypy run: ≈15 s
def test_a_new_simulator_code_outside_the_catalogue_is_refused_by_mypy(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from kit._codes import ProblemCode\n\n\n"
        "def problem(code: ProblemCode) -> None: ...\n\n\n"
        "problem('card-not-found')\nproblem('savings-retired')\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent", str(planted)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert out.returncode == 1 and out.stdout.count("error:") == 1, out.stdout
    assert "planted.py:8" in out.stdout and "savings-retired" in out.stdout


def test_a_class_for_a_code_outside_the_catalogue_is_refused_at_import() -> None:
    code = "import kit._codes as c; c.KNOWN = c.KNOWN - {'card-not-found'}; import kit.errors"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode != 0 and "card-not-found" in out.stderr


def test_unknown_codes_fall_back_by_family_and_status() -> None:
    assert type(error_from_response(404, {"code": "widget-not-found"})) is errors.NotFound
    assert type(error_from_response(422, {"code": "unknown-colour"})) is errors.UnknownValue
    assert type(error_from_response(503, None)) is errors.ServiceUnavailable
    assert type(error_from_response(500, "oops")) is errors.ServerError
    assert type(error_from_response(409, {"code": "something-new"})) is errors.Conflict


def test_rfc6749_bodies_become_oauth_errors() -> None:
    err = error_from_response(401, {"error": "invalid_client", "error_description": "Bad."})
    assert type(err) is errors.InvalidClient and err.code == "invalid_client"
    err = error_from_response(400, {"error": "unsupported_grant_type"})
    assert type(err) is errors.OAuthError


def test_unknown_value_message_quotes_value_and_allowed_list() -> None:
    err = error_from_response(
        422,
        {
            "code": "unknown-event-type",
            "detail": "Unknown.",
            "allowed": ["password.changed", "password.forgot"],
        },
        submitted={"unknown-event-type": "password.reset"},
    )
    assert err.message == (
        "event type 'password.reset' is not allowed; allowed: password.changed, password.forgot"
    )


def test_api_errors_pickle_for_multiprocessing_without_losing_their_class() -> None:
    err = error_from_response(409, {"code": "kyc-locked", "detail": "Locked."}, request_id="r")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is errors.KycLocked and back.request_id == "r"


# -- against the simulator --------------------------------------------------------------------


def test_unknown_event_type_from_the_server(api: kit.Client) -> None:
    customer = onboard(api)
    with pytest.raises(errors.UnknownEventType) as info:
        api.events.send(customer.account_id, "password.reset")
    message = str(info.value)
    assert "event type 'password.reset' is not allowed; allowed:" in message
    assert "password.changed" in message and "username.reset_failed" in message
    assert info.value.status == 422 and info.value.request_id


def test_unknown_close_reason_lists_the_reasons(api: kit.Client) -> None:
    customer = onboard(api)
    card = api.cards.create(customer.account_id, type="virtual")
    with pytest.raises(errors.UnknownCloseReason) as info:
        api.cards.close(card.card_id, reason="")
    assert set(info.value.allowed) == {
        "lost",
        "stolen",
        "damaged",
        "fraud_suspected",
        "customer_request",
        "account_closed",
    }
    assert api.cards.get(card.card_id).status == "active"
    closed = api.cards.close(card.card_id, reason="stolen")
    assert (closed.status, closed.close_reason) == ("closed", "stolen")
    with pytest.raises(errors.CardAlreadyClosed):
        api.cards.close(card.card_id, reason="lost")


def test_unknown_card_type(api: kit.Client) -> None:
    customer = onboard(api)
    with pytest.raises(errors.UnknownCardType, match="card type 'plastic' is not allowed"):
        api.cards.create(customer.account_id, type="plastic")


def test_session_errors_from_the_server(api: kit.Client) -> None:
    with pytest.raises(errors.SessionRequired):
        api.accounts.create()
    api.sessions.create("anonymous")
    with pytest.raises(errors.SessionTypeNotAllowed):
        api.p2p.get("p2p_missing")
    with pytest.raises(errors.InvalidSessionTransition):
        api.sessions.promote("person", person_id="per_missing")
    with pytest.raises(errors.UnknownExpirationStrategy, match="'forever'"):
        api.sessions.create("anonymous", expiration="forever")


def test_session_not_bound_hints_what_is_true_of_an_anonymous_session_and_of_another(
    make_client,  # type: ignore[no-untyped-def]
) -> None:
    """403 session-not-bound answers an anonymous session (bound to no account yet) as well as
    another account's session: the hint names both, and what to do in each."""
    api = make_client()
    api.sessions.create("anonymous")
    account = api.accounts.create()
    with pytest.raises(errors.SessionNotBound) as anonymous:
        api.cards.create(account.account_id, type="virtual")
    other = onboard(make_client())
    with pytest.raises(errors.SessionNotBound) as another:
        other.api.cards.create(account.account_id, type="virtual")
    for refused in (anonymous.value, another.value):
        assert refused.status == 403
        assert "anonymous one is bound to none" in refused.hint, refused.hint
        assert "promote it" in refused.hint and "a session of this account/person" in refused.hint
        assert "belongs to another" not in refused.hint


def test_not_found_and_removed(api: kit.Client) -> None:
    with pytest.raises(errors.CardNotFound):
        api.cards.get("card_does_not_exist")
    with pytest.raises(errors.EndpointRemoved):
        api._requestor.call("POST", "/accounts/acc_x/savings/close", json={}, session=None)
    with pytest.raises(errors.NotFound) as info:
        api._requestor.call("GET", "/refer-a-friend", session=None)
    assert info.value.code == "not-found"


def test_wrong_credentials_are_an_oauth_error(make_client) -> None:  # type: ignore[no-untyped-def]
    api = make_client(client_secret="wrong-secret")
    with pytest.raises(errors.InvalidClient) as info:
        api.sessions.init_data()
    assert info.value.status == 401
    assert "wrong-secret" not in str(info.value)


def test_users_never_see_httpx_errors(make_client) -> None:  # type: ignore[no-untyped-def]
    api = make_client(base_url="http://127.0.0.1:9", max_retries=2)
    with pytest.raises(errors.TransportError) as info:
        api.sessions.init_data()
    assert not isinstance(info.value, httpx.HTTPError)
