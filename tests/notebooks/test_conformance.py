"""The conformance table and the overlay it writes, without a kernel: what a difference observed
(:mod:`kit.notebook.observe`), the rows (:mod:`kit.notebook.conformity`), the files and the
overlay of ``kit regress`` (:mod:`kit.regress.conformance`), and that no secret reaches them."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from kit import _choices as choices
from kit import notebook, register
from kit._choicetool import check as check_file
from kit._drift import Drift
from kit.notebook import COMPANION, check, chosen, id_format
from kit.notebook.conformity import Seen, build, of_drift
from kit.notebook.observe import Observation, observe
from kit.regress import conformance, leaks
from kit.regress.cli import build_parser
from kit.regress.model import CheckResult, NotebookResult
from kit.regress.results import _observed
from kit.sim.personality import resolve

OUT = Path("out")
REASONS = list(register.value("A15")["reasons"])
CODES = dict(register.value("A64")["codes"])
FIRST_LINE = re.compile(
    r"^\d+ entries: \d+ confirmed, \d+ differ, \d+ not observed; \d+ seed statements checked, \d+ violated$"
)


# -- what a difference observed ----------------------------------------------------------------
def test_a_whole_value_and_an_item_of_a_table_are_observed() -> None:
    reads = [(("A15", "reasons"), REASONS), (("A64", "codes"), CODES)]
    [whole] = observe(REASONS, ["lost", "stolen"], reads, "A15")
    assert (whole.entry, whole.key, whole.answered) == ("A15", "reasons", ["lost", "stolen"])
    want = [(409, CODES["card-already-closed"]), (422, CODES["unknown-close-reason"])]
    [item] = observe(want, [(409, "card-closed"), (422, "bad-reason")], reads, "A16")
    assert (item.entry, item.key) == ("A64", "codes")
    changed = {k: v for k, v in item.answered.items() if CODES[k] != v}
    assert changed == {"card-already-closed": "card-closed", "unknown-close-reason": "bad-reason"}


def test_nothing_is_observed_without_a_read_or_of_another_type() -> None:
    reads = [(("A14", "months"), 36)]
    assert observe("card_", "UUID", reads, "A41") == []  # no chosen() gave "card_"
    assert observe(36, "thirty-six", reads, "A14") == []  # not the register's type
    assert observe(36, 36.0, reads, "A14") == []


def test_a_differing_check_records_what_it_observed(judged: None, capsys: pytest.CaptureFixture[str]) -> None:
    COMPANION.use("sandbox")
    with check("close reasons", choice="A15") as c:
        c.expect(["lost"], chosen("A15", "reasons"), what="close reasons", show=True)
    outcome = notebook.results()[-1]
    assert outcome.outcome == "differs"
    assert outcome.data()["observed"] == [
        {"entry": "A15", "key": "reasons", "chosen": REASONS, "answered": ["lost"]}
    ]
    with check("second close", choice="A16") as c:
        c.expect(
            (409, "card-closed"), (409, chosen("A64", "codes")["card-already-closed"]), what="x", show=True
        )
    outcome = notebook.results()[-1]
    assert outcome.reason.startswith("differs from A64 (in a check of A16): x:")
    with check("hidden", choice="A15") as c:  # show=False: nothing is kept
        c.expect(["lost"], chosen("A15", "reasons"), what="close reasons")
    assert "observed" not in notebook.results()[-1].data()
    capsys.readouterr()


def test_on_the_simulator_a_check_keeps_its_display(judged: None, capsys: pytest.CaptureFixture[str]) -> None:
    COMPANION.use("sim")
    with check("close reasons", choice="A15") as c:
        c.expect(REASONS, chosen("A15", "reasons"), what="close reasons", show=True)
    assert set(notebook.results()[-1].data()) == {"name", "needs", "outcome", "reason", "kind", "basis"}
    capsys.readouterr()


# -- the table ---------------------------------------------------------------------------------
def _seen() -> list[Seen]:
    codes = {**CODES, "card-already-closed": "card-closed"}
    return [
        Seen("A13", "choice", "passed", "05 cell 3 — check 'types'"),
        Seen(
            "A15",
            "choice",
            "differs",
            "05 cell 3 — check 'reasons'",
            "differs from A15",
            (Observation("A15", "reasons", REASONS, ["lost"]),),
        ),
        Seen(
            "A16",
            "choice",
            "differs",
            "05 cell 3 — check 'close'",
            "differs from A64",
            (Observation("A64", "codes", CODES, codes),),
        ),
        Seen(
            "A41",
            "choice",
            "differs",
            "05 cell 3 — check 'ids'",
            "differs from A41",
            (Observation("A41", "id_prefixes", {"card": "card_"}, {"card": "UUID"}),),
        ),
        Seen(
            "A06",
            "choice",
            "skipped",
            "03 cell 4 — check 'expiry'",
            "needs the simulator's control plane (clock)",
        ),
        Seen("card.1", "spec", "passed", "05 cell 3 — check 'temporary'"),
        Seen("session.1", "spec", "skipped", "03 cell 2 — check 'x'", "needs the simulator's control plane"),
    ]


def test_every_entry_has_one_row_in_register_order_and_the_first_line_counts_them() -> None:
    drift = Drift("body", "GET /cards/{card_id}", "body.last4", "present (required)", "missing", "r1", "A35")
    seed = Drift("version", "POST /sessions", "header svc-api-version", "1.2.0", "9.9", None, "version.1")
    seen = [*_seen(), of_drift(drift, "05"), of_drift(seed, "02")]
    table = build([s for s in seen if s is not None], elsewhere={"A20": ["07_p2p.ipynb"]})
    ids = [str(a["id"]) for a in register.assumptions()]
    assert [r.id for r in table.entries] == ids
    rows = {r.id: r for r in table.entries}
    assert rows["A13"].status == "confirmed"
    assert rows["A15"].status == "differs" and rows["A15"].observed[0].answered == ["lost"]
    assert rows["A64"].status == "differs"  # the check of A16 met A64's codes
    assert rows["A16"].status == "not observed" and "A64" in rows["A16"].why
    assert rows["A60"].status == "differs" and rows["A60"].observed[0].answered == "uuid"  # from A41
    assert rows["A62"].observed[0].answered == [s for s in register.value("A62")["sent"] if s != "card.last4"]
    assert rows["A06"].why == "needs the simulator's control plane"
    assert rows["A20"].why == "checked in 07_p2p.ipynb, not run here"
    assert "the seed leaves it to the server" in rows["A02"].why
    statements = {r.id: r.status for r in table.statements}
    assert statements == {"card.1": "passed", "session.1": "not checked", "version.1": "violated"}
    first = table.first_line()
    assert FIRST_LINE.match(first), first
    differ = sum(r.status == "differs" for r in table.entries)
    assert first.startswith(f"{len(ids)} entries: 1 confirmed, {differ} differ,")
    assert first.endswith("; 2 seed statements checked, 1 violated")
    assert table.markdown().splitlines()[0] == first == table.data()["summary"]
    frame = table.frame()
    assert list(frame.columns) == ["id", "kind", "status", "simulator", "server", "where", "why"]
    assert frame.set_index("id").loc["A15", "server"] == 'reasons: ["lost"]'


def test_an_expected_overlay_explains_what_it_chose() -> None:
    drift = Drift("body", "GET /cards/{card_id}", "body.last4", "present (required)", "missing", "r1", "A35")
    expected = choices.parse({"A62": {"sent": []}})
    table = build([s for s in [of_drift(drift, "05")] if s is not None], expected=expected)
    assert {r.id: r.status for r in table.entries}["A62"] == "not observed"
    assert {r.id: r.status for r in table.entries}["A35"] == "not observed"


# -- the files and the overlay -----------------------------------------------------------------
def _results(observed: tuple[dict[str, object], ...]) -> tuple[NotebookResult, ...]:
    checks = (
        CheckResult("reasons", "differs", "differs from A15: …", "cell 3", "choice", "A15", observed),
        CheckResult("types", "passed", "", "cell 3", "choice", "A13"),
        CheckResult("temporary", "passed", "", "cell 3", "spec", "card.1"),
    )
    return (NotebookResult("05_cards.ipynb", "passed", 1.0, OUT, checks=checks),)


def test_the_overlay_holds_only_what_differed_and_loads(tmp_path: Path) -> None:
    observed = (
        {"entry": "A15", "key": "reasons", "chosen": REASONS, "answered": ["lost", "stolen"]},
        {"entry": "A64", "key": "codes", "chosen": CODES, "answered": {**CODES, "kyc-locked": "locked"}},
        {"entry": "A41", "key": "id_prefixes", "chosen": {"card": "card_"}, "answered": {"card": "UUID"}},
    )
    table = conformance.from_results(_results(observed))
    path = tmp_path / "theirs.toml"
    entries = conformance.write_choices(table, path, source="profile sandbox")
    assert entries == ["A15", "A60", "A64"]  # A41 cannot be served: a comment
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    assert data["A15"] == {"reasons": ["lost", "stolen"]}
    assert data["A64"] == {"codes": {"kyc-locked": "locked"}}
    assert data["A60"] == {"id_format": "uuid"}
    assert re.search(r"^\[A15\]  # Close reasons; observed in 05_cards.ipynb cell 3", text, re.M)
    assert "#   A41 id_prefixes" in text
    assert choices.load(path).chosen("A64", "codes")["card-not-found"] == CODES["card-not-found"]
    again = conformance.overlay_text(conformance.from_results(_results(())), expected=choices.load(path))
    assert tomllib.loads(again)["A15"] == {"reasons": ["lost", "stolen"]}  # kept, not contradicted


def test_a_file_written_against_generic_codes_is_one_the_simulator_serves(tmp_path: Path) -> None:
    generic = {**CODES, "endpoint-removed": "not-found", "card-not-found": "not-found"}
    observed = ({"entry": "A64", "key": "codes", "chosen": CODES, "answered": generic},)
    path = tmp_path / "theirs.toml"
    conformance.write_choices(conformance.from_results(_results(observed)), path, source="profile sandbox")
    overlay = choices.load(path)
    assert resolve(overlay).codes["card-not-found"] == "not-found"  # what kit serve --choices does
    assert check_file(str(path)) == []  # and kit choices check
    text = path.read_text(encoding="utf-8")
    # what a run cannot observe is there to fill in, commented, with the simulator's values
    assert '# create_account = "/accounts"' in text and '# field_case = "snake"' in text
    tail = text.split("# Not observable by a run", 1)[1]
    uncommented = "\n".join(
        line[2:] for line in tail.splitlines() if re.match(r"# (\[A\d\d[.\w]*\]|\w+ = )", line)
    )
    spelled = tomllib.loads(uncommented)
    assert spelled["A67"]["paths"] == register.value("A67")["paths"] and "A64" not in spelled
    assert resolve(choices.parse(spelled)).dialect.default  # the simulator's own spelling


def test_the_files_are_written_off_the_simulator_only_and_scanned(tmp_path: Path) -> None:
    results = _results(())
    assert conformance.report(results, tmp_path, "notebooks", other=True) == [
        tmp_path / "conformance.md",
        tmp_path / "conformance.json",
    ]
    md = (tmp_path / "conformance.md").read_text(encoding="utf-8")
    assert (
        json.loads((tmp_path / "conformance.json").read_text(encoding="utf-8"))["summary"]
        == md.splitlines()[0]
    )
    assert set(conformance.FILES) <= set(leaks.REPORTS)
    assert conformance.report(results, tmp_path, "notebooks", other=False) == []
    assert not (tmp_path / "conformance.md").exists()  # a stale copy is not left for a sim run


def test_no_secret_reaches_the_table_or_the_overlay(tmp_path: Path) -> None:
    token = "ses_" + "Ab9" * 15
    marks = [
        {"entry": "A15", "key": "reasons", "chosen": REASONS, "answered": [token]},
        {"entry": "A15", "key": "reasons", "chosen": REASONS, "answered": ["s3cr3t-value"]},
        {"entry": "A15", "key": "reasons", "chosen": REASONS, "answered": ["lost"]},
    ]
    kept = _observed(marks, ["s3cr3t-value"])
    assert [m["answered"] for m in kept] == [["lost"]]
    table = conformance.from_results(_results(kept))
    conformance.write(table, tmp_path)
    path = tmp_path / "theirs.toml"
    conformance.write_choices(table, path)
    for written in (tmp_path / "conformance.md", tmp_path / "conformance.json", path):
        text = written.read_text(encoding="utf-8")
        assert token not in text and "s3cr3t-value" not in text
        assert not leaks.scan_file(written, secrets=["s3cr3t-value"])


def test_the_command_takes_write_choices() -> None:
    args = build_parser().parse_args(["05", "--write-choices", "theirs.toml", "--choices", "known.toml"])
    assert (args.write_choices, args.choices) == ("theirs.toml", "known.toml")


def test_id_format_is_what_a_prefix_check_compares() -> None:  # the A41 → A60 reading rests on it
    assert id_format("5b0e3c4e-0d4b-4c8e-9a1f-2b3c4d5e6f70").partition(" + ")[0] == "UUID"
