"""Document requests: listed per person, completed with an encrypted document."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kit._resources._base import Resource
from kit._sensitive import reveal
from kit.models import DocumentRequest

__all__ = ["DocumentRequests"]


class DocumentRequests(Resource):
    """``api.document_requests``."""

    def list(self, person_id: str) -> list[DocumentRequest]:
        """The person's document requests (open and completed).

        Raises:
            SessionRequired, SessionNotBound, PersonNotFound.
        """
        reply = self._requestor.send("list_document_requests", {"person_id": person_id})
        items = (reply.body or {}).get("document_requests") or []
        return [DocumentRequest.from_wire(item) for item in items]

    def submit(
        self,
        document_request_id: str,
        *,
        document: Mapping[str, Any],
        idempotency_key: str | None = None,
    ) -> DocumentRequest:
        """Complete a request with a document (any JSON object), sent encrypted.

        Example::

            >>> api.document_requests.submit(dr_id, document={"kind": "utility_bill"})  # doctest: +SKIP

        Raises:
            DocumentRequestNotOpen: it was completed already.
        """
        reply = self._requestor.send(
            "submit_document",
            {"document_request_id": document_request_id},
            json=self._requestor.sealed("submit_document", dict(reveal(document))),
            idempotency_key=idempotency_key,
        )
        return DocumentRequest.from_wire(reply.body or {})
