"""Onboarding and KYC: accounts, persons (PII only encrypted), KYC questions and answers.

The spec names the flow ("End user progresses through account creation"), not the operations:
the paths and shapes here are assumptions A10-A12. The anonymous session of the device that
created an account may add a person to it ("onboarding a new account or person", A42).
"""

from __future__ import annotations

import calendar
from datetime import date

from starlette.requests import Request
from starlette.responses import Response

from kit import register
from kit.sim.bodies import (
    AccountCreate,
    KycAnswersCreate,
    KycAnswersPlaintext,
    KycQuestionsOut,
    KycResult,
    PersonCreate,
    PiiPlaintext,
)
from kit.sim.call import Call, RouteReply
from kit.sim.ids import Ids
from kit.sim.openapi import declare
from kit.sim.pipeline import run
from kit.sim.problems import Problem
from kit.sim.records import Account, Person
from kit.sim.representations import AccountOut, PersonOut
from kit.sim.state import Session
from kit.sim.table import Routes

router = Routes(tags=["onboarding and KYC"])
_ACCOUNT = register.value("A10")
_KYC = register.value("A12")
PRODUCTS: list[str] = _ACCOUNT["products"]
MAX_FAILED = int(_KYC["max_failed_attempts"])
#: The texts of the three questions: birth year, birth month, last two digits of the national id.
YEAR_TEXT, MONTH_TEXT, NATIONAL_ID_TEXT = _KYC["question_texts"]


@declare(
    router,
    "create_account",
    AccountOut,
    status=201,
    takes=AccountCreate,
    errors=(403,),
    summary="Create an account (anonymous session); binds the device to it",
)
async def create_account(request: Request) -> Response:
    def handle(call: Call) -> RouteReply:
        session = call.require_session("anonymous")
        req = call.body_as(AccountCreate, {"product": ("unknown-product", PRODUCTS)}, uses=("A10",))
        account = Account(
            account_id=call.state.ids.next("acc"),
            partner=call.partner,
            product=req.product,
            balance=call.sim.starting_balance,
            created_at=call.now,
            created_by=session.device,
        )
        account.bound_devices.add(session.device)
        account.device_keys[session.device] = session.device_key
        call.state.accounts[account.account_id] = account
        call.uses("A09", "A19")  # the device is bound to it; the balance is money
        return RouteReply(201, call.sim.show(AccountOut, account))

    return await run(request, handle)


def _questions(ids: Ids, person_id: str, born: date, national_id: str) -> tuple[list[dict], dict]:
    """Three questions answerable from the PII; choices drawn from the random seed (A12)."""
    rng = ids.rng("kyc", person_id)
    per = int(_KYC["choices_per_question"])
    years = sorted({born.year, *rng.sample([born.year + d for d in range(-8, 9) if d], per - 1)})
    months = list(calendar.month_name)[1:]
    month_choices = sorted({born.month, *rng.sample([m for m in range(1, 13) if m != born.month], per - 1)})
    digits = "".join(ch for ch in national_id if ch.isdigit()).rjust(2, "0")[-2:]
    others = rng.sample([f"{n:02d}" for n in range(100) if f"{n:02d}" != digits], per - 1)
    questions = [
        {
            "question_id": "birth_year",
            "text": YEAR_TEXT,
            "choices": [str(y) for y in years],
        },
        {
            "question_id": "birth_month",
            "text": MONTH_TEXT,
            "choices": [months[m - 1] for m in month_choices],
        },
        {
            "question_id": "national_id_last2",
            "text": NATIONAL_ID_TEXT,
            "choices": sorted([digits, *others]),
        },
    ]
    answers = {
        "birth_year": str(born.year),
        "birth_month": months[born.month - 1],
        "national_id_last2": digits,
    }
    return questions, answers


