"""``kit choices infer --har``: the HAR files of a ``kit regress --har`` run (and of a client
journey to the document requests, which no notebook reaches on a sandbox) against a server
speaking ``data/choices/camel.toml`` and one speaking a dialect of its own (other paths, camel
case with other renames, other headers) give the same A67 paths and A68 field case as the file
the server was started with, and a file ``kit choices check`` accepts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kit import _choices
from kit._choicetool import check
from tests.sandbox.conftest import point_at
from tests.support.launcher import serve_process
from tests.support.stranger import OWN

ROOT = Path(__file__).resolve().parents[2]
CAMEL = ROOT / "data" / "choices" / "camel.toml"
#: Notebooks that between them call every operation whose path the spec does not show.
SELECTION = ["03", "04", "05", "07", "08", "10"]

pytestmark = [pytest.mark.papermill, pytest.mark.slow]


def documents(dialect: Path, har: Path) -> None:
    """A client journey to the document requests, which no notebook reaches on a sandbox (its
    requests come from the control plane), on a server of the same dialect with its control
    plane: recorded and exported as a HAR."""
    import kit
    from kit.lab.journeys import onboard

    with (
        serve_process("--choices", str(dialect)) as served,
        kit.connect("sim", base_url=served.base_url, choices=str(dialect), record=True) as api,
    ):
        done = onboard(api)
        assert done.person_id is not None
        request = api.sim.create_document_request(done.person_id)
        api.document_requests.list(done.person_id)
        api.document_requests.submit(request.document_request_id, document={"kind": "utility_bill"})
        api.export_har(har)


@pytest.mark.parametrize("name", ["camel", "own"])
def test_a_regress_har_gives_the_same_paths_and_case(name: str, tmp_path: Path) -> None:
    from kit import regress

    dialect = CAMEL
    if name == "own":
        dialect = tmp_path / "own.toml"
        dialect.write_text(OWN, encoding="utf-8")
    fixtures, out = tmp_path / "fixtures.toml", tmp_path / "out"
    with (
        serve_process(
            "--no-control", "--choices", str(dialect), "--sandbox-fixtures", str(fixtures)
        ) as served,
        pytest.MonkeyPatch.context() as patch,
    ):
        point_at(patch, served.base_url, fixtures)
        regress.run(
            SELECTION,
            notebooks_dir=ROOT / "notebooks",
            out_dir=out,
            parameters={"profile": "sandbox"},
            jobs=2,
            progress=False,
            expect_choices=dialect,
            write_har=True,
        )
    documents(dialect, out / "documents.har")
    hars = sorted(str(p) for p in out.glob("*.har"))
    assert len(hars) == len(SELECTION) + 1
    inferred = tmp_path / "inferred.toml"
    command = [sys.executable, "-m", "kit", "choices", "infer", "--har", *hars, "-o", str(inferred)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert check(str(inferred)) == []
    want, got = _choices.load(dialect), _choices.load(inferred)
    assert got.value("A67")["paths"] == want.value("A67")["paths"]
    assert got.value("A68")["field_case"] == want.value("A68")["field_case"]
    for entry, key in (
        ("A02", "header"),
        ("A18", "role_header"),
        ("A20", "header"),
        ("A24", "header"),
        ("A27", "header"),
        ("A28", "request_id"),
        ("A28", "session_expires_at"),
        ("A28", "assumptions"),
    ):
        assert got.value(entry)[key].lower() == want.value(entry)[key].lower(), (entry, key)
    assert got.value("A24")["algorithm"] == want.value("A24")["algorithm"]
    assert got.value("A02")["scheme"] == want.value("A02")["scheme"]
    assert got.value("A68")["renames"] == want.value("A68")["renames"]
