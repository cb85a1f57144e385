"""Document requests: listed and submitted by the customer (A26).

They are created through the control plane, standing in for the service's own follow-up.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from kit.sim.bodies import DocumentRequestList, DocumentSubmit
from kit.sim.call import Call, RouteReply
from kit.sim.openapi import declare
from kit.sim.pipeline import run
from kit.sim.problems import Problem, not_found
from kit.sim.representations import DocumentRequestOut
from kit.sim.table import Routes

router = Routes(tags=["document requests"])


@declare(
    router,
    "list_document_requests",
    DocumentRequestList,
    errors=(403, 404),
    summary="List a person's document requests",
)
async def list_document_requests(request: Request, person_id: str) -> Response:
    def handle(call: Call) -> RouteReply:
        call.require_session("account", "person")
        call.bound_account(call.find_person(person_id).account_id)
        docs = [d for d in call.state.document_requests.values() if d.person_id == person_id]
        call.uses("A26")
        return RouteReply(200, {"document_requests": [call.sim.show(DocumentRequestOut, d) for d in docs]})

    return await run(request, handle)


@declare(
    router,
    "submit_document",
    DocumentRequestOut,
    takes=DocumentSubmit,
    errors=(403, 404),
    summary="Submit the requested document (encrypted); emits document_request.completed",
)
async def submit_document(request: Request, document_request_id: str) -> Response:
    def handle(call: Call) -> RouteReply:
        call.require_session("account", "person")
        doc = call.state.document_requests.get(document_request_id)
        if doc is None or doc.partner != call.partner:
            raise not_found("document-request", "A30", "A26")
        call.bound_account(doc.account_id)
        req = call.body_as(DocumentSubmit, uses=("A26",))
        call.decrypt(req.encrypted_document)  # content is not kept
        if doc.status != "open":
            raise Problem(
                409,
                "document-request-not-open",
                "This document request is already completed.",
                assumptions=("A26",),
            )
        doc.status, doc.completed_at = "completed", call.now
        call.emit("document_request.completed", call.sim.show(DocumentRequestOut, doc))
        return RouteReply(200, call.sim.show(DocumentRequestOut, doc))

    return await run(request, handle)
