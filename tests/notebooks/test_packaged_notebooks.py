"""The notebooks shipped with the kit, ``kit notebooks copy DIR``, ``kit --version`` and
``kit regress --log-level`` — without the wheel (``tests/install/test_wheel_regress.py`` runs
the installed one, make slow)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from kit import cli
from kit.regress import discovery
from kit.regress.model import RegressError
from tests.notebooks.helpers import ROOT, run_cli
from tests.notebooks.test_regress_drift import notebook


def _kit(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(argv))
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def test_kit_version_is_the_package_metadata() -> None:
    code, out, _ = _kit("--version")
    assert code == 0 and out == f"kit {version('partner-api-kit')}\n"


def test_in_a_checkout_the_packaged_notebooks_are_the_repositorys() -> None:
    assert discovery.packaged() == ROOT / "notebooks"
    assert cli.build_parser().parse_args(["regress"]).notebooks is None  # no cwd-relative default


def test_the_wheel_maps_the_notebooks_folder_into_the_package() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapped = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert mapped["notebooks"] == "kit/_notebooks" and mapped["data"] == "kit/_data"
    assert Path(discovery.__file__).resolve().parents[1].name == "kit"  # packaged() looks in kit/_notebooks


def test_kit_notebooks_copy_makes_editable_copies_and_replaces_nothing(tmp_path: Path) -> None:
    code, out, err = _kit("notebooks", "copy", str(tmp_path / "mine"))
    assert code == 0, err
    shipped = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert sorted(p.name for p in (tmp_path / "mine").glob("*.ipynb")) == shipped
    assert "_template.ipynb" in shipped and f"kit regress --notebooks {tmp_path / 'mine'}" in out
    (tmp_path / "mine" / "00_quickstart.ipynb").write_text("{}", encoding="utf-8")  # an edit
    code, _, err = _kit("notebooks", "copy", str(tmp_path / "mine"))
    assert code == 2 and "already holds 00_quickstart.ipynb" in err
    assert (tmp_path / "mine" / "00_quickstart.ipynb").read_text(encoding="utf-8") == "{}"


def test_without_shipped_notebooks_the_run_asks_for_a_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(discovery, "__file__", "/nowhere/kit/regress/discovery.py")
    with pytest.raises(RegressError, match="ships no notebooks: pass --notebooks DIR"):
        discovery.packaged()


@pytest.mark.slow  # a kit regress run: ≈12 s
@pytest.mark.papermill
def test_log_level_shows_the_kit_log_on_stderr_for_the_run_only(tmp_path: Path) -> None:
    notebook(tmp_path / "nb", "01_x.ipynb", "pass")
    code, _, stderr = run_cli(
        "--notebooks", str(tmp_path / "nb"), "--out", str(tmp_path / "out"), "--log-level", "info"
    )
    assert code == 0
    assert " INFO kit.regress: 1 notebook run(s) from " in stderr
    quiet = run_cli("--notebooks", str(tmp_path / "nb"), "--out", str(tmp_path / "again"))
    assert quiet[0] == 0 and quiet[2] == ""  # the handler went with the run


def test_the_kits_notebooks_ask_for_the_lab_extra_when_it_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, p=None: None if n == "ipywidgets" else real(n, p)
    )
    code, _, stderr = run_cli("00")
    assert code == 2
    assert "kit regress on the kit's notebooks needs the 'lab' extra" in stderr
    assert "pip install 'partner-api-kit[lab]'" in stderr
