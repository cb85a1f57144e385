"""08's replay demonstration: ``kit.notebook.local_app``'s ``send_again`` sends the delivery the
app accepted once more, with the headers it came with (a replay), or with another body under the
same signature (a forgery), and returns what the app answered; the app records each answer."""

from __future__ import annotations

import hashlib
import json

import httpx
import pytest

from kit.notebook import local_app


def _signing_app():  # type: ignore[no-untyped-def]
    """A stand-in receiver: ``x-sig`` must be the body's sha256 (else 400), an id seen is 409."""
    seen: set[str] = set()

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        event = json.loads(body)["id"]
        if headers.get("x-sig") != hashlib.sha256(body).hexdigest():
            status = 400
        elif event in seen:
            status = 409
        else:
            seen.add(event)
            status = 204
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    return app


def test_a_delivery_sent_again_is_a_replay_and_with_another_body_a_forgery() -> None:
    body = json.dumps({"id": "evt_1", "data": {"close_reason": "lost"}}).encode()
    signed = {"x-sig": hashlib.sha256(body).hexdigest(), "content-type": "application/json"}
    with local_app(_signing_app()) as running:
        with pytest.raises(LookupError):
            running.send_again()  # nothing accepted yet: nothing to send again
        assert httpx.post(running.url, content=body, headers=signed, timeout=10).status_code == 204
        running.wait(1)
        assert running.last_body == body
        replayed = running.send_again()
        # a longer body: sent with its own Content-Length, not the delivery's
        forged = running.send_again(body=running.last_body.replace(b'"lost"', b'"stolen"'))
        changed = running.send_again(body=running.last_body.replace(b'"lost"', b'"Lost"'))
    assert (replayed, forged, changed) == (409, 400, 400)
    assert running.answers == [{"event": "evt_1", "answer": a} for a in (204, 409, 400, 400)]
    assert running.last_body == body, "a refused copy does not replace the accepted delivery"


def test_about_records_and_sends_again_only_the_deliveries_about_its_resource() -> None:
    def delivery(event: str, card: str) -> tuple[bytes, dict[str, str]]:
        # a sandbox's own member names: the id is found among the values, whatever its name
        body = json.dumps({"id": event, "data": {"cardId": card, "closeReason": "lost"}}).encode()
        return body, {"x-sig": hashlib.sha256(body).hexdigest(), "content-type": "application/json"}

    mine, other = delivery("evt_mine", "crd_mine"), delivery("evt_other", "crd_other")
    with local_app(_signing_app(), about="crd_mine") as running:
        answered = [
            httpx.post(running.url, content=b, headers=h, timeout=10).status_code for b, h in (mine, other)
        ]
        running.wait(1)
        replayed = running.send_again()  # the delivery about crd_mine, though another came after it
        late = httpx.post(running.url, content=other[0], headers=other[1], timeout=10).status_code
    assert (answered, replayed, late) == ([204, 204], 409, 409)  # the app answers every request
    assert running.answers == [{"event": "evt_mine", "answer": a} for a in (204, 409)]
    assert running.last_body == mine[0]