def _bound_for_onboarding(call: Call, session: Session, account: Account) -> None:
    """Step 8 for adding a person: an account or person session bound to the account, or the
    anonymous session of the device that created it (A42); else 403 ``session-not-bound``."""
    if session.session_type != "anonymous":
        call.require_bound_to_account(account)
        return
    call.uses("A31", "A42")
    if account.created_by != session.device:
        raise Problem(
            403,
            "session-not-bound",
            "An anonymous session may add a person only to the account its own device created.",
            assumptions=("A31", "A42"),
        )


@declare(
    router,
    "create_person",
    PersonOut,
    status=201,
    takes=PersonCreate,
    errors=(403, 404),
    summary="Add a person to an account; PII only inside encrypted_pii",
)
async def create_person(request: Request, account_id: str) -> Response:
    def handle(call: Call) -> RouteReply:
        session = call.require_session("anonymous", "account", "person")
        account = call.find_account(account_id)
        _bound_for_onboarding(call, session, account)
        req = call.body_as(PersonCreate, uses=("A11",))
        pii = call.decrypt_as(req.encrypted_pii, PiiPlaintext, uses=("A11",))
        try:
            born = date.fromisoformat(pii.date_of_birth)
        except ValueError:
            born = None
        if born is None or born >= call.now.date():
            raise call.plaintext_problem("/date_of_birth: must be a past date (YYYY-MM-DD)")
        person_id = call.state.ids.next("per")
        questions, answers = _questions(call.state.ids, person_id, born, pii.national_id)
        # Only the derived questions and answers are kept, never the PII itself.
        person = Person(person_id, call.partner, account.account_id, call.now, questions, answers)
        call.state.persons[person_id] = person
        return RouteReply(201, PersonOut.wire(person))

    return await run(request, handle)


def _locked() -> Problem:
    return Problem(
        409,
        "kyc-locked",
        f"KYC is locked after {MAX_FAILED} failed attempts; the person cannot be verified online.",
        assumptions=("A12",),
    )


def _kyc_person(call: Call, person_id: str) -> tuple[Session, Person]:
    """Steps 6-8 of both KYC routes: an account or person session bound to the person (A31, A43)."""
    session = call.require_session("account", "person")
    person = call.find_person(person_id)
    call.require_bound_to_person(person)
    return session, person


@declare(
    router,
    "kyc_questions",
    KycQuestionsOut,
    errors=(403, 404, 409),
    summary="KYC identity questions, encrypted to the session's device key",
)
async def kyc_questions(request: Request, person_id: str) -> Response:
    def handle(call: Call) -> RouteReply:
        session, person = _kyc_person(call, person_id)
        if person.status == "locked":
            raise _locked()
        call.uses("A12")
        return RouteReply(200, call.sealed_answer(session.device_key, {"questions": person.questions}))

    return await run(request, handle)


@declare(
    router,
    "kyc_answers",
    KycResult,
    takes=KycAnswersCreate,
    errors=(403, 404),
    summary="Submit KYC answers, encrypted to the server key",
)
async def kyc_answers(request: Request, person_id: str) -> Response:
    def handle(call: Call) -> RouteReply:
        _, person = _kyc_person(call, person_id)
        req = call.body_as(KycAnswersCreate, uses=("A12",))
        plain = call.decrypt_as(req.encrypted_answers, KycAnswersPlaintext, uses=("A12",))
        given = [a.question_id for a in plain.answers]
        if sorted(given) != sorted(person.answers):
            raise call.plaintext_problem("/answers: answer each question_id of the questions exactly once")
        if person.status == "locked":
            raise _locked()
        if person.status != "established":
            if all(person.answers[a.question_id] == a.choice for a in plain.answers):
                person.status = "established"
            else:
                person.failed_attempts += 1
                if person.failed_attempts >= MAX_FAILED:
                    person.status = "locked"
        status = "established" if person.status == "established" else "failed"
        return RouteReply(
            200,
            {
                "person_id": person.person_id,
                "status": status,
                "attempts_left": max(0, MAX_FAILED - person.failed_attempts),
            },
        )

    return await run(request, handle)
