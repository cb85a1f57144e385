"""A scheduled run from the installed package: the wheel, without the repository.

The wheel is built from this checkout; a fresh virtual environment under a temporary folder
gets it with the extras a scheduled run installs (``[regress,lab]``, as docs/scheduling.md
says; pip reaches the package index configured on the machine). There, outside the
repository, ``kit --version`` answers from the package metadata, ``kit regress 00 05`` runs
the notebooks shipped in the wheel and leaves a valid ``junit.xml`` and ``results.json``, and
``kit notebooks copy DIR`` puts editable copies in a folder.

Slow (a wheel and a fresh install): ``make slow`` runs it, ``make test`` does not.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.notebooks.junit_check import valid_junit, valid_results

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT_S = 900
RUN_TIMEOUT_S = 600
#: The extras of a scheduled run, as the scheduling guide's recipes install them.
EXTRAS = "regress,lab"


def _clean_env(**extra: str) -> dict[str, str]:
    """This environment without anything pointing at this checkout or this virtualenv."""
    dropped = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "JUPYTER_PATH"}
    return {**{k: v for k, v in os.environ.items() if k not in dropped}, **extra}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` folder of a fresh environment with the wheel and its scheduled extras."""
    home = tmp_path_factory.mktemp("wheel")
    wheels = home / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(wheels), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        cwd=home,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = wheels.glob("partner_api_kit-*.whl")
    venv.create(home / "venv", with_pip=True, clear=True)
    python = home / "venv" / "bin" / "python"
    pip = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-input", f"{wheel}[{EXTRAS}]"],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        env=_clean_env(),
        cwd=home,
    )
    assert pip.returncode == 0, pip.stderr[-3000:]
    return python.parent


def test_kit_regress_runs_the_packaged_notebooks_from_the_installed_wheel(
    installed: Path, tmp_path: Path
) -> None:
    kit = str(installed / "kit")
    version = subprocess.run([kit, "--version"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.strip().startswith("kit 0.")
    out = tmp_path / "out"
    ran = subprocess.run(
        [
            kit,
            "regress",
            "00",
            "05",
            "--out",
            str(out),
            "--jobs",
            "2",
            "--history",
            str(tmp_path / "history"),
        ],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        env=_clean_env(),
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert "| 00_quickstart.ipynb | passed |" in ran.stdout
    assert "| 05_cards_close_with_reason.ipynb | passed |" in ran.stdout
    valid_junit(out / "junit.xml")
    data = valid_results(out)
    assert [n["notebook"] for n in data["notebooks"]] == [
        "00_quickstart.ipynb",
        "05_cards_close_with_reason.ipynb",
    ]
    where = subprocess.run(
        [str(installed / "python"), "-c", "from kit.regress.discovery import packaged; print(packaged())"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_clean_env(),
        cwd=tmp_path,
    )
    assert "site-packages" in where.stdout and where.stdout.strip().endswith("kit/_notebooks")
    assert ROOT.as_posix() not in where.stdout
    copied = subprocess.run(
        [kit, "notebooks", "copy", str(tmp_path / "mine")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert copied.returncode == 0, copied.stderr
    assert (tmp_path / "mine" / "00_quickstart.ipynb").is_file()
