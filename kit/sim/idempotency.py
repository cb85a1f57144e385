"""Idempotency (A20, step 4 of the order of checks): the record that keeps a POST's answer for
its retries, the answer replayed, the key released when the request is refused.

A key used for another request is 422 ``idempotency-key-reused``, one still in flight 409
``idempotency-key-in-use``; without a key where the route requires one, 400. A replay repeats
the stored answer's status, body (opened, when it was sealed) and ``svc-*`` headers.
"""

from __future__ import annotations

from typing import Literal

from starlette.responses import Response

from kit import register
from kit.sim.asgi import first
from kit.sim.call import Call
from kit.sim.headers import ASSUMPTIONS, IDEMPOTENCY_KEY, REPLAYED, REQUEST_ID
from kit.sim.problems import Problem
from kit.sim.state import IdempotencyRecord, body_digest

IDEMPOTENCY_RETENTION = int(register.value("A20")["retention_seconds"])
MAX_IDEMPOTENCY_KEY = int(register.value("A47")["idempotency_key_max_chars"])
#: ``run(idempotency=…)``: a POST may carry the key, must carry it, or the route has none.
Idempotency = Literal["optional", "required", "none"]
_IDEMPOTENCY_KEY = IDEMPOTENCY_KEY.lower().encode("latin-1")


def idempotency_record(call: Call, policy: Idempotency) -> IdempotencyRecord | Response | None:
    """The record that will keep this POST's answer, a stored answer to replay, or None (A20).

    A key used for another request is 422 ``idempotency-key-reused``, one still in flight 409
    ``idempotency-key-in-use``; without a key where the route requires one, 400.
    """
    request = call.request
    if request.method != "POST" or policy == "none":
        return None
    key = first(request.scope, _IDEMPOTENCY_KEY)
    if key is not None or policy == "required":
        call.assumptions.add("A20")
    if key is None:
        if policy == "required":
            raise Problem(
                400,
                "idempotency-key-required",
                f"This endpoint requires an {IDEMPOTENCY_KEY} header (a new unique value per "
                "operation, the same on its retries).",
            )
        return None
    if not key or len(key) > MAX_IDEMPOTENCY_KEY:
        raise Problem(
            400, "idempotency-key-invalid", f"An {IDEMPOTENCY_KEY} has 1 to {MAX_IDEMPOTENCY_KEY} characters."
        )
    state = call.state
    record = state.idempotency.get((call.partner, key))
    if record is not None and (state.now - record.created_at).total_seconds() >= IDEMPOTENCY_RETENTION:
        del state.idempotency[(call.partner, key)]
        record = None
    path = request.url.path
    if record is None:
        record = IdempotencyRecord(request.method, path, body_digest(call.body), state.now)
        state.idempotency[(call.partner, key)] = record
        return record
    if record.in_flight:
        raise Problem(
            409,
            "idempotency-key-in-use",
            f"A request with this {IDEMPOTENCY_KEY} is still being processed; retry shortly.",
            headers={"Retry-After": "1"},
        )
    if record.method != request.method or record.path != path or record.body != body_digest(call.body):
        raise Problem(
            422,
            "idempotency-key-reused",
            f"This {IDEMPOTENCY_KEY} was used for another request; use a new key for a new request.",
        )
    body = state.sealer.open(record.response_body) if record.sealed_by else record.response_body
    return Response(
        content=body,
        status_code=record.status,
        headers={**record.headers, REPLAYED: "true"},
    )


def release(call: Call, record: IdempotencyRecord | None) -> None:
    """Forget the key of a refused request: it may be used again."""
    if record is not None:
        call.state.idempotency.pop((call.partner, call.request.headers[IDEMPOTENCY_KEY]), None)


def store(call: Call, record: IdempotencyRecord, response: Response, *, sealed: bool = False) -> None:
    """Keep the answer for replays: status, body (``sealed``: under the server's key, for an
    answer carrying a clear token) and the ``svc-*`` headers (A20)."""
    record.in_flight = False
    record.status = response.status_code
    body = bytes(response.body)
    if sealed:
        sealer = call.state.sealer
        body, record.sealed_by = sealer.seal(body), sealer.key_id
    record.response_body = body
    record.headers = {
        k: v for k, v in response.headers.items() if k.startswith("svc-") or k == "content-type"
    }
    # These two are added on the way out by ServiceHeaders; a replay repeats the original's.
    record.headers[REQUEST_ID] = call.request.state.request_id
    record.headers[ASSUMPTIONS] = ",".join(sorted(call.assumptions))
