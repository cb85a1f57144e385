"""``kit choices infer --openapi``: a dialect file from a stranger's OpenAPI document.

The simulator serves ``data/choices/camel.toml`` and a dialect of this test's own (other paths,
camel case with other renames, other header names); its ``/openapi.json`` is made a stranger's
(operation ids, summaries, descriptions, titles, tags, extensions and schema names gone, ``/_sim``
paths removed, paths shuffled) and the file inferred from it must give the same A67 paths and
A68 field case, pass ``kit choices check`` and start ``kit serve --choices``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kit import _choices
from kit import _infer_openapi as _infer
from kit._choicetool import check
from tests.support.launcher import serve_process
from tests.support.stranger import OWN, as_30, served_document, stranger

ROOT = Path(__file__).resolve().parents[1]
CAMEL = ROOT / "data" / "choices" / "camel.toml"


@pytest.fixture(scope="module", params=["camel", "own"])
def dialect_file(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if request.param == "camel":
        return CAMEL
    path = tmp_path_factory.mktemp("own") / "own.toml"
    path.write_text(OWN, encoding="utf-8")
    return path


def _expected(path: Path) -> tuple[dict[str, str], str]:
    overlay = _choices.load(path)
    return dict(overlay.value("A67")["paths"]), overlay.value("A68")["field_case"]


def _inferred(text: str, tmp: Path) -> tuple[Path, dict[str, str], str]:
    out = tmp / "inferred.toml"
    out.write_text(text, encoding="utf-8")
    paths, case = _expected(out)
    return out, paths, case


@pytest.mark.slow  # the served OpenAPI document built, then kit choices infer run: ≈8 s
def test_a_stranger_json_document_gives_the_same_paths_and_case(dialect_file: Path, tmp_path: Path) -> None:
    doc = stranger(served_document(dialect_file))
    assert not any("operationId" in op for item in doc["paths"].values() for op in item.values())
    source = tmp_path / "openapi.json"
    source.write_text(json.dumps(doc), encoding="utf-8")
    command = ["choices", "infer", "--openapi", str(source), "-o", str(tmp_path / "i.toml")]
    result = subprocess.run(
        [sys.executable, "-m", "kit", *command], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    inferred, paths, case = _inferred((tmp_path / "i.toml").read_text(encoding="utf-8"), tmp_path)
    assert (paths, case) == _expected(dialect_file)
    assert check(str(inferred)) == []
    overlay = _choices.load(dialect_file)
    assert _choices.load(inferred).value("A68")["renames"] == overlay.value("A68")["renames"]
    for entry, key in (
        ("A18", "role_header"),
        ("A20", "header"),
        ("A28", "session_expires_at"),
        ("A01", "client_auth"),
        ("A02", "header"),
        ("A02", "scheme"),
    ):
        assert _choices.load(inferred).value(entry)[key] == overlay.value(entry)[key], (entry, key)


@pytest.mark.slow  # the served OpenAPI document built and inferred from: ≈6 s
def test_a_30_yaml_document_gives_the_same_paths_and_case(dialect_file: Path, tmp_path: Path) -> None:
    doc = as_30(stranger(served_document(dialect_file), seed=5))
    source = tmp_path / "openapi.yaml"
    source.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    assert "nullable: true" in source.read_text(encoding="utf-8")
    inferred, paths, case = _inferred(_infer.infer_text(_infer.load(str(source))), tmp_path)
    assert (paths, case) == _expected(dialect_file)
    assert check(str(inferred)) == []


@pytest.mark.slow  # kit serve and kit choices infer in subprocesses: ≈6 s
def test_kit_serve_starts_with_the_inferred_file_and_its_url_infers_the_same(tmp_path: Path) -> None:
    own = tmp_path / "own.toml"
    own.write_text(OWN, encoding="utf-8")
    inferred, paths, case = _inferred(_infer.infer_text(stranger(served_document(own))), tmp_path)
    with serve_process("--no-control", "--choices", str(inferred)) as served:
        again = _infer.infer_text(_infer.load(served.base_url + "/openapi.json"), source="url")
    (tmp_path / "again").mkdir()
    assert _inferred(again, tmp_path / "again")[1:] == (paths, case) == _expected(own)


def test_a_tie_is_said_and_left_commented() -> None:
    doc = stranger(served_document(CAMEL))
    twin = json.loads(json.dumps(doc["paths"]["/v2/transfers/{transfer_id}"]))
    doc["paths"]["/v2/moves/{transfer_id}"] = twin
    text = _infer.infer_text(doc)
    assert "A67 get_transfer: a tie between /v2/moves/{transfer_id}, /v2/transfers/{transfer_id}" in text
    assert '# get_transfer = "/p2p/transfers/{transfer_id}"' in text
    assert "\nget_transfer =" not in text


def test_problem_codes_the_kit_does_not_know_are_listed() -> None:
    doc = stranger(served_document(CAMEL))
    (problem,) = [
        s
        for s in doc["components"]["schemas"].values()
        if {"status", "title", "code"} <= set(s.get("properties", {}))
    ]
    problem["properties"]["code"]["enum"] = ["card-not-found", "gone-away", "not-allowed-here"]
    text = _infer.infer_text(doc)
    assert "A64 codes the document lists that the kit does not know: gone-away, not-allowed-here" in text
