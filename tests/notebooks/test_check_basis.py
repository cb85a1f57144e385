"""Every check states its basis (a seed statement or a register entry); a choice check that does
not hold off the simulator is a difference, reported apart and never raising; every failure says
what was expected and what came."""

from __future__ import annotations

import linecache
from pathlib import Path

import pytest

from kit import notebook, register
from kit.errors import ApiError, ConfigError
from kit.notebook import COMPANION, CheckFailed, Mismatch, check, chosen, expect_choices, id_format, refused
from kit.notebook.basis import require_basis, statement_ids

SPEC_ID = next(iter(sorted(statement_ids())), "card.1")


def _last() -> notebook.CheckOutcome:
    return notebook.results()[-1]


def test_a_passing_check_prints_the_same_line_with_a_basis(
    judged: None, capsys: pytest.CaptureFixture[str]
) -> None:
    with check("two plus two", spec=SPEC_ID) as c:
        c.expect(2 + 2, 4, what="sum", show=True)
    assert capsys.readouterr().out == "✔ check passed: two plus two\n"
    assert (_last().kind, _last().basis) == ("spec", SPEC_ID)
    assert _last().data()["basis"] == SPEC_ID
    with check("no basis yet") as c:
        c.expect(2 + 2, 4, what="sum", show=True)
    assert "basis" not in _last().data()  # stored outputs of unconverted checks keep their display


def test_an_unknown_basis_is_an_error(judged: None) -> None:
    with pytest.raises(ValueError, match=r"check 'x': choice='A999': no such register entry"):
        check("x", choice="A999")
    with pytest.raises(ValueError, match="not both"):
        check("x", spec=SPEC_ID, choice="A15")
    with pytest.raises(ValueError, match="no such statement of the seed"):
        check("x", spec="S12")


def test_an_unknown_statement_id_is_an_error_where_the_seed_has_ids(judged: None) -> None:
    if not statement_ids():
        pytest.skip("data/spec.toml has no statement ids yet")
    with pytest.raises(ValueError, match="no such statement"):
        check("x", spec="card.999")


def test_the_switch_makes_a_basis_required(judged: None) -> None:
    check("allowed while notebooks are converted")
    require_basis(True)
    with pytest.raises(TypeError, match="names its basis"):
        check("no basis")
    check("with a basis", choice="A15")


def test_a_failure_says_what_was_expected_and_what_came(judged: None) -> None:
    with pytest.raises(CheckFailed) as caught, check("status of a closed card", spec=SPEC_ID) as c:
        c.expect(409, 404, what="status", show=True)
    assert _last().outcome == "failed"
    assert _last().reason == "status: expected 404, got 409"
    assert "check 'status of a closed card'" in str(caught.value) and "expected 404, got 409" in str(
        caught.value
    )
    assert isinstance(caught.value.__cause__, Mismatch)


def test_values_are_not_shown_unless_the_caller_says_they_are_safe(judged: None) -> None:
    secret = "0003-very-private"
    with pytest.raises(CheckFailed), check("answer", spec=SPEC_ID) as c:
        c.expect(secret, "another", what="kyc answer")
    assert secret not in _last().reason and "another" not in _last().reason
    assert _last().reason == "kyc answer: expected a string of 7 characters, got a string of 17 characters"
    with pytest.raises(CheckFailed), check("reason", spec=SPEC_ID) as c:
        c.expect_in(secret, ["a", "b"], what="close reason")
    assert secret not in _last().reason and "one of 2 allowed values" in _last().reason
    with pytest.raises(CheckFailed), check("listed", spec=SPEC_ID) as c:
        c.expect_true(False, "the card is listed", got="absent from the list", want="in the list")
    assert _last().reason == "the card is listed: expected in the list, got absent from the list"


def test_a_bare_assert_reports_its_class_source_and_the_check(judged: None) -> None:
    # as in a notebook cell: source kept in linecache, no pytest assertion rewriting
    source = "total = 2 + 2\nassert total == 5\n"
    linecache.cache["<cell-7>"] = (len(source), None, source.splitlines(True), "<cell-7>")
    with pytest.raises(CheckFailed) as caught, check("bare"):
        exec(compile(source, "<cell-7>", "exec"), {})
    assert _last().reason.startswith(
        "AssertionError (a bare assert without a message) at `assert total == 5`"
    )
    assert "check 'bare' failed: AssertionError" in str(caught.value)
    with pytest.raises(CheckFailed), check("with message"):
        raise AssertionError("arithmetic")
    assert _last().reason == "AssertionError: arithmetic"


