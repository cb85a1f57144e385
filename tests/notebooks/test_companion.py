"""The notebook companion (``kit.notebook``): it sees the clients made through it, through the
requestor's hooks, and asks their profile what a check needs."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

import kit
from kit import notebook
from kit._embedded import embedded_base_url
from kit._profiles import SandboxProfile
from kit.notebook import COMPANION, NEEDS, check


@pytest.fixture
def restore_companion() -> Iterator[None]:
    saved = COMPANION.judged()
    yield
    COMPANION.use(None)
    COMPANION.seen(*saved)


def test_the_companion_sees_the_calls_of_every_client_made_through_it(restore_companion: None) -> None:
    base_url = embedded_base_url()
    assert httpx.post(f"{base_url}/_sim/reset", json={"seed": 7}).status_code == 200
    seen: list[str] = []
    start, clients = len(COMPANION.calls), COMPANION.clients
    with (
        notebook.connect("sim") as a,
        notebook.connect("sim", hooks={"call": [lambda e: seen.append(e.path)]}) as b,
    ):
        a.sessions.init_data()
        b.sessions.create("anonymous")
        observed = [e.path for e in list(COMPANION.calls)[start:]]
        assert sorted(observed) == sorted(
            [e.path for e in a.calls.entries()] + [e.path for e in b.calls.entries()]
        )
        assert seen == [e.path for e in b.calls.entries()]  # the caller's own hooks still run
    assert COMPANION.clients == clients + 2
    assert COMPANION.judged()[0].name == "sim"
    with kit.connect("sim") as unseen:  # the core's connect: the companion is not told
        unseen.sessions.init_data()
    assert len(COMPANION.calls) == start + len(observed)


class LabBench(SandboxProfile):
    """A sandbox that, unlike a partner's, has a control plane (a third profile, one class)."""

    name = "lab-bench"
    control_plane = True


def test_a_checks_needs_are_asked_of_the_profile(restore_companion: None) -> None:
    ran: list[str] = []
    COMPANION.seen(SandboxProfile, "https://sandbox.partner.example")

    @check("clock travel (sandbox)", needs="control plane")
    def _() -> None:
        ran.append("sandbox")

    COMPANION.seen(LabBench, "https://bench.partner.example")

    @check("clock travel (bench)", needs="control plane")
    def _() -> None:
        ran.append("bench")
        notebook.expect(ran, ["bench"], what="the checks that ran", show=True)

    @check("a delivery reaches the receiver (bench)", needs="webhook receiver")
    def _() -> None:
        ran.append("receiver")

    assert ran == ["bench"]
    sandbox, bench, receiver = notebook.results()[-3:]
    assert (sandbox.outcome, sandbox.reason) == ("skipped", NEEDS["control plane"].reason)
    assert bench.outcome == "passed"
    assert (receiver.outcome, receiver.reason) == ("skipped", NEEDS["webhook receiver"].reason)
    notebook.use("sim")  # an explicit choice wins over the latest client

    @check("clock travel (chosen: sim)", needs="control plane")
    def _() -> None:
        ran.append("sim")
        notebook.expect(ran, ["bench", "sim"], what="the checks that ran", show=True)

    assert ran == ["bench", "sim"]


def test_a_check_line_is_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    with check("two plus two") as c:
        c.expect(2 + 2, 4, what="the sum", show=True)
    assert capsys.readouterr().out == "✔ check passed: two plus two\n"
    assert isinstance(notebook.results()[-1], notebook.CheckOutcome)
