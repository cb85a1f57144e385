"""Requests on the partner API's resources, each the way an independent client sends it:
accounts, persons and KYC (PII and answers encrypted), cards, document submissions."""

from __future__ import annotations

from typing import Any

import httpx

from tests.sim.helpers.encryption import Device, encrypt_for_server
from tests.sim.helpers.wire import call, init_data


def post_encrypted(
    http: httpx.Client,
    token: str,
    session: str | None,
    path: str,
    field: str,
    payload: Any,
    alg: str = "RSA-OAEP-256",
) -> httpx.Response:
    """``POST path`` with ``{field: JWE of payload}``, encrypted to fresh init data's key for ``alg``."""
    init = init_data(http, token)
    body = {field: encrypt_for_server(init, payload, alg)}
    return call(http, "POST", path, token=token, session=session, json_body=body)


def create_account_request(
    http: httpx.Client, token: str, session: str | None, product: Any = "spending", *, idem: str | None = None
) -> httpx.Response:
    """``POST /accounts`` with ``{"product": product}``."""
    return call(
        http, "POST", "/accounts", token=token, session=session, idem=idem, json_body={"product": product}
    )


def create_account(http: httpx.Client, token: str, anonymous: str, **kw: Any) -> dict[str, Any]:
    resp = create_account_request(http, token, anonymous, **kw)
    assert resp.status_code == 201, resp.text
    return resp.json()


def pii_of(persona: dict[str, Any]) -> dict[str, str]:
    return {k: persona[k] for k in ("first_name", "last_name", "date_of_birth", "national_id")}


def create_person(
    http: httpx.Client,
    token: str,
    session: str | None,
    account_id: str,
    pii: dict[str, Any],
    alg: str = "RSA-OAEP-256",
) -> httpx.Response:
    return post_encrypted(http, token, session, f"/accounts/{account_id}/persons", "encrypted_pii", pii, alg)


def kyc_questions(
    http: httpx.Client, token: str, session: str, person_id: str, device: Device
) -> list[dict[str, Any]]:
    resp = call(http, "GET", f"/persons/{person_id}/kyc/questions", token=token, session=session)
    assert resp.status_code == 200, resp.text
    return device.decrypt(resp.json()["encrypted_questions"])["questions"]


def send_answers(
    http: httpx.Client, token: str, session: str, person_id: str, answers: list[dict[str, Any]]
) -> httpx.Response:
    path = f"/persons/{person_id}/kyc/answers"
    return post_encrypted(http, token, session, path, "encrypted_answers", {"answers": answers})


def wrong_answers(questions: list[dict[str, Any]], right: list[dict[str, Any]]) -> list[dict]:
    """For every question a choice among its choices that is not the right one."""
    right_by_q = {a["question_id"]: a["choice"] for a in right}
    out = []
    for q in questions:
        choice = next(c for c in q["choices"] if c != right_by_q[q["question_id"]])
        out.append({"question_id": q["question_id"], "choice": choice})
    return out


def card_request(
    http: httpx.Client,
    token: str,
    account_id: str,
    card_type: Any = "physical",
    *,
    session: str | None = None,
    idem: str | None = None,
) -> httpx.Response:
    """``POST /accounts/{account_id}/cards`` with ``{"type": card_type}``."""
    path = f"/accounts/{account_id}/cards"
    return call(http, "POST", path, token=token, session=session, idem=idem, json_body={"type": card_type})


def create_card(
    http: httpx.Client, token: str, account_id: str, card_type: str = "physical", session: str | None = None
) -> dict[str, Any]:
    resp = card_request(http, token, account_id, card_type, session=session)
    assert resp.status_code == 201, resp.text
    return resp.json()


def close_card(
    http: httpx.Client, token: str, card_id: str, body: Any = None, *, session: str | None = None
) -> httpx.Response:
    """``POST /cards/{card_id}/close`` with ``body`` (none when None)."""
    return call(http, "POST", f"/cards/{card_id}/close", token=token, session=session, json_body=body)


def send_event(
    http: httpx.Client, token: str, account_id: str, body: Any, *, session: str | None = None
) -> httpx.Response:
    """``POST /accounts/{account_id}/events`` with ``body``."""
    return call(http, "POST", f"/accounts/{account_id}/events", token=token, session=session, json_body=body)


def list_documents(
    http: httpx.Client, token: str, person_id: str, session: str | None = None
) -> httpx.Response:
    """``GET /persons/{person_id}/document_requests``."""
    return call(http, "GET", f"/persons/{person_id}/document_requests", token=token, session=session)


def submit_document(
    http: httpx.Client, token: str, session: str | None, doc_id: str, document: Any
) -> httpx.Response:
    """``POST /document_requests/{doc_id}/submit`` with ``document`` encrypted to the server."""
    path = f"/document_requests/{doc_id}/submit"
    return post_encrypted(http, token, session, path, "encrypted_document", document)
