"""Notebooks 03, 05, 08 and 11: each check rests on what its basis says, and the text says what the
output shows (read from the stored files, no kernel).

- 08 and 11: the spec's webhook.1 lists ``card.closed`` and says nothing of what sends it, so its
  check reads the event's name only; that a close sends it is A16's (a close "emits card.closed"),
  and the check saying so names A16;
- 08: the receiver's table and its columns are explained before the first cell that shows them;
  the subscription check says "current" events (the deprecated ``card.expired`` is left out);
- 11: its story is the explorer widget, not a tour of the refusals 05 to 08 tell: it shows only
  the refusals its checks read; change.4 is quoted where the refusal of an event type off the
  list is shown; the explorer's "not yet" hint is printed where the state it names (no account
  yet) is the state the device is in;
- 03: the rule.5 check accepts a session for the account or the person, as rule.5 does; the
  direct session's call is shown as the wire view the text promises, and its check reads the
  JWE sealed to the device key without a dialect call; expiry is the story's last section, its
  clock cells and checks after its heading, so that it can become a notebook of its own;
- 05: the second close sends another reason than the first, so that "kept" can be seen; the
  card.1 quote keeps the words on the close's reason; the partner token's renewal during the
  clock's jump is shown as calls; the idempotency key of the wire view is explained with A20.
"""

from __future__ import annotations

import re
from typing import Any

from kit import register
from tests.notebooks.test_notebook_bases import _cells, _checks, _source

N03 = "03_sessions_and_promotion.ipynb"
N05 = "05_cards_close_with_reason.ipynb"
N08 = "08_webhooks.ipynb"
N11 = "11_explorer.ipynb"


def _outputs(cell: dict[str, Any]) -> str:
    text = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            text.append("".join(output["text"]))
        elif "text/plain" in output.get("data", {}):
            text.append("".join(output["data"]["text/plain"]))
    return "\n".join(text)


def _index(name: str, needle: str) -> int:
    (found,) = [n for n, cell in enumerate(_cells(name)) if needle in _source(cell)]
    return found


def test_a_close_sending_card_closed_is_a16s_and_webhook_1_checks_the_name_only() -> None:
    assert "emits card.closed" in register.assumption("A16")["choice"]
    for name in (N08, N11):
        checks = _checks(name)
        spec = [(title, guarded) for title, basis, guarded in checks if basis.get("spec") == "webhook.1"]
        assert spec, name
        for title, guarded in spec:
            assert "closing" not in title and 'statement("webhook.1")' in guarded, (name, title)
        closing = [basis for title, basis, _ in checks if re.search(r"clos\w* .*sen\w* card\.closed", title)]
        assert closing and all(basis == {"choice": "A16"} for basis in closing), (name, closing)


def test_08_explains_the_receivers_table_before_it_is_shown() -> None:
    cells = _cells(N08)
    first = min(
        n
        for n, c in enumerate(cells)
        if c["cell_type"] == "code"
        and "api.webhooks." in _source(c)
        and ("wait_received" in _source(c) or "webhooks.events" in _source(c))
    )
    before = "\n".join(_source(c) for c in cells[:first] if c["cell_type"] == "markdown")
    for column in ("verified", "duplicate", "error", "kid", "resource_id"):
        assert f"`{column}`" in before, column
    # each log named before its first use; the sender's log is 09's to tell, and says so
    wire = 'api.wire(kind="delivery")'
    second = min(n for n, c in enumerate(cells) if c["cell_type"] == "code" and wire in _source(c))
    assert wire in "\n".join(_source(c) for c in cells[first:second] if c["cell_type"] == "markdown")
    sim = "api.sim.deliveries()"
    third = min(n for n, c in enumerate(cells) if c["cell_type"] == "code" and sim in _source(c))
    told = "\n".join(_source(c) for c in cells[second:third] if c["cell_type"] == "markdown")
    assert sim in told and "(09_webhook_deliveries.ipynb)" in told


