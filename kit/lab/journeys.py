"""The onboarding journey, written once: anonymous session → account → account session →
person (PII sent encrypted) → KYC questions → KYC answers → person session.

The population simulation, the explorer, the walk, the tests and the benchmarks all onboard
through :func:`onboard` (or its second half, :func:`add_person`). Each step has a name
(:data:`ONBOARDING_STEPS`) and runs through ``step(name, fn, judge=None)``: the default runs
``fn`` and lets errors raise; a caller's own ``step`` may record, narrate or swallow errors —
a step that returns ``None`` ends the journey, and the result says how far it got.

Only the client's public API is used: ``api.sessions``, ``api.accounts``, ``api.persons``,
``api.kyc`` and, for personas and the right KYC answers, ``api.personas`` — where they come
from is the client's profile's business (:mod:`kit._profiles`): the simulator's control plane,
or a sandbox's published test personas and answers (the file named by
``PARTNER_API_SANDBOX_FIXTURES``), so the same journey runs without a control plane.

Example::

    >>> import kit
    >>> from kit.lab.journeys import onboard
    >>> with kit.connect("sim") as api:                   # doctest: +SKIP
    ...     done = onboard(api, persona=0, expiration="sliding")
    >>> done.status, done.person_id is not None           # doctest: +SKIP
    ('established', True)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from kit._client import Client
    from kit._fixtures import AnyPersona
    from kit.models import KycResult

__all__ = [
    "ONBOARDING_STEPS",
    "Onboarded",
    "Step",
    "add_person",
    "onboard",
    "run_step",
    "wrong_choices",
]

T = TypeVar("T")

#: The steps of :func:`onboard`, in order (the names a ``step`` hook is called with).
ONBOARDING_STEPS: tuple[str, ...] = (
    "anonymous_session",
    "create_account",
    "account_session",
    "add_person",
    "kyc_questions",
    "kyc_answers",
    "person_session",
)

#: ``step(name, fn, judge=None)``: runs ``fn()`` as the step ``name`` and returns its value,
#: or ``None`` to end the journey there. ``judge`` (given for ``kyc_answers``) turns a 2xx
#: answer into a business failure: it returns a code such as ``"kyc-failed"``, or ``None``.
Step = Callable[..., Any]

#: The status of a journey that ended before KYC said yes or no (or before the last promotion).
INCOMPLETE = "incomplete"


@dataclasses.dataclass(frozen=True)
class Onboarded:
    """How far one onboarding got.

    ``account_id`` is ``""`` when the journey ended before an account was created (only
    possible with a ``step`` that swallows errors); ``person_id`` is ``None`` until the person
    is added; ``status`` is ``"established"`` (KYC passed and, when asked, the person session
    opened), ``"failed"`` (KYC refused, attempts left), ``"locked"`` (KYC refused, none left)
    or ``"incomplete"`` (a step ended the journey).
    """

    account_id: str
    person_id: str | None
    status: str


def run_step(name: str, fn: Callable[[], T], judge: Callable[[T], str | None] | None = None) -> T:
    """The default ``step``: run ``fn`` and let its errors raise (``name`` and ``judge`` unused:
    a KYC refusal is told by the journey's status)."""
    return fn()


def _pii(
    api: Client, pii: Mapping[str, Any] | None, persona: int | str | None
) -> tuple[Mapping[str, Any], AnyPersona | None]:
    """The PII to onboard, and the persona it belongs to (where the answers need one)."""
    if pii is not None and persona is not None:
        raise ValueError("pass pii= or persona=, not both")
    if pii is not None:  # its answers: the caller's, or those of the published persona it matches
        return pii, api.personas.matching(pii)
    who = api.personas.get(persona) if persona is not None else api.personas.next()
    return who.pii, who


def wrong_choices(
    right: Iterable[Mapping[str, Any]], questions: list[dict[str, Any]]
) -> list[dict[str, str]]:
    """For every question another of the offered choices than the right one (a KYC refusal).

    Example::

        >>> wrong_choices([{"question_id": "q1", "choice": "1990"}],
        ...               [{"question_id": "q1", "choices": ["1988", "1990"]}])
        [{'question_id': 'q1', 'choice': '1988'}]
    """
    answers = [{"question_id": str(a["question_id"]), "choice": str(a["choice"])} for a in right]
    choices = {str(q.get("question_id")): [str(c) for c in q.get("choices") or []] for q in questions}
    for a in answers:
        others = [c for c in choices.get(a["question_id"], []) if c != a["choice"]]
        a["choice"] = others[0] if others else a["choice"] + "-wrong"
    return answers


def _answers(
    api: Client,
    person_id: str,
    questions: list[dict[str, Any]],
    answers: Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]] | None,
    wrong: bool,
    who: AnyPersona | None,
) -> Any:
    if answers is not None:
        right = answers(person_id, questions)
    else:
        published = api.personas.kyc_answers(person_id, questions, who)
        if not wrong:
            return published  # stays wrapped in Sensitive up to the encryption
        right = published.reveal()
    return wrong_choices(right, questions) if wrong else right


