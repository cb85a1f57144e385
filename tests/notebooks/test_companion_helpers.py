"""What moved out of the notebooks into the companion: 14's table of error families
(``kit.notebook.error_families``), 08's demonstration server (``kit.notebook.local_app``), and
the wire view's text, which a stored output keeps (at most 2,000 characters)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest

import kit._wire
from kit import errors
from kit._wire_view import TEXT_LIMIT, WireView
from kit.notebook import error_families, local_app
from kit.notebook.catalogue import SIMULATOR_ONLY, SIMULATOR_ONLY_CODES, WHAT_TO_DO, family


def test_every_family_has_what_a_back_end_does_and_simulator_only_ones_stand_apart() -> None:
    table = error_families()
    families = {family(cls).__name__ for cls in errors.by_code.values()}
    assert set(table.frame.index) | set(table.simulator_only) == families
    assert not set(table.frame.index) & set(SIMULATOR_ONLY)
    assert all(WHAT_TO_DO[name] for name in families), "a family without advice"
    assert list(table.frame["what a back end does"]) == [WHAT_TO_DO[n] for n in table.frame.index]


def test_the_token_endpoints_errors_are_told_by_their_class_not_by_an_underscore(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """RFC 6749 errors are the OAuthError family's, their statuses the RFC's: a problem code with
    an underscore is not one."""

    class SpelledWithUnderscore(errors.ValidationError):
        """A problem code another server might spell with an underscore."""

    monkeypatch.setitem(errors.by_code, "unknown_widget", SpelledWithUnderscore)
    families = error_families()
    table = families.frame
    assert table.loc["OAuthError", "status"] == "400/401 (RFC 6749)"
    assert not table.drop(index="OAuthError")["status"].str.contains("RFC 6749").any()
    assert "unknown_widget" in families.codes.by_family["ValidationError"]


def test_the_families_text_is_one_line_each_with_its_advice_in_full() -> None:
    table = error_families()
    text = repr(table)
    lines = text.splitlines()
    assert len(lines) == len(table.frame) + 1 and len(text) <= 2000
    assert "…" not in text
    for line, (name, row) in zip(lines[1:], table.frame.iterrows(), strict=True):
        assert line == f"  {name}: {row['status']}, {row['codes']} — {row['what a back end does']}", line
    page = table._repr_html_()
    assert "<table" in page and "except errors.ValidationError" in page
    shown = [name for name in SIMULATOR_ONLY if name in text or name in page]
    assert not shown, "the classes only the simulator raises are left out"


def test_each_family_counts_and_lists_its_codes_and_the_statuses_chosen_for_them() -> None:
    families = error_families()
    listed = families.codes.by_family
    assert list(listed) == list(families.frame.index)
    every = [code for codes in listed.values() for code in codes]
    others = {code for code, cls in errors.by_code.items() if family(cls).__name__ in SIMULATOR_ONLY}
    others |= set(SIMULATOR_ONLY_CODES)
    assert sorted(every) == sorted(set(errors.by_code) - others), "each code once, in its family"
    for name, codes in listed.items():
        assert all(family(errors.by_code[code]).__name__ == name for code in codes), name
        n = len(codes)
        assert families.frame.loc[name, "codes"] == (f"{n} code" if n == 1 else f"{n} codes")
    assert families.frame.loc["Conflict", "status"] == "409"
    assert families.frame.loc["SessionError", "status"] == "400/401/403/409"
    text = repr(families.codes)
    assert len(text) <= 2000 and text.splitlines()[0].startswith("OAuthError: invalid_client, ")
    assert "<td style='text-align:left'>card-already-closed, " in families.codes._repr_html_()


def test_a_fault_only_the_simulator_injects_is_no_code_of_a_partners_family() -> None:
    """503 injected-fault is a ServiceUnavailable the kit raises, but only the simulator's control
    plane sends it: the families a partner's server may send do not list it."""
    families = error_families()
    assert errors.by_code["injected-fault"] is errors.InjectedFault
    assert families.codes.by_family["ServiceUnavailable"] == ("server-busy", "service-unavailable")
    assert families.frame.loc["ServiceUnavailable", "codes"] == "2 codes"
    assert "injected-fault" not in families._repr_html_()


def test_the_table_in_jupyter_lists_each_familys_codes_where_the_text_counts_them() -> None:
    """13 shows the families once: the table names each family's codes, the text form (a stored
    output, under 2,000 characters) counts them."""
    families = error_families()
    page = families._repr_html_()
    for name, codes in families.codes.by_family.items():
        assert f"<td>{', '.join(codes)}</td>" in page, name
    assert "10 codes" in repr(families) and "session-type-not-allowed" not in repr(families)


def test_a_family_is_the_class_right_under_api_error() -> None:
    assert family(errors.EventRenamed) is errors.ValidationError  # three classes down
    assert family(errors.RateLimited) is errors.RateLimited  # a family of one code
    assert family(errors.ApiError) is errors.ApiError  # raised for an answer no family takes


def _echo_app(answer: int):  # a minimal ASGI app: reads the body, answers ``answer``
    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        await receive()
        await send({"type": "http.response.start", "status": answer, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    return app


def test_a_local_app_is_served_on_loopback_and_its_answers_recorded() -> None:
    body = json.dumps({"id": "evt_1", "type": "card.closed"}).encode()
    with local_app(_echo_app(204)) as running:
        assert running.url.startswith("http://127.0.0.1:") and running.url.endswith("/webhooks")
        answered = httpx.post(running.url, content=body, headers={"x-signature": "sig"}, timeout=10)
        running.wait(1)
    assert answered.status_code == 204
    assert running.answers == [{"event": "evt_1", "answer": 204}]
    assert running.last is not None and running.last[0] == body and running.last[1]["x-signature"] == "sig"
    try:
        httpx.post(running.url, content=body, timeout=2)
    except httpx.TransportError:
        pass
    else:
        raise AssertionError("the app still answers after the block")


def test_a_refused_request_is_recorded_but_not_kept_for_a_replay() -> None:
    with local_app(_echo_app(400)) as running:
        httpx.post(running.url, content=b"not json", timeout=10)
        running.wait(1)
    assert running.answers == [{"event": "-", "answer": 400}] and running.last is None


def test_a_two_attempt_view_with_long_bodies_fits_a_stored_text_output() -> None:
    """A retried call whose answer is a JWK set: the text folds its bodies to stay a short output."""
    key = {"kty": "RSA", "n": "x" * 342, "e": "AQAB"}
    keys = json.dumps({"jwks": {"keys": [key, key]}, "nonce": "<nonce>"})
    json_type = ("content-type", "application/json")
    request = kit._wire.Message((("authorization", "Bearer <partner-token>"),) * 6, None, "", 0)
    refused = kit._wire.Message((json_type,) * 8, '{"code": "x"}', "application/json", 13)
    answer = kit._wire.Message((json_type,) * 8, keys, "application/json", len(keys))
    attempts = [
        kit._wire.Attempt(
            datetime.now(UTC), "GET", "http://127.0.0.1:<port>/init", request, status, reason, response, 1.0
        )
        for status, reason, response in ((401, "Unauthorized", refused), (200, "OK", answer))
    ]
    view = WireView(kit._wire.Exchange(1, "call", "GET", "/init", attempts))
    text = view.text()
    assert len(text) <= TEXT_LIMIT == 2000
    assert "attempt 1 of 2" in text and "attempt 2 of 2" in text and "more characters folded" in text
