"""``kit.connect``'s options are keyword-only parameters with types, and so are
``kit.notebook.connect``'s: a wrong one is a ``TypeError`` a type checker sees."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import kit
import kit.notebook

ROOT = Path(__file__).resolve().parents[2]


def test_every_option_is_keyword_only_and_typed() -> None:
    parameters = list(inspect.signature(kit.connect).parameters.values())
    profile, *options = parameters
    assert profile.name == "profile"
    assert options and all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in options)
    assert all(p.annotation is not inspect.Parameter.empty for p in parameters)
    assert {"base_url", "client_secret", "drift", "hooks", "transport", "record"} <= {p.name for p in options}


def test_a_wrong_option_is_a_type_error_at_once() -> None:
    with pytest.raises(TypeError, match="retries"):
        kit.connect("sim", retries=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="retries"):
        kit.notebook.connect("sim", retries=3)  # type: ignore[call-arg]


@pytest.mark.slow  # a mypy run: ≈17 s
def test_a_type_checker_sees_a_wrong_option_of_either_connect(tmp_path: Path) -> None:
    snippet = tmp_path / "uses_connect.py"
    snippet.write_text(
        "import kit\nimport kit.notebook\n\n"
        'kit.connect("sim", retries=3)\n'
        'kit.notebook.connect("sim", colour="blue")\n'
        'kit.connect("sim", timeout="slow")\n'
        'kit.connect("sim", drift="loud")\n'
        'kit.connect("sim", max_retries=2, drift="raise", record=True)\n'
    )
    found = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", str(snippet)],  # the repository's settings
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = [line for line in found.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in errors] == ["4", "5", "6", "7"], found.stdout
    assert 'Unexpected keyword argument "retries"' in errors[0]
    assert 'Unexpected keyword argument "colour"' in errors[1]
