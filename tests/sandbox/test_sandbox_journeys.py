"""The whole journey on the sandbox profile, without a control plane: personas and KYC answers
from the fixtures file, checks that need the simulator reported skipped, and no drift."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import kit
from kit import notebook
from kit.errors import FixturesError, NotAvailable
from kit.lab.journeys import onboard
from kit.notebook import check


def test_onboarding_takes_personas_and_answers_from_the_fixtures(connect: Callable[..., kit.Client]) -> None:
    api = connect()
    done = onboard(api, persona="persona-03", expiration="sliding")
    assert done.status == "established" and done.person_id is not None and done.person_id.startswith("per_")
    assert api.session is not None and api.session.session_type == "person"
    other = connect()
    assert onboard(other).status == "established"  # this client's next fixtures persona, by default
    assert api.drift.empty and other.drift.empty
    with pytest.raises(NotAvailable):
        api.sim  # noqa: B018 — no control plane on a sandbox


def test_wrong_answers_and_pii_without_a_fixtures_persona(connect: Callable[..., kit.Client]) -> None:
    api = connect()
    assert onboard(api, persona=2, wrong_answers=True).status == "failed"  # three published personas
    stranger = {
        "first_name": "Nora",
        "last_name": "Nobody",
        "date_of_birth": "1990-01-01",
        "national_id": "1-2",
    }
    with pytest.raises(FixturesError, match="no sandbox fixtures persona has this PII"):
        onboard(connect(), stranger)


def test_notebook_helpers_give_the_same_persona_on_both_profiles(connect: Callable[..., kit.Client]) -> None:
    with kit.connect("sim") as sim:
        sim_who = sim.sim.persona("persona-02")
    api = connect()
    who = notebook.persona(api, "persona-02")
    assert who.persona_id == sim_who.persona_id
    assert {k: v.reveal() for k, v in who.pii.items()} == {k: v.reveal() for k, v in sim_who.pii.items()}
    api.sessions.create("anonymous")
    account = api.accounts.create()
    api.sessions.promote("account", account_id=account.account_id)
    person = api.persons.create(account.account_id, **who.pii)
    questions = api.kyc.questions(person.person_id)
    answers = notebook.kyc_answers(api, person.person_id, questions, who=who)
    assert api.kyc.answer(person.person_id, answers).status == "established"
    with pytest.raises(FixturesError, match="who="):
        notebook.kyc_answers(api, person.person_id, questions)


def test_a_check_that_needs_the_control_plane_is_skipped_with_its_reason(
    connect: Callable[..., kit.Client], capsys: pytest.CaptureFixture[str]
) -> None:
    api = connect()
    ran: list[str] = []
    with check("jwks answer on the sandbox") as c:
        c.expect_true(api.webhooks.jwks().get("keys"), "the JWK set has keys", got="none", want="keys")

    @check("clock travel expires the session", needs="control plane")
    def _() -> None:
        ran.append("clock")

    assert ran == []
    last = notebook.results()[-2:]
    assert [(o.name, o.outcome) for o in last] == [
        ("jwks answer on the sandbox", "passed"),
        ("clock travel expires the session", "skipped"),
    ]
    assert "control plane" in last[1].reason
    assert "⊘ check skipped: clock travel expires the session — needs the simulator's control plane" in (
        capsys.readouterr().out
    )


def test_the_same_check_runs_on_the_sim_profile() -> None:
    with notebook.connect("sim") as api:
        ran: list[str] = []

        @check("clock travel moves the clock", needs="control plane")
        def _() -> None:
            before = api.sim.clock()
            ran.append(str(api.sim.advance(60) - before))
            notebook.expect(ran, ["0:01:00"], what="how far the clock moved", show=True)

        assert ran == ["0:01:00"] and notebook.results()[-1].outcome == "passed"