def test_a_choice_check_fails_on_the_simulator(judged: None) -> None:
    COMPANION.use("sim")
    with pytest.raises(CheckFailed), check("card id format", choice="A41") as c:
        c.expect(
            id_format("5b0e3c4e-0d4b-4c8e-9a1f-2b3c4d5e6f70"), "card_ + 20 hex", what="card id", show=True
        )
    assert _last().outcome == "failed"


def test_a_choice_check_differs_elsewhere_and_the_notebook_goes_on(
    judged: None, capsys: pytest.CaptureFixture[str]
) -> None:
    COMPANION.use("sandbox")
    with check("card id format", choice="A41") as c:
        c.expect(
            id_format("5b0e3c4e-0d4b-4c8e-9a1f-2b3c4d5e6f70"), "card_ + 20 hex", what="card id", show=True
        )
    line = capsys.readouterr().out
    assert line == (
        "≠ check differs: card id format — differs from A41: card id: the simulator chooses "
        "'card_ + 20 hex', this server answered 'UUID'\n"
    )
    assert (_last().outcome, _last().kind, _last().basis) == ("differs", "choice", "A41")
    assert _last().data()["outcome"] == "differs"

    @check("decorated", choice="A15")
    def _() -> None:
        raise KeyError("reasons")

    assert _last().outcome == "differs" and "KeyError" in _last().reason


def test_a_spec_check_fails_elsewhere_too(judged: None) -> None:
    COMPANION.use("sandbox")
    with pytest.raises(CheckFailed), check("session types", spec=SPEC_ID) as c:
        c.expect("guest", "anonymous", what="session type", show=True)
    assert _last().outcome == "failed"


def test_chosen_is_the_register_or_the_expected_overlay(judged: None, tmp_path: Path) -> None:
    assert chosen("A14", "months") == register.value("A14")["months"]
    overlay = tmp_path / "other.toml"
    overlay.write_text("[A14]\nmonths = 24\n", encoding="utf-8")
    expect_choices(overlay)
    assert chosen("A14", "months") == 24
    assert chosen("A14", "temporary_days") == register.value("A14")["temporary_days"]
    COMPANION.use("sandbox")
    with check("card lifetime", choice="A14") as c:
        c.expect(36, chosen("A14", "months"), what="months", show=True)
    assert "differs from A14: months: the expected dialect file (other.toml) chooses 24" in _last().reason
    bad = tmp_path / "bad.toml"
    bad.write_text("[A14]\nyears = 2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[A14\] years"):
        expect_choices(bad)


def test_the_expectation_comes_from_the_environment(
    judged: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    overlay = tmp_path / "o.toml"
    overlay.write_text("[A15]\nreasons = ['lost']\n", encoding="utf-8")
    from kit.notebook import basis

    basis._expected.clear()
    monkeypatch.setenv("KIT_EXPECT_CHOICES", str(overlay))
    assert chosen("A15", "reasons") == ["lost"]


def test_refused_goes_on_whatever_the_code_and_checks_it_as_a_choice(judged: None) -> None:
    api = notebook.connect("sim", seed=7)
    with refused() as r:
        api.cards.get("card_0000")
    assert isinstance(r.error, ApiError) and r.code and r.status and r.status >= 400
    code = r.code
    with refused(code, choice="A43") as r:
        api.cards.get("card_0000")
    assert (_last().name, _last().outcome, _last().basis) == (f"refused with {code}", "passed", "A43")
    with pytest.raises(CheckFailed), refused("another-code", choice="A43"):
        api.cards.get("card_0000")  # on the simulator another code is a regression
    COMPANION.use("sandbox")
    with refused("another-code", choice="A43") as r:
        api.cards.get("card_0000")
    assert r.code == code
    assert _last().outcome == "differs"
    assert _last().reason == (
        f"differs from A43: problem code: the simulator chooses 'another-code', this server answered {code!r}"
    )
    with pytest.raises(Mismatch, match="expected a refusal, got a success"), refused():
        api.webhooks.jwks()
    with pytest.raises(ValueError, match="needs choice"):
        refused("x")


def test_id_format_names_every_prefix_of_a41_and_never_the_id() -> None:
    """A41's prefixes (``p2p_`` has digits) are each shown as the prefix plus the body's format."""
    prefixes = register.value("A41")["id_prefixes"]
    for prefix in prefixes.values():
        shown = id_format(f"{prefix}7f6be71442b1cff4cdeb")
        assert shown == f"{prefix} + 20 hex"
        assert "7f6be7" not in shown
