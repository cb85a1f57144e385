"""``kit regress`` and leaks: a persona's PII in an output fails the run, and is never echoed."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from kit import regress
from kit.register import personas
from tests.notebooks.helpers import FIXTURES

pytestmark = pytest.mark.papermill

DOB = personas()[0]["date_of_birth"]  # what the fixture prints when told to leak


@pytest.fixture(scope="module")
def leaked(tmp_path_factory: pytest.TempPathFactory) -> regress.RegressReport:
    out = tmp_path_factory.mktemp("regress-leak")
    return regress.run(["03"], notebooks_dir=FIXTURES, out_dir=out, parameters={"leak": True}, jobs=1)


def test_a_leaked_persona_dob_fails_the_notebook(leaked: regress.RegressReport) -> None:
    assert not leaked.ok
    (result,) = leaked.results
    assert (result.status, result.cell) == ("leaked", "cell 4 (In [3]) output 1 stdout")
    assert result.error == "leak: persona-dob (1 finding)"
    assert [(f.kind, f.location) for f in result.findings] == [
        ("persona-dob", f"{leaked.out_dir / '03_guarded.ipynb'}: cell 4 (In [3]) output 1 stdout, line 1")
    ]
    summary = leaked.summary_path.read_text(encoding="utf-8")
    assert "| 03_guarded.ipynb | **leaked** |" in summary
    assert f"`{result.findings[0].location}`: persona-dob" in summary
    failure = ET.parse(leaked.junit).getroot().find(".//testcase[@name='03_guarded']/failure")
    assert failure is not None and failure.get("type") == "Leak"


def test_the_leaked_value_is_never_echoed_nor_kept(leaked: regress.RegressReport) -> None:
    assert DOB not in repr(leaked) + leaked.summary
    for path in leaked.out_dir.iterdir():  # the reports and the executed notebook, redacted
        assert DOB not in path.read_text(encoding="utf-8"), path.name
    executed = (leaked.out_dir / "03_guarded.ipynb").read_text(encoding="utf-8")
    assert "born on <persona-dob>" in executed
    assert leaked.findings == ()  # nothing leaked into the report files themselves
