"""A check that expects nothing is a defect of the notebook: it fails, "expected nothing", on
every profile; an expectation counts whether it is made through the check (``c.expect``) or
through :mod:`kit.notebook.expect`'s functions, and a refusal counts as one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kit import notebook
from kit.notebook import COMPANION, CheckFailed, check, expect, expect_true, refused
from kit.notebook.checks import EXPECTED_NOTHING
from kit.notebook.expect import Tally


@pytest.fixture
def judged() -> Iterator[None]:
    saved = COMPANION.judged()
    yield
    COMPANION.use(None)
    COMPANION.seen(*saved)


def _last() -> notebook.CheckOutcome:
    return notebook.results()[-1]


@pytest.mark.parametrize("profile", ["sim", "sandbox"])
def test_a_with_block_that_expects_nothing_fails_on_every_profile(
    judged: None, profile: str, capsys: pytest.CaptureFixture[str]
) -> None:
    COMPANION.use(profile)
    with pytest.raises(CheckFailed, match="expected nothing") as caught, check("nothing", choice="A15"):
        pass
    assert (_last().outcome, _last().reason) == ("failed", EXPECTED_NOTHING)  # never "differs"
    assert str(caught.value) == f"check 'nothing' (choice A15) failed: {EXPECTED_NOTHING}"
    assert capsys.readouterr().out == f"✘ check failed: nothing — {EXPECTED_NOTHING}\n"


def test_a_bare_assert_that_holds_is_no_expectation(judged: None) -> None:
    with pytest.raises(CheckFailed, match="expected nothing"), check("bare assert"):
        assert 2 + 2 == 4


def test_a_decorated_check_that_expects_nothing_fails(judged: None) -> None:
    ran: list[str] = []

    with pytest.raises(CheckFailed, match="expected nothing"):

        @check("decorated, nothing compared")
        def _() -> None:
            ran.append("ran")

    assert ran == ["ran"]
    assert (_last().name, _last().outcome, _last().reason) == (
        "decorated, nothing compared",
        "failed",
        EXPECTED_NOTHING,
    )


def test_the_module_functions_count_toward_the_running_check(judged: None) -> None:
    with check("through the module") as c:
        expect(1, 1, what="one")
        expect_true(True, "it holds")
    assert (c.made, _last().outcome) == (2, "passed")
    decorated = check("decorated, through the module")

    @decorated
    def _() -> None:
        expect_true(True, "it holds")

    assert (decorated.made, _last().outcome) == (1, "passed")
    with check("through the check") as c:
        c.expect_in("lost", ["lost", "stolen"], what="close reason")
        c.expect(1, 1, what="one")
    assert (c.made, _last().outcome) == (2, "passed")


def test_an_expectation_counts_toward_each_check_around_it(judged: None) -> None:
    with check("outer"), check("inner"):
        expect(1, 1, what="one")
    assert [o.outcome for o in notebook.results()[-2:]] == ["passed", "passed"]
    with pytest.raises(CheckFailed, match="check 'empty inner'"), check("outer, its inner empty"):
        expect(1, 1, what="one")
        with check("empty inner"):
            pass
    assert [(o.name, o.outcome) for o in notebook.results()[-2:]] == [
        ("empty inner", "failed"),
        ("outer, its inner empty", "failed"),  # the inner's failure is the outer's error
    ]


def test_expectations_made_before_or_after_a_check_do_not_count_for_it(judged: None) -> None:
    expect(1, 1, what="outside any check")  # counted nowhere, and no error
    with pytest.raises(CheckFailed, match="expected nothing"), check("after one outside"):
        pass
    with Tally() as tally:
        expect(1, 1, what="one")
    assert tally.made == 1
    with check("counted afresh") as c:
        c.expect(1, 1, what="one")
    assert _last().outcome == "passed"


def test_a_refusal_is_an_expectation(judged: None) -> None:
    api = notebook.connect("sim", seed=7)
    with check("an unknown card is refused") as c, refused() as r:
        api.cards.get("card_0000")
    assert (r.status, c.made, _last().outcome) == (404, 1, "passed")


def test_the_preamble_check_expects_the_seed_it_reset_to(judged: None) -> None:
    with notebook.start("sim", seed=11) as api:
        assert (_last().name, _last().outcome) == ("the simulator starts from its seeded state", "passed")
        assert api.sim.reset(5) == 5  # what the preamble's check compares


def test_the_preamble_tells_the_reset_as_the_story_and_records_it_as_a_check(
    judged: None, capsys: pytest.CaptureFixture[str]
) -> None:
    with notebook.start("sim", seed=11):
        shown = capsys.readouterr().out
    assert shown.strip() == "✔ the simulator is reset to seed 11: the same ids and keys on every run"
    assert "check passed" not in shown
    assert _last().data() == {
        "name": "the simulator starts from its seeded state",
        "needs": ["control plane"],
        "outcome": "passed",
        "reason": "",
        "kind": "choice",
        "basis": "A45",
    }, "kit regress counts it as before"


def test_a_check_that_does_not_pass_shows_its_usual_line(
    judged: None, capsys: pytest.CaptureFixture[str]
) -> None:
    failing = check("told by the story when it passes")
    failing.said_when_passed = "a story line"
    with pytest.raises(AssertionError), failing as c:
        c.expect(1, 2, what="one")
    assert capsys.readouterr().out.startswith("✘ check failed: told by the story when it passes")
