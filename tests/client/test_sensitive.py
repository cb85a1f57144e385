"""Nothing sensitive in repr, str, HTML, history, a pickle attempt or JSON (redaction by mechanism)."""

from __future__ import annotations

import copy
import json
import pickle
import re

import pandas as pd
import pytest

import kit
from kit import errors
from kit._sensitive import MASK

from .conftest import onboard, record

JWE_LIKE = re.compile(r"eyJ[\w-]+\.[\w-]*\.[\w-]+\.[\w-]+\.[\w-]+")


def test_sensitive_is_masked_everywhere() -> None:
    s = kit.Sensitive("1990-04-01", label="date_of_birth")
    assert repr(s) == f"Sensitive(date_of_birth={MASK})"
    assert str(s) == MASK and f"{s}" == MASK and f"{s:>10}".strip() == MASK
    assert "1990" not in s._repr_html_()
    assert s.reveal() == "1990-04-01"
    frame = pd.DataFrame({"dob": [s]})
    assert "1990" not in frame.to_string() and "1990" not in frame.to_html()


def test_sensitive_refuses_pickle_and_json() -> None:
    s: kit.Sensitive[object] = kit.Sensitive({"national_id": "000-00-0000"}, label="pii")
    with pytest.raises(errors.SensitiveDataError):
        pickle.dumps(s)
    with pytest.raises(TypeError):
        json.dumps(s)
    with pytest.raises(errors.SensitiveDataError):
        pickle.dumps({"wrapped": [s]})
    with pytest.raises(AttributeError):
        s._value = "other"  # type: ignore[misc, assignment]
    assert copy.deepcopy(s).reveal() == s.reveal()


def test_pii_of_personas_stays_hidden(api: kit.Client) -> None:
    persona = api.sim.persona(0)
    revealed = [getattr(persona, n).reveal() for n in persona.PII_FIELDS]
    frame = api.sim.personas()
    shown = repr(persona) + persona._repr_html_() + frame.to_string() + frame.to_html()
    for value in revealed:
        assert value not in shown
    with pytest.raises(errors.SensitiveDataError):
        pickle.dumps(persona)


def test_nothing_secret_in_history_reprs_or_pickles(api: kit.Client) -> None:
    recorder = record(api)
    customer = onboard(api)
    questions = api.kyc.questions(customer.person_id)
    answers = api.sim.kyc_answers(customer.person_id)
    persona = api.sim.persona(0)

    secrets: list[str] = [
        api._requestor.auth.token.reveal(),  # type: ignore[union-attr]
        api._requestor.current.token.reveal(),  # type: ignore[union-attr]
        "sim-secret",
        *[getattr(persona, n).reveal() for n in persona.PII_FIELDS],
    ]
    secrets += [q["text"] for q in questions.reveal()]
    # Every ciphertext the client sent.
    ciphertexts = [
        value
        for r in recorder.requests
        if r.headers.get("content-type") == "application/json"
        for value in json.loads(r.content).values()
        if isinstance(value, str) and JWE_LIKE.fullmatch(value)
    ]
    assert len(ciphertexts) >= 4  # sessions ×2, PII, answers

    history = api.history
    shown = "\n".join(
        [
            history.to_string(),
            history.to_html(),
            history.to_json(date_format="iso"),
            repr(api),
            repr(api.session),
            api.session._repr_html_() if api.session else "",
            repr(api._requestor.current),
            repr(api._requestor.transport),
            repr(api.device),
            repr(questions),
            repr(answers),
        ]
    )
    for secret in secrets + ciphertexts:
        assert secret not in shown
    assert not JWE_LIKE.search(shown)
    from kit.regress.leaks import scan_dataframe, scan_text  # the project's independent leak scanner

    assert scan_text(shown, secrets=secrets) == []
    assert scan_dataframe(history) == []
    assert set(history.columns) == {
        "time",
        "method",
        "path",
        "status",
        "ms",
        "session_type",
        "code",
        "request_id",
        "replayed",
        "retries",
        "assumptions",
    }
    for value in (questions, answers, api.device):
        with pytest.raises((errors.SensitiveDataError, TypeError)):
            pickle.dumps(value)


def test_errors_do_not_echo_pii(api: kit.Client) -> None:
    customer = onboard(api)
    with pytest.raises(errors.ValidationError) as info:
        api.persons.create(
            customer.account_id,
            first_name="Zed",
            last_name="Quux",
            date_of_birth="2999-01-01",
            national_id="123-45-6789",
        )
    text = str(info.value) + repr(info.value.problem)
    assert "2999" not in text and "123-45-6789" not in text


def test_clear_text_pii_is_refused_by_the_server(api: kit.Client) -> None:
    customer = onboard(api)
    with pytest.raises(errors.PiiMustBeEncrypted):
        api._requestor.call(
            "POST",
            f"/accounts/{customer.account_id}/persons",
            json={"first_name": "Zed", "encrypted_pii": "x"},
        )
