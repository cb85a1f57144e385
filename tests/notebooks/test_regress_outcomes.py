"""``kit regress`` over tiny fixture notebooks: reports, exit status, what the kernels get."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from kit import _env as env
from tests.notebooks.helpers import FIXTURES, load, run_cli, stream_text

pytestmark = pytest.mark.papermill


@pytest.fixture(scope="module")
def passing(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run of every fixture notebook with default values (all pass), plus a marker parameter."""
    out = tmp_path_factory.mktemp("regress-pass")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv(env.ACCESS_TOKEN, raising=False)
        code, stdout, stderr = run_cli(
            "--notebooks", str(FIXTURES), "--out", str(out), "--jobs", "2", "-p", "marker=visible-in-output"
        )
    return {"code": code, "stdout": stdout, "stderr": stderr, "out": out}


@pytest.mark.slow  # kit regress runs: ≈5 s
def test_all_passing_exits_zero_and_prints_the_summary(passing: dict[str, Any]) -> None:
    assert passing["code"] == 0, passing["stdout"] + passing["stderr"]
    summary = (passing["out"] / "summary.md").read_text(encoding="utf-8")
    assert passing["stdout"] == summary
    assert "| notebook | status | seconds | failing cell | error |" in summary
    for name in ("01_pass.ipynb", "02_param.ipynb", "03_guarded.ipynb"):
        assert f"| {name} | passed |" in summary
    assert passing["stderr"] == ""  # no progress bar when stderr is not a terminal


def test_junit_has_one_passing_testcase_per_notebook(passing: dict[str, Any]) -> None:
    root = ET.parse(passing["out"] / "junit.xml").getroot()
    cases = root.findall(".//testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("notebooks", "01_pass"),
        ("notebooks", "02_param"),
        ("notebooks", "03_guarded"),
    ]
    assert root.findall(".//failure") == []
    assert all(float(c.get("time", "nan")) > 0 for c in cases)


def test_executed_notebooks_keep_outputs_and_execution_counts(passing: dict[str, Any]) -> None:
    for name in ("01_pass.ipynb", "02_param.ipynb", "03_guarded.ipynb"):
        nb = load(passing["out"] / name)
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert code and all(isinstance(c["execution_count"], int) for c in code), name
    total = load(passing["out"] / "02_param.ipynb")["cells"][-2]["outputs"][0]
    assert "".join(total["data"]["text/plain"]) == "6"


def test_kernel_is_this_interpreter_in_the_notebooks_folder(passing: dict[str, Any]) -> None:
    text = stream_text(load(passing["out"] / "01_pass.ipynb"))
    assert f"executable: {sys.executable}\n" in text  # the venv's python, not another python3
    assert "cwd: fixtures\n" in text
    assert "token in environment: False\n" in text  # only a sandbox run hands one over


def test_parameters_are_written_into_the_output_notebook(passing: dict[str, Any]) -> None:
    # Why secrets must never be parameters: papermill records every value, twice.
    nb = load(passing["out"] / "02_param.ipynb")
    assert nb["metadata"]["papermill"]["parameters"] == {"marker": "visible-in-output"}
    injected = [c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert len(injected) == 1
    assert 'marker = "visible-in-output"' in "".join(injected[0]["source"])


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run where 02 gets a wrong parameter and 03 a cell longer than the time-out."""
    out = tmp_path_factory.mktemp("regress-fail")
    code, stdout, stderr = run_cli(
        "--notebooks", str(FIXTURES), "--out", str(out), "--jobs", "2", "--cell-timeout", "4",
        "-p", "expected_total=7", "-p", "pause=12.0", "02_param", "03",
    )  # fmt: skip
    # 4 s: a loaded machine (a suite on two workers) can take over a second for the kernel's
    # first imports, which must not be the cell that times out; the sleep is three times that.
    return {"code": code, "stdout": stdout, "stderr": stderr, "out": out}


@pytest.mark.slow  # kit regress runs: ≈9 s
def test_a_failure_exits_non_zero_with_one_junit_failure_each(failing: dict[str, Any]) -> None:
    assert failing["code"] == 1
    root = ET.parse(failing["out"] / "junit.xml").getroot()
    assert (root.get("tests"), root.get("failures")) == ("2", "2")
    assert [c.get("name") for c in root.findall(".//testcase")] == ["02_param", "03_guarded"]
    assert not (failing["out"] / "01_pass.ipynb").exists()  # only the selection ran
    assert failing["stdout"].startswith("# kit regress: 2 of 2 notebooks failed\n")


def test_a_wrong_parameter_fails_naming_the_cell_and_the_error(failing: dict[str, Any]) -> None:
    nb = load(failing["out"] / "02_param.ipynb")
    marked = [
        (i, c)
        for i, c in enumerate(nb["cells"], start=1)
        if c["metadata"].get("papermill", {}).get("exception")
    ]
    assert len(marked) == 1
    index, cell = marked[0]
    assert "".join(cell["source"]).startswith("assert total == expected_total")
    where = f"cell {index} (In [{cell['execution_count']}])"
    error = "AssertionError: total is 6, expected 7"
    assert "| 02_param.ipynb | **failed** |" in failing["stdout"]
    assert f"| {where} | {error} |" in failing["stdout"]
    failure = ET.parse(failing["out"] / "junit.xml").getroot().find(".//testcase[@name='02_param']/failure")
    assert failure is not None
    assert failure.get("message") == f"{where}: {error}"
    assert failure.get("type") == "AssertionError"
    assert "expected_total" in (failure.text or "")  # the traceback, without colour codes
    assert "\x1b[" not in (failure.text or "")


def test_a_cell_over_the_timeout_fails_naming_the_cell(failing: dict[str, Any]) -> None:
    assert "| 03_guarded.ipynb | **failed** |" in failing["stdout"]
    row = next((line for line in failing["stdout"].splitlines() if line.startswith("| 03_guarded")), "")
    assert "| cell 4 (In [3]) | CellTimeoutError: A cell timed out" in row, failing["stdout"]
    failure = ET.parse(failing["out"] / "junit.xml").getroot().find(".//testcase[@name='03_guarded']/failure")
    assert failure is not None and failure.get("type") == "CellTimeoutError"