def _refused(result: KycResult) -> str | None:
    return None if result.status == "established" else "kyc-failed"


def _kyc_status(result: KycResult) -> str:
    if result.status == "established":
        return "established"
    return "locked" if result.attempts_left == 0 else "failed"


def add_person(
    api: Client,
    account_id: str,
    pii: Mapping[str, Any] | None = None,
    *,
    persona: int | str | None = None,
    answers: Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]] | None = None,
    wrong_answers: bool = False,
    step: Step | None = None,
) -> Onboarded:
    """The person half of :func:`onboard`, in an account session that is already open:
    ``add_person`` → ``kyc_questions`` → ``kyc_answers`` (no promotion).

    Arguments as for :func:`onboard`.

    Raises:
        ValueError: both ``pii`` and ``persona``.
        KitError: a step failed (with the default ``step``).
    """
    run = step or run_step
    details, who = _pii(api, pii, persona)
    person = run("add_person", lambda: api.persons.create(account_id, **details))
    if person is None:
        return Onboarded(account_id, None, INCOMPLETE)
    person_id = person.person_id
    questions = run("kyc_questions", lambda: api.kyc.questions(person_id))
    if questions is None:
        return Onboarded(account_id, person_id, INCOMPLETE)
    chosen = _answers(api, person_id, questions.reveal(), answers, wrong_answers, who)
    result = run("kyc_answers", lambda: api.kyc.answer(person_id, chosen), judge=_refused)
    if result is None:
        return Onboarded(account_id, person_id, INCOMPLETE)
    return Onboarded(account_id, person_id, _kyc_status(result))


def onboard(
    api: Client,
    pii: Mapping[str, Any] | None = None,
    *,
    persona: int | str | None = None,
    answers: Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]] | None = None,
    wrong_answers: bool = False,
    promote_to_person: bool = True,
    expiration: str = "fixed",
    step: Step | None = None,
) -> Onboarded:
    """Onboard one customer on ``api`` (one device), step by step (:data:`ONBOARDING_STEPS`).

    - ``pii``: the person's PII (``first_name``, ``last_name``, ``date_of_birth``,
      ``national_id``; plain or Sensitive). Default: ``api.personas.next()``, this client's
      next persona (the register's; on a sandbox, the fixtures file's).
    - ``persona``: instead of ``pii``, a persona (index or ``persona_id``):
      ``api.personas.get`` — the simulator's, fetched through ``api.sim.persona`` just before
      the person is added; on a sandbox, the fixtures file's.
    - ``answers(person_id, questions)``: the KYC answers to send; default:
      ``api.personas.kyc_answers`` (the simulator's right answers, or the fixtures persona's).
    - ``wrong_answers``: answer every question wrong on purpose (one refused attempt).
    - ``promote_to_person``: open the person session once KYC passed.
    - ``expiration``: the anonymous session's strategy (the promotions keep it).
    - ``step``: runs each step (see :data:`Step`); default :func:`run_step`.

    Example::

        >>> done = onboard(api, persona=1, wrong_answers=True)   # doctest: +SKIP
        >>> done.status                                           # doctest: +SKIP
        'failed'

    Raises:
        ValueError: both ``pii`` and ``persona``.
        FixturesError: (sandbox) no fixtures file, no such persona, or no answer to a question.
        KitError: a step failed (with the default ``step``; a KYC refusal is a status).
    """
    run = step or run_step
    if run("anonymous_session", lambda: api.sessions.create("anonymous", expiration=expiration)) is None:
        return Onboarded("", None, INCOMPLETE)
    account = run("create_account", api.accounts.create)
    if account is None:
        return Onboarded("", None, INCOMPLETE)
    account_id = account.account_id
    if run("account_session", lambda: api.sessions.promote("account", account_id=account_id)) is None:
        return Onboarded(account_id, None, INCOMPLETE)
    done = add_person(
        api, account_id, pii, persona=persona, answers=answers, wrong_answers=wrong_answers, step=run
    )
    if done.status != "established" or not promote_to_person:
        return done
    person_id = done.person_id
    if run("person_session", lambda: api.sessions.promote("person", person_id=person_id)) is None:
        return dataclasses.replace(done, status=INCOMPLETE)
    return done
