"""Tagged sections on the sandbox: ``kit regress`` does not execute a ``needs-control`` cell
where the API has no control plane, and reports each check in it skipped with the reason a
``needs="control plane"`` check gets (:mod:`kit.notebook.tags`, :mod:`kit.regress.sections`).

The stand-in (``kit serve --no-control``) is on loopback: its ``needs-receiver`` cell runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from kit import regress
from kit.notebook import NEEDS
from kit.notebook.tags import CHECKS, NEEDS_CONTROL, NEEDS_RECEIVER


def _notebook(folder: Path) -> Path:
    cell = nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook(
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        }
    )
    nb.cells = [
        cell('profile = "sim"', metadata={"tags": ["parameters"]}),
        cell("import kit.notebook\nfrom kit.notebook import check\napi = kit.notebook.connect(profile)"),
        cell(
            'raise RuntimeError("a needs-control cell ran on a sandbox")\n'
            'with check("the clock moved", choice="A45") as c:\n'
            "    c.expect(1, 1, what='one')\n",
            metadata={"tags": [NEEDS_CONTROL]},
        ),
        cell(
            'raise RuntimeError("ran too")\n'
            '@check("faults are injected", spec="event.1", needs="control plane")\n'
            "def _():\n    pass\n",
            metadata={"tags": [CHECKS, NEEDS_CONTROL]},
        ),
        cell(
            'with check("the receiver section ran", spec="event.1") as c:\n'
            "    c.expect(api.config.profile.name, 'sandbox', what='profile')\n",
            metadata={"tags": [CHECKS, NEEDS_RECEIVER]},
        ),
        cell("api.close()"),
    ]
    path = folder / "01_sections.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.mark.slow  # a notebook against a sandbox: ≈5 s
@pytest.mark.papermill
def test_a_needs_control_section_is_not_run_and_its_checks_are_reported_skipped(
    sandbox_env: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    _notebook(folder)
    report = regress.run(
        notebooks_dir=folder,
        out_dir=tmp_path / "out",
        parameters={"profile": "sandbox"},
        jobs=1,
        progress=False,
    )
    assert not report.failed, [r.message for r in report.failed]
    reason = NEEDS["control plane"].reason
    checks = {c["title"]: c for c in json.loads((tmp_path / "out" / "results.json").read_text())["checks"]}
    assert {name: (c["outcome"], c["message"]) for name, c in checks.items()} == {
        "the clock moved": ("skipped", reason),
        "faults are injected": ("skipped", reason),
        "the receiver section ran": ("passed", ""),
    }
    assert reason in report.summary_path.read_text(encoding="utf-8")
    executed = nbformat.read(tmp_path / "out" / "01_sections.ipynb", as_version=4)
    skipped = next(c for c in executed.cells if c.metadata.get("tags") == [NEEDS_CONTROL])
    assert skipped.source.startswith('raise RuntimeError("a needs-control')  # its own source kept
    shown = "".join(o.get("text", "") for o in skipped.outputs if o.output_type == "stream")
    assert f"section skipped ({NEEDS_CONTROL}): {reason}" in shown