def test_08_your_app_acknowledges_a_duplicate_and_processes_it_once() -> None:
    """The service retries any answer but a 2xx until it gives up (A25): the receiver to copy
    answers a delivery seen before with a 2xx, without processing it again, and a forgery 400;
    an event it fails to hand over is forgotten, so that the retry is processed."""
    from types import SimpleNamespace

    from fastapi.testclient import TestClient

    import kit
    from kit import errors

    def verify(body: bytes, headers: Any, *, seen: set[str]) -> Any:
        if body == b"forged":
            raise errors.SignatureInvalid("does not verify")
        if body.decode() in seen:
            raise errors.DuplicateDelivery("seen before")
        seen.add(body.decode())
        return SimpleNamespace(id=body.decode())

    class DownOnce(list[Any]):
        down = True

        def append(self, item: Any) -> None:
            if self.down:
                self.down = False
                raise OSError("the queue is down")
            super().append(item)

    [recipe] = [c for c in _cells(N08) if c["cell_type"] == "code" and "def webhook_app" in _source(c)]
    scope: dict[str, Any] = {"kit": kit}
    exec(_source(recipe), scope)  # the notebook's own recipe, as a partner copies it
    api = SimpleNamespace(webhooks=SimpleNamespace(verify=verify))
    queue: list[Any] = []
    client = TestClient(scope["webhook_app"](api, queue))
    answers = [client.post("/webhooks", content=body).status_code for body in (b"evt_1", b"evt_1", b"forged")]
    assert answers[0] == 204 and 200 <= answers[1] < 300 and answers[2] == 400, answers
    assert [event.id for event in queue] == ["evt_1"]
    flaky = DownOnce()
    client = TestClient(scope["webhook_app"](api, flaky), raise_server_exceptions=False)
    answers = [client.post("/webhooks", content=b"evt_2").status_code for _ in range(2)]
    assert answers[0] >= 500 and answers[1] == 204 and [event.id for event in flaky] == ["evt_2"], answers


def test_08_the_subscription_check_says_current_events() -> None:
    titles = [title for title, _, _ in _checks(N08)]
    assert "'the loopback receiver subscribes to every current event'" in titles
    assert "'the loopback receiver subscribes to every event'" not in titles


def test_11_shows_only_the_refusals_its_checks_read() -> None:
    """A card closed twice (A16), an event type off the list (change.4), a document request
    submitted twice (A26): the refusals of 05 to 08 are theirs to tell."""
    shown = _outputs(_cells(N11)[_index(N11, 'refused = calls[calls["status"] >= 400]')])
    codes = [line.split()[-1] for line in shown.splitlines()[1:] if line.strip()]
    assert codes == ["card-already-closed", "unknown-event-type", "document-request-not-open"], codes
    story = "\n".join(_source(c) for c in _cells(N11) if "checks" not in c["metadata"].get("tags", []))
    for toured in ("misplaced", "bad_reason", "bad_amount", 'chosen("A15"'):
        assert toured not in story, toured


def test_11_quotes_change_4_where_the_refusal_is_shown() -> None:
    cells = _cells(N11)
    refusal = _index(N11, "for pick in [event_type, bad_event]:")
    heading = max(n for n in range(refusal) if _source(cells[n]).startswith("## "))
    prose = "\n".join(_source(c) for c in cells[heading:refusal] if c["cell_type"] == "markdown")
    assert "— the spec ([change.4]" in prose and "reading" in prose and "[A17" in prose


def test_11_the_not_yet_hint_is_printed_where_no_account_exists_yet() -> None:
    shown = _outputs(_cells(N11)[_index(N11, "def press(")])
    (line,) = [x for x in shown.splitlines() if "not yet:" in x]
    assert "→ anonymous" in line and "create an account first" in line and "[calls sent: 0]" in line, line


