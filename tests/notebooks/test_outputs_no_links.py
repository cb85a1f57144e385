"""What the kit writes into a folder someone else can write in: never through a link left there,
a new file of mode 0600 whatever the umask (``kit._files``, docs/internals.md "The files
`kit regress` writes")."""

from __future__ import annotations

import contextlib
import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from kit import _files as files
from kit import cli
from kit._fixtures import write_sim_fixtures
from kit._wire_view import write_har
from kit.regress import conformance, history, migration_report
from tests.notebooks.helpers import run_cli
from tests.notebooks.test_regress_drift import notebook
from tests.support.launcher import serve_exits

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="POSIX links and modes")

UNTOUCHED = "not the kit's to write\n"


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A umask that takes nothing away: a file's mode is then only what its writer chose."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _plant(folder: Path, name: str, outside: Path, *, dangling: bool = False) -> Path:
    """A link ``folder/name`` to ``outside``: a file holding :data:`UNTOUCHED`, or nothing."""
    if not dangling:
        outside.write_text(UNTOUCHED, encoding="utf-8")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).symlink_to(outside)
    return outside


def _written(path: Path) -> bool:
    """``path`` is a regular file (not a link), its user's alone."""
    found = path.lstat()
    return stat.S_ISREG(found.st_mode) and stat.S_IMODE(found.st_mode) == files.MODE


def _untouched(outside: Path, *, dangling: bool = False) -> bool:
    if dangling:
        return not outside.exists()
    return outside.read_text(encoding="utf-8") == UNTOUCHED


def _kit(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    return code, err.getvalue()


def test_kit_notebooks_copy_refuses_a_name_taken_by_a_link_to_nowhere(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    outside = _plant(mine, "00_quickstart.ipynb", tmp_path / "outside.ipynb", dangling=True)
    code, err = _kit("notebooks", "copy", str(mine))
    assert code == 2 and "already holds 00_quickstart.ipynb" in err
    assert _untouched(outside, dangling=True)
    assert [p.name for p in mine.iterdir()] == ["00_quickstart.ipynb"]  # nothing copied


def test_kit_notebooks_copy_makes_files_of_its_user_alone(tmp_path: Path, open_umask: None) -> None:
    code, err = _kit("notebooks", "copy", str(tmp_path / "mine"))
    assert code == 0, err
    copies = [p for p in (tmp_path / "mine").rglob("*") if not p.is_dir()]
    assert copies and all(_written(p) for p in copies)
    folders = [p for p in (tmp_path / "mine").rglob("*") if p.is_dir()]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o700 for p in folders), folders


def test_kit_notebooks_copy_refuses_an_images_folder_that_is_a_link(tmp_path: Path) -> None:
    mine, elsewhere = tmp_path / "mine", tmp_path / "elsewhere"
    mine.mkdir()
    elsewhere.mkdir()
    (mine / "images").symlink_to(elsewhere, target_is_directory=True)
    code, err = _kit("notebooks", "copy", str(mine))
    assert code == 2 and "already holds images" in err
    assert list(elsewhere.iterdir()) == [] and [p.name for p in mine.iterdir()] == ["images"]


def test_a_new_file_refuses_a_name_taken_by_a_link_to_nowhere(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    outside = _plant(tmp_path, "taken", tmp_path / "nowhere", dangling=True)
    with pytest.raises(FileExistsError):
        files.write(taken, "x", replace=False)
    assert _untouched(outside, dangling=True) and taken.is_symlink()


@pytest.mark.slow  # a kit regress run: ≈5 s
@pytest.mark.papermill
def test_kit_regress_replaces_links_in_out_and_never_writes_through_them(
    tmp_path: Path, open_umask: None
) -> None:
    notebook(tmp_path / "nb", "01_x.ipynb", "pass")
    out = tmp_path / "out"
    dangling = {
        "junit.xml": False,
        "summary.md": True,
        "results.json": False,
        "01_x.ipynb": False,  # the executed notebook
        "01_x.har": True,
    }
    planted = {n: _plant(out, n, tmp_path / f"outside-{n}", dangling=d) for n, d in dangling.items()}
    code, _, err = run_cli("--notebooks", str(tmp_path / "nb"), "--out", str(out), "--har")
    assert code == 0, err
    for name, outside in planted.items():
        assert _untouched(outside, dangling=dangling[name]), name
        assert _written(out / name), name


def test_a_history_record_takes_a_new_name_beside_a_link(tmp_path: Path, open_umask: None) -> None:
    folder = tmp_path / "history"
    outside = _plant(folder, "results-20250106T090000.json", tmp_path / "outside.json", dangling=True)
    kept = history.keep(folder, {"started": "2025-01-06T09:00:00"})
    assert kept.name == "results-20250106T090000-2.json" and _written(kept)
    assert _untouched(outside, dangling=True)


def test_the_reports_of_kit_regress_replace_links(tmp_path: Path, open_umask: None) -> None:
    out = tmp_path / "out"
    outside = {
        name: _plant(out, name, tmp_path / f"outside-{name}")
        for name in ("conformance.md", "conformance.json", "migration.md", "migration.json", "mine.toml")
    }
    table = conformance.from_results([], tmp_path)
    conformance.write(table, out)
    conformance.write_choices(table, out / "mine.toml")  # --write-choices FILE
    migration_report.write_report(out, ["1.1.0", "1.2.0-20221215"], {})
    for name, target in outside.items():
        assert _untouched(target) and _written(out / name), name


def test_a_har_file_replaces_a_link(tmp_path: Path, open_umask: None) -> None:
    outside = _plant(tmp_path, "calls.har", tmp_path / "outside.har", dangling=True)
    assert write_har(tmp_path / "calls.har", []) == 0
    assert _untouched(outside, dangling=True) and _written(tmp_path / "calls.har")
    assert '"entries"' in (tmp_path / "calls.har").read_text(encoding="utf-8")


def test_kit_serve_sandbox_fixtures_never_write_through_a_link(tmp_path: Path, open_umask: None) -> None:
    nowhere = _plant(tmp_path, "new.toml", tmp_path / "nowhere.toml", dangling=True)
    done = serve_exits("--sandbox-fixtures", str(tmp_path / "new.toml"))
    assert done.returncode == 2 and "exists: pass --overwrite-fixtures" in done.stderr
    assert _untouched(nowhere, dangling=True)
    outside = _plant(tmp_path, "old.toml", tmp_path / "outside.toml")
    assert write_sim_fixtures(str(tmp_path / "old.toml"), overwrite=True) is None  # --overwrite-fixtures
    assert _untouched(outside) and _written(tmp_path / "old.toml")
