"""The conformance round trip: what a sandbox chose, written as an overlay, served and expected.

Server A stands in for a partner's sandbox: ``kit serve --no-control --choices
data/choices/other.toml --sandbox-fixtures G``. ``kit regress -p profile=sandbox 05 06
--write-choices FILE`` against it writes ``OUT/conformance.md``/``.json`` and FILE, the entries
that differed with the values observed. Server B, ``kit serve --no-control --choices FILE``,
then answers like A on those entries: a default run against B reports FILE's entries as
differing, with FILE's values. And ``kit regress --choices FILE`` against A lists none of them.
Two notebooks (cards, inbound events) keep it short: they observe the close reasons (A15), the
problem codes (A64), the id format (A60, through A41's checks) and the optional fields (A62).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kit import _choices as choices
from kit.regress.cli import main
from tests.sandbox.conftest import point_at
from tests.support.launcher import Served, serve_process

ROOT = Path(__file__).resolve().parents[2]
OTHER = ROOT / "data" / "choices" / "other.toml"
NOTEBOOKS = ["05", "06"]
FIRST_LINE = re.compile(
    r"^(\d+) entries: (\d+) confirmed, (\d+) differ, (\d+) not observed; "
    r"(\d+) seed statements checked, (\d+) violated$"
)

pytestmark = [pytest.mark.papermill, pytest.mark.slow]


def _serve(factory: pytest.TempPathFactory, choices_file: Path) -> Iterator[tuple[Served, Path]]:
    fixtures = factory.mktemp("fixtures") / "fixtures.toml"
    with serve_process(
        "--no-control", "--choices", str(choices_file), "--sandbox-fixtures", str(fixtures)
    ) as s:
        yield s, fixtures


@pytest.fixture(scope="module")
def server_a(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    yield from _serve(tmp_path_factory, OTHER)


def _regress(served: tuple[Served, Path], out: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    """``kit regress -p profile=sandbox 05 06 --out OUT …`` against ``served``; its conformance.json."""
    server, fixtures = served
    with pytest.MonkeyPatch.context() as patch:
        point_at(patch, server.base_url, fixtures)
        code = main(
            [
                *NOTEBOOKS,
                "-p",
                "profile=sandbox",
                "--notebooks",
                str(ROOT / "notebooks"),
                "--out",
                str(out),
                "--jobs",
                "2",
                "--no-progress",
                *extra,
            ]
        )
    return code, json.loads((out / "conformance.json").read_text(encoding="utf-8"))


def _status(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in report["entries"]}


@pytest.fixture(scope="module")
def written(
    server_a: tuple[Served, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("a") / "out"
    path = out.parent / "theirs.toml"
    code, report = _regress(server_a, out, "--write-choices", str(path))
    assert code == 0, (out / "summary.md").read_text(encoding="utf-8")
    return path, report


def test_the_run_writes_the_conformance_table(written: tuple[Path, dict[str, Any]]) -> None:
    path, report = written
    md = (path.parent / "out" / "conformance.md").read_text(encoding="utf-8")
    first = FIRST_LINE.match(md.splitlines()[0])
    assert first, md.splitlines()[0]
    assert report["summary"] == md.splitlines()[0]
    n, confirmed, differ, unobserved, checked, violated = map(int, first.groups())
    assert n == len(report["entries"]) == confirmed + differ + unobserved
    assert checked > 0 and violated == 0
    rows = _status(report)
    assert rows["A15"]["status"] == "differs"
    assert rows["A13"]["status"] == "confirmed"  # the card types are the register's on both
    assert rows["A45"]["status"] == "not observed" and "control plane" in rows["A45"]["why"]
    assert "no call in this run" in rows["A02"]["why"]


def test_write_choices_holds_the_observed_values(written: tuple[Path, dict[str, Any]]) -> None:
    path, _ = written
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    other = choices.load(OTHER)
    assert {"A15", "A60", "A64"} <= set(data), sorted(data)
    assert data["A15"]["reasons"] == other.chosen("A15", "reasons")
    assert data["A60"]["id_format"] == "uuid"
    assert data["A64"]["codes"]  # only the codes re-chosen, each as the other server sends it
    for ours, theirs in data["A64"]["codes"].items():
        assert other.chosen("A64", "codes")[ours] == theirs
    assert set(data["A62"]["sent"]) < set(choices.EMPTY.chosen("A62", "sent"))
    assert "# " in path.read_text(encoding="utf-8").split("[A15]", 1)[1].splitlines()[0]  # where seen
    choices.load(path)  # an overlay kit regress --choices reads


def test_a_server_started_with_the_file_answers_like_the_sandbox(
    written: tuple[Path, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    path, _ = written
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    for served in _serve(tmp_path_factory, path):  # server B: kit serve --choices FILE
        code, report = _regress(served, tmp_path_factory.mktemp("b") / "out")
    assert code == 0
    rows = _status(report)
    for entry, keys in data.items():
        if entry == "description":
            continue
        assert rows[entry]["status"] == "differs", (entry, rows[entry])
        answered = {o["key"]: o["answered"] for o in rows[entry].get("observed", [])}
        for key, value in keys.items():
            if isinstance(value, dict):
                assert {k: answered[key][k] for k in value} == value, entry
            else:
                assert answered[key] == value, (entry, key)


def test_expecting_the_file_makes_its_differences_no_news(
    written: tuple[Path, dict[str, Any]],
    server_a: tuple[Served, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Under ``--choices FILE`` none of FILE's values is reported again. A check stops at its
    first miss, so a difference it hid the first time may show now (a new one still shows): a
    second ``--write-choices`` then holds FILE's values and the new ones."""
    path, _ = written
    data = {e: v for e, v in tomllib.loads(path.read_text(encoding="utf-8")).items() if e != "description"}
    out = tmp_path_factory.mktemp("c") / "out"
    again = out.parent / "again.toml"
    code, report = _regress(server_a, out, "--choices", str(path), "--write-choices", str(again))
    assert code == 0
    rows = _status(report)
    for entry, keys in data.items():
        if rows[entry]["status"] != "differs":
            continue
        for seen in rows[entry].get("observed", []):  # only what FILE did not know
            known = keys.get(seen["key"])
            assert known is not None and isinstance(known, dict), (entry, seen)
            news = {k for k, v in seen["answered"].items() if seen["chosen"].get(k) != v}
            assert not news & set(known), (entry, seen)
    assert rows["A15"]["status"] != "differs" and rows["A60"]["status"] != "differs"
    merged = choices.load(again)
    for entry, keys in data.items():  # FILE's values are kept in the file written again
        for key, value in keys.items():
            got = merged.chosen(entry, key)
            assert ({k: got[k] for k in value} if isinstance(value, dict) else got) == value, (entry, key)
