"""``kit.regress.run`` from a plain script: no ``if __name__ == "__main__":`` guard, a thread
already running (so the workers are not forked), or the script on standard input. Worker
processes must never run the caller's script again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]

SCRIPT = f"""
import threading, time
from pathlib import Path
import kit.regress

print("script started", flush=True)
threading.Thread(target=time.sleep, args=(30,), daemon=True).start()  # no fork with a thread
report = kit.regress.run(["01"], notebooks_dir=Path({str(FIXTURES)!r}), out_dir=Path(OUT), jobs=2,
                         progress=False)
print("ok" if report.ok else "failed", len(report.results), flush=True)
"""


@pytest.mark.slow  # kit.regress.run from a script: ≈11 s
@pytest.mark.papermill
@pytest.mark.parametrize("how", ["file", "stdin"])
def test_a_script_without_a_main_guard_runs_once(how: str, tmp_path: Path) -> None:
    script = f"OUT = {str(tmp_path / 'out')!r}\n" + SCRIPT
    if how == "file":
        path = tmp_path / "job.py"
        path.write_text(script, encoding="utf-8")
        command, given = [sys.executable, str(path)], None
    else:
        command, given = [sys.executable, "-"], script
    done = subprocess.run(command, input=given, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("script started") == 1, done.stdout  # never again in a worker
    assert "ok 1" in done.stdout, (done.stdout, done.stderr[-2000:])