def test_11_the_raw_parameter_flag_is_explained() -> None:
    parameters = _source(_cells(N11)[_index(N11, "# Parameters")])
    (line,) = [x for x in parameters.splitlines() if x.startswith("amount =")]
    assert "-r, which keeps it a string" in line, line


def test_03_the_rule_5_check_accepts_a_session_for_the_account_or_the_person() -> None:
    (guarded,) = [g for _, basis, g in _checks(N03) if basis.get("spec") == "rule.5"]
    assert '["account", "person"]' in guarded
    assert 'sorted(set(made_for["session_type"])), ["account"]' not in guarded
    prose = _source(_cells(N03)[_index(N03, "## 3. Anonymous → account")])
    assert "[A31 (" in prose and "[A43 (" in prose  # cited with their topics


def test_03_the_direct_session_is_shown_on_the_wire() -> None:
    cell = _cells(N03)[_index(N03, 'direct = api.sessions.open("account"')]
    shown = _outputs(cell)
    assert "POST /sessions · 201" in shown and '"encrypted_session_token": "<JWE ' in shown
    assert "svc-session-id" not in shown.split("HTTP/1.1 201")[0], "the direct session presents no session"


def test_03_expiry_is_the_last_section_so_that_it_can_be_cut_apart() -> None:
    cells = _cells(N03)
    headings = [_source(c).splitlines()[0] for c in cells if _source(c).startswith("## ")]
    story = headings[: headings.index("## Recap")]
    assert story[-1].startswith("## 8. Expiry") and all("xpir" not in h for h in story[:-1]), story
    expiry = _index(N03, "## 8. Expiry")
    timed = [n for n, c in enumerate(cells) if "needs-control" in c["metadata"].get("tags", [])]
    assert timed and min(timed) > expiry, (expiry, timed)
    (clock_checks,) = [c for c in cells if c["metadata"].get("tags") == ["checks", "needs-control"]]
    assert _source(clock_checks).count('choice="A06"') == 3


def test_03_the_direct_session_check_reads_plainly() -> None:
    (guarded,) = [g for t, b, g in _checks(N03) if "established directly" in t]
    assert "dialect" not in guarded and "kid=<device-key-id>" in guarded, guarded


def test_05_the_second_close_sends_another_reason_and_the_first_is_kept() -> None:
    shown = _outputs(_cells(N05)[_index(N05, "first = api.cards.close(card.card_id")])
    first = re.search(r"^first close: +\S+ closed (\S+)$", shown, re.M)
    second = re.search(r"^second close, reason (\S+): 409 ", shown, re.M)
    kept = re.search(r"^close_reason kept: (\S+)$", shown, re.M)
    assert first and second and kept, shown
    assert second.group(1) != first.group(1) == kept.group(1)


def test_05_quotes_card_1_with_its_words_on_the_reason() -> None:
    text = "\n".join(_source(c) for c in _cells(N05) if c["cell_type"] == "markdown")
    assert 'Closing a card takes an optional-looking "reason" in the request body.' in text


def test_05_tells_the_token_renewed_during_the_jump_in_one_sentence() -> None:
    cells = _cells(N05)
    jump = _index(N05, "api.sim.advance(int((expiry")
    told = _source(cells[jump - 1])
    assert "the client renews the token itself" in told and "(01_partner_token.ipynb)" in told, told
    assert "display(" not in _source(cells[jump]) and "accesstoken" not in _source(cells[jump])
    assert "409 card-not-active" in _outputs(cells[jump]), "the card story's answer is shown"


def test_05_explains_the_idempotency_key_of_the_wire_view() -> None:
    cells = _cells(N05)
    wire = _index(N05, "## 8. What went over the wire")
    assert "<idempotency-key " in _outputs(cells[wire + 1])
    assert "`idempotency-key`" in _source(cells[wire]) and "[A20 (idempotency keys)](" in _source(cells[wire])
