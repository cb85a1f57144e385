"""``kit regress`` without kernels: parameters, refused secrets, selection, the parser."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import pytest

from kit import _env as env
from kit import regress
from kit.regress import reports
from tests.notebooks.helpers import FIXTURES, ROOT, run_cli

SIM_SECRET = next(iter(env.SIM_PARTNER_CLIENTS.values()))


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("7", 7),
        ("-3", -3),
        ("0.25", 0.25),
        ("1e3", 1000.0),
        ("true", True),
        ("False", False),
        ("None", None),
        ('["lost", "stolen"]', ["lost", "stolen"]),
        ('{"a": 1}', {"a": 1}),
        ("virtual", "virtual"),
        ('"7"', "7"),
        ("2025-01-06T09:00:00Z", "2025-01-06T09:00:00Z"),
        ("[not json", "[not json"),
    ],
)
def test_parameter_values_are_parsed_like_papermill(raw: str, value: object) -> None:
    assert regress.parse_value(raw) == value
    assert type(regress.parse_value(raw)) is type(value)


def test_parse_parameters_needs_key_equals_value() -> None:
    assert regress.parse_parameters(["seed=11", "reason=lost", "memo=a=b"]) == {
        "seed": 11,
        "reason": "lost",
        "memo": "a=b",
    }
    with pytest.raises(regress.RegressError):
        regress.parse_parameters(["seed"])
    with pytest.raises(regress.RegressError):
        regress.parse_parameters(["not-an-identifier=1"])


@pytest.mark.parametrize(
    "key", ["secret_x", "client_SECRET", "token", "accessToken", "db_password", "API_KEY"]
)
def test_a_secret_looking_parameter_is_refused(key: str, tmp_path: Path) -> None:
    value = "hunter2-value"
    code, stdout, stderr = run_cli(
        "--notebooks", str(FIXTURES), "--out", str(tmp_path / "out"), "-p", f"{key}={value}"
    )
    assert code == 2
    assert stdout == ""
    assert f"refusing parameter {key!r}" in stderr
    assert "papermill writes every parameter into the executed notebook" in stderr
    assert value not in stderr
    assert not (tmp_path / "out").exists()  # refused before anything ran


def test_a_parameter_value_that_is_a_secret_is_refused() -> None:
    with pytest.raises(regress.RegressError, match="looks like a client-secret"):
        regress.check_parameters({"note": SIM_SECRET})
    regress.check_parameters({"profile": "sim", "seed": 7, "reason": "lost"})


def test_discover_takes_numbered_notebooks_and_selections(tmp_path: Path) -> None:
    for name in ("01_pass.ipynb", "02_param.ipynb", "03_guarded.ipynb"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    shutil.copy(ROOT / "notebooks" / "_template.ipynb", tmp_path / "_template.ipynb")
    (tmp_path / "notes.ipynb").write_text("{}")
    (tmp_path / "1_short.ipynb").write_text("{}")

    def names(*selection: str) -> list[str]:
        return [p.name for p in regress.discover(tmp_path, selection)]

    assert names() == ["01_pass.ipynb", "02_param.ipynb", "03_guarded.ipynb"]
    assert names("03", "01_pass") == ["01_pass.ipynb", "03_guarded.ipynb"]
    assert names("0[23]_*") == ["02_param.ipynb", "03_guarded.ipynb"]
    assert names("notebooks/02_param.ipynb") == ["02_param.ipynb"]
    assert names("*") == [
        "01_pass.ipynb",
        "02_param.ipynb",
        "03_guarded.ipynb",
        "1_short.ipynb",
        "notes.ipynb",
    ]
    assert names("_template") == ["_template.ipynb"]
    with pytest.raises(regress.RegressError, match="no notebook matches '99'"):
        names("99")
    with pytest.raises(regress.RegressError, match="no notebooks folder"):
        regress.discover(tmp_path / "missing")


def test_add_arguments_plugs_into_the_kit_command() -> None:
    kit = argparse.ArgumentParser(prog="kit")
    regress.add_arguments(kit.add_subparsers(dest="command").add_parser("regress"))
    args = kit.parse_args(["regress", "04", "0[5-7]_*", "-p", "seed=11", "-j", "3", "--cell-timeout", "30"])
    assert args.func is regress.command
    assert (args.selection, args.parameters, args.jobs, args.cell_timeout) == (
        ["04", "0[5-7]_*"],
        ["seed=11"],
        3,
        30.0,
    )
    defaults = regress.build_parser().parse_args([])
    assert (defaults.out, defaults.notebooks, defaults.jobs, defaults.cell_timeout, defaults.progress) == (
        "out/regress",
        None,  # the notebooks shipped with the kit (kit.regress.discovery.packaged)
        None,
        120.0,
        None,
    )


@pytest.mark.parametrize("argv", [["-j", "0"], ["--cell-timeout", "0"], ["-p", "seed"], ["99_missing"]])
def test_usage_errors_exit_2(argv: list[str], tmp_path: Path) -> None:
    code, stdout, stderr = run_cli("--notebooks", str(FIXTURES), "--out", str(tmp_path / "out"), *argv)
    assert (code, stdout) == (2, "")
    assert stderr.startswith("kit regress: ")


def test_progress_is_silent_when_disabled_and_a_counter_without_tqdm(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = regress.NotebookResult(notebook="01_x.ipynb", status="passed", seconds=1.0, output=Path("o"))
    reports.progress(2, enabled=False)(result)
    assert capsys.readouterr() == ("", "")
    monkeypatch.setitem(sys.modules, "tqdm", None)  # as if tqdm were not installed
    advance = reports.progress(2, enabled=True)
    advance(result)
    advance(result)
    out, err = capsys.readouterr()
    assert out == ""
    assert "regress [1/2] 01_x.ipynb: passed" in err and err.endswith(
        "regress [2/2] 01_x.ipynb: passed\x1b[K\n"
    )
