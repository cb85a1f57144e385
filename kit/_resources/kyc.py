"""KYC questions and answers: secure data both ways."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kit._resources._base import Resource
from kit._sensitive import Sensitive, reveal
from kit.models import KycResult

__all__ = ["Kyc"]

Answers = Mapping[str, str] | Iterable[Mapping[str, str]] | Sensitive[Any]


def _normalize(answers: Answers) -> list[dict[str, str]]:
    value = reveal(answers)
    if isinstance(value, Mapping) and "answers" in value:
        value = value["answers"]
    if isinstance(value, Mapping):
        return [{"question_id": str(k), "choice": str(v)} for k, v in value.items()]
    return [{"question_id": str(a["question_id"]), "choice": str(a["choice"])} for a in value]


class Kyc(Resource):
    """``api.kyc``."""

    def questions(self, person_id: str) -> Sensitive[list[dict[str, Any]]]:
        """The person's KYC questions, decrypted with the device key, wrapped in Sensitive.

        ``.reveal()`` gives ``[{"question_id", "text", "choices": [...]}]``; the ciphertext is
        not kept (spec rule 4).

        Example::

            >>> qs = api.kyc.questions(person.person_id)    # doctest: +SKIP
            >>> len(qs.reveal())                              # doctest: +SKIP
            3

        Raises:
            SessionNotBound, KycLocked, PersonNotFound; CryptoError for a bad JWE.
        """
        reply = self._requestor.send("kyc_questions", {"person_id": person_id})
        decrypted = self._requestor.opened("kyc_questions", reply.body or {}, label="kyc_questions")
        questions = decrypted.get("questions") if isinstance(decrypted, dict) else None
        return Sensitive(list(questions or []), label="kyc_questions")

    def answer(self, person_id: str, answers: Answers, *, idempotency_key: str | None = None) -> KycResult:
        """Submit answers, encrypted: a list of ``{question_id, choice}`` or a mapping.

        Example::

            >>> api.kyc.answer(pid, api.sim.kyc_answers(pid)).status   # doctest: +SKIP
            'established'

        Raises:
            ValidationError: not exactly one answer per question (no attempt counted).
            KycLocked: three attempts failed before.
        """
        payload = {"answers": _normalize(answers)}
        reply = self._requestor.send(
            "kyc_answers",
            {"person_id": person_id},
            json=self._requestor.sealed("kyc_answers", payload),
            idempotency_key=idempotency_key,
        )
        return KycResult.from_wire(reply.body or {})
