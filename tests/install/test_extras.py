"""A part used without its extra says which extra to install (``kit._extras.require``).

The extras are installed here, so their absence is simulated: ``importlib.util.find_spec``
answering ``None`` for chosen modules (in this process), or ``sys.modules[name] = None`` in a
child interpreter (``import name`` then fails as when it is not installed). The real thing, a
fresh virtual environment without extras, is ``tests/install/test_light_install.py`` (make slow).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

import kit
import kit._embedded
import kit._extras
import kit.cli
from kit.errors import ConfigError, KitError, MissingExtra

ROOT = Path(__file__).resolve().parents[2]


def _without(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """``find_spec`` answers ``None`` for ``names`` (as when not installed), as before otherwise."""
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> Any:
        return None if name in names else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_the_message_names_the_extra_the_command_and_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "fastapi", "Crypto")
    with pytest.raises(MissingExtra) as info:
        kit._extras.require("sim", "kit serve")
    message = str(info.value)
    assert message.startswith("kit serve needs the 'sim' extra: pip install 'partner-api-kit[sim]'")
    assert "missing: fastapi, Crypto" in message
    assert info.value.extra == "sim"
    assert isinstance(info.value, ConfigError) and isinstance(info.value, KitError)
    assert kit._extras.missing("sim") == ("fastapi", "Crypto")


def test_nothing_is_raised_when_the_extra_is_there() -> None:
    for extra in ("sim", "lab", "regress"):
        assert kit._extras.missing(extra) == ()
        kit._extras.require(extra, "this test")


def test_the_lab_needs_the_simulator(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "uvicorn")
    with pytest.raises(MissingExtra, match=r"pip install 'partner-api-kit\[lab\]' \(missing: uvicorn\)"):
        kit._extras.require("lab", "kit.simulate")


def test_connect_sim_names_the_sim_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "fastapi")
    with pytest.raises(MissingExtra, match=r"kit.connect\('sim'\) needs the 'sim' extra") as info:
        kit.connect("sim")
    assert info.value.extra == "sim"
    with pytest.raises(MissingExtra):
        kit._embedded.embedded_base_url()


@pytest.mark.parametrize(
    ("argv", "absent", "extra"),
    [
        (["serve", "--port", "0"], "uvicorn", "sim"),
        (["walk"], "ipywidgets", "lab"),
        (["regress", "04", "-p", "seed=11"], "papermill", "regress"),
        (["regress", "--help"], "papermill", "regress"),
    ],
)
def test_the_kit_command_names_the_extra_and_exits_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    absent: str,
    extra: str,
) -> None:
    _without(monkeypatch, absent)
    assert kit.cli.main(argv) == 2
    err = capsys.readouterr().err
    assert f"kit {argv[0]}: " in err
    assert f"pip install 'partner-api-kit[{extra}]'" in err and absent in err


@pytest.mark.parametrize(
    ("module", "absent", "error", "extra"),
    [
        ("kit.simulate", "ipywidgets", "MissingExtra", "lab"),
        ("kit.widgets", "matplotlib", "MissingExtra", "lab"),
        ("kit.lab.journeys", "fastapi", "MissingExtra", "lab"),
        ("kit.regress", "papermill", "MissingExtra", "regress"),
        ("kit.sim", "fastapi", "ModuleNotFoundError", "sim"),
        ("kit.sim.server", "fastapi", "ModuleNotFoundError", "sim"),
    ],
)
def test_importing_a_part_without_its_extra_names_it(
    module: str, absent: str, error: str, extra: str
) -> None:
    code = (
        f"import sys; sys.modules[{absent!r}] = None\n"
        f"try:\n    import {module}\n"
        "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
        "else:\n    print('imported')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert out.startswith(f"{error} ")
    assert f"pip install 'partner-api-kit[{extra}]'" in out and absent in out


def test_the_extras_table_matches_pyproject() -> None:
    """Every extra the code checks is declared, the lab's includes the simulator's, and ``all``
    holds every one."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(kit._extras.EXTRAS) <= set(declared)
    assert set(kit._extras.EXTRAS["sim"]) <= set(kit._extras.EXTRAS["lab"])
    assert "partner-api-kit[sim]" in declared["lab"]
    assert declared["all"] == ["partner-api-kit[sim,lab,regress,dask]"]
    assert set(kit._extras.EXTRAS) == {"sim", "lab", "regress", "dask"}
