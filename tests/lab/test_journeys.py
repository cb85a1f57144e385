"""The onboarding journey (``kit.lab.journeys``) on the embedded simulator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import kit
from kit import register
from kit.errors import KitError, SessionRequired
from kit.lab.journeys import ONBOARDING_STEPS, Onboarded, add_person, onboard


def test_the_established_path(make_client: Callable[..., kit.Client]) -> None:
    api = make_client()
    done = onboard(api, persona=0)
    assert isinstance(done, Onboarded) and done.status == "established"
    assert done.account_id.startswith("acc_") and done.person_id is not None
    assert api.session is not None and api.session.session_type == "person"
    assert api.session.person_id == done.person_id
    assert api.session.expiration_strategy == "fixed"
    # Every step is one partner call, plus the control plane's persona and right answers.
    paths = [e.path for e in api.calls.entries()]
    assert "/_sim/personas" in paths and f"/_sim/persons/{done.person_id}/kyc_answers" in paths


def test_pii_from_the_register_by_default_or_given(make_client: Callable[..., kit.Client]) -> None:
    first, second = onboard(make_client()), onboard(make_client(), expiration="sliding")
    assert first.status == second.status == "established" and first.person_id != second.person_id
    persona = register.personas()[0]
    pii = {name: persona[name] for name in ("first_name", "last_name", "date_of_birth", "national_id")}
    assert onboard(make_client(), pii, promote_to_person=False).status == "established"


def test_a_kyc_refusal_is_a_status_not_an_error(make_client: Callable[..., kit.Client]) -> None:
    api = make_client()
    done = onboard(api, persona=1, wrong_answers=True)
    assert done.status == "failed" and done.person_id is not None
    assert api.session is not None and api.session.session_type == "account"
    # One refused attempt: the person's right answers still pass.
    assert api.kyc.answer(done.person_id, api.sim.kyc_answers(done.person_id)).status == "established"


def test_answers_can_come_from_elsewhere(make_client: Callable[..., kit.Client]) -> None:
    api = make_client()
    given: list[tuple[str, int]] = []

    def sandbox_answers(person_id: str, questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        given.append((person_id, len(questions)))
        return list(api.sim.kyc_answers(person_id).reveal())

    done = onboard(api, persona=2, answers=sandbox_answers)
    assert done.status == "established" and given == [(done.person_id, 3)]


def test_the_step_hook_sees_every_step_in_order(make_client: Callable[..., kit.Client]) -> None:
    seen: list[tuple[str, bool]] = []

    def step(name: str, fn: Callable[[], Any], judge: Callable[[Any], str | None] | None = None) -> Any:
        value = fn()
        seen.append((name, judge is not None and judge(value) is None))
        return value

    assert onboard(make_client(), persona=0, step=step).status == "established"
    assert [name for name, _ in seen] == list(ONBOARDING_STEPS)
    assert [name for name, passed in seen if passed] == ["kyc_answers"]


def test_a_step_returning_none_ends_the_journey(make_client: Callable[..., kit.Client]) -> None:
    api = make_client()
    seen: list[str] = []

    def step(name: str, fn: Callable[[], Any], judge: Any = None) -> Any:
        seen.append(name)
        try:
            return fn()
        except KitError:
            return None

    api.sim.add_fault("POST", "/accounts/{account_id}/persons", status=503, rate=1.0)
    try:
        done = onboard(api, persona=0, step=step)
    finally:
        api.sim.clear_faults()
    assert done == Onboarded(done.account_id, None, "incomplete") and done.account_id.startswith("acc_")
    assert seen == list(ONBOARDING_STEPS[:4])


def test_the_default_step_lets_errors_raise(make_client: Callable[..., kit.Client]) -> None:
    api = make_client()
    with pytest.raises(SessionRequired):
        add_person(api, "acc_00000000000000000000", persona=0)
    with pytest.raises(ValueError, match="not both"):
        onboard(api, {"first_name": "x"}, persona=0)
