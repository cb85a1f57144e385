"""Cell tags (:mod:`kit.notebook.tags`): the checks a cell defines, read from its source, and
whether a tagged section can run on a profile — the question a check's ``needs=`` asks."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kit._profiles import SandboxProfile, SimProfile
from kit.notebook import NEEDS, results
from kit.notebook.companion import COMPANION
from kit.notebook.tags import NEEDS_CONTROL, NEEDS_RECEIVER, can_run, checks_in, section_of, skipped_section

SOURCE = """
from kit.notebook import check
%time 1
with check("a with block", spec="event.1") as c:
    c.expect(1, 1, what="one")

@check("a decorated one", needs="control plane", choice="A45")
def _():
    pass

with open("x") as f, check("two items") as c:
    pass
"""


@pytest.fixture
def judged() -> Iterator[None]:
    yield
    COMPANION.use(None)


def test_the_checks_of_a_cell_are_read_from_its_source_in_order() -> None:
    assert checks_in(SOURCE) == [
        {"name": "a with block", "spec": "event.1"},
        {"name": "a decorated one", "choice": "A45"},
        {"name": "two items"},
    ]


def test_a_check_whose_name_is_no_literal_is_refused() -> None:
    with pytest.raises(ValueError, match="string literal"):
        checks_in("with check(name) as c:\n    pass")


def test_one_section_tag_per_cell() -> None:
    assert section_of(["checks", NEEDS_CONTROL]) == NEEDS_CONTROL
    assert section_of(["checks"]) is None
    with pytest.raises(ValueError, match="one section tag"):
        section_of([NEEDS_CONTROL, NEEDS_RECEIVER])


@pytest.mark.usefixtures("judged")
def test_sections_run_where_the_profile_has_what_they_need(monkeypatch: pytest.MonkeyPatch) -> None:
    # the latest client's base URL is process-wide: set it, whatever other tests connected to
    monkeypatch.setattr(COMPANION, "_latest", (SimProfile(), "http://127.0.0.1:8000"))
    COMPANION.use(SimProfile)
    assert can_run(NEEDS_CONTROL) and can_run(NEEDS_RECEIVER)
    monkeypatch.setattr(COMPANION, "_latest", (SandboxProfile(), "https://sandbox.partner.example"))
    COMPANION.use(SandboxProfile)  # a sandbox off this machine: no control plane, no receiver
    assert not can_run(NEEDS_CONTROL) and not can_run(NEEDS_RECEIVER)
    monkeypatch.setattr(COMPANION, "_latest", (SandboxProfile(), "http://127.0.0.1:8000"))
    assert not can_run(NEEDS_CONTROL) and can_run(NEEDS_RECEIVER)  # a stand-in on loopback


def test_a_skipped_section_reports_each_check_with_the_needs_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = len(results())
    outcomes = skipped_section(NEEDS_RECEIVER, checks_in(SOURCE))
    reason = NEEDS["webhook receiver"].reason
    assert [(o.name, o.outcome, o.reason, o.needs) for o in outcomes] == [
        (name, "skipped", reason, ("webhook receiver",))
        for name in ("a with block", "a decorated one", "two items")
    ]
    assert [(o.kind, o.basis) for o in outcomes] == [("spec", "event.1"), ("choice", "A45"), ("", "")]
    assert results()[before:] == outcomes
    assert capsys.readouterr().out.splitlines()[0] == f"⊘ section skipped ({NEEDS_RECEIVER}): {reason}"
