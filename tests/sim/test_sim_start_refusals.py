"""What a simulator refuses to start with wherever it is bound (A70): a control token anyone
could guess, a partner client named twice. ``kit serve`` runs in a subprocess, as users run it."""

from __future__ import annotations

import pytest

from kit import register
from kit._env import SIM_CONTROL_TOKEN, SIM_PARTNERS
from kit.sim import Settings, create_app
from kit.sim.guard import StartRefused, start_refusal
from tests.support.launcher import serve_exits, serve_process

SHORTEST = int(register.value("A70")["control_token_min_chars"])


def _refused_in_one_line(stderr: str) -> str:
    """The refusal ``kit serve`` printed: one line, no traceback."""
    assert stderr.startswith("refusing to start: ") and stderr.count("\n") == 1, stderr
    assert "Traceback" not in stderr
    return stderr


def test_the_register_asks_sixteen_characters() -> None:
    assert SHORTEST == 16


def test_kit_serve_refuses_a_control_token_of_one_character_and_takes_one_of_sixteen() -> None:
    done = serve_exits(env={SIM_CONTROL_TOKEN: "x"})
    assert done.returncode == 2 and done.stdout == ""
    line = _refused_in_one_line(done.stderr)
    assert SIM_CONTROL_TOKEN in line and f"at least {SHORTEST} characters" in line
    with serve_process(env={SIM_CONTROL_TOKEN: "k" * SHORTEST}) as served:
        assert served.base_url.startswith("http://127.0.0.1:")


def test_a_control_token_one_short_of_the_minimum_is_refused_through_the_python_api_too() -> None:
    short = "t" * (SHORTEST - 1)
    with pytest.raises(StartRefused, match=f"at least {SHORTEST} characters"):
        create_app(Settings(control_token=short))
    assert "at least" in (start_refusal(Settings(host="10.0.0.5", control_token=short)) or "")
    assert start_refusal(Settings(control_token="t" * SHORTEST)) is None
    assert start_refusal(Settings(control=False, control_token=short)) is None  # nothing it guards


def test_kit_serve_refuses_a_partner_client_named_twice_without_showing_a_secret() -> None:
    partners = "team-a:first-secret-of-team-a,team-b:secret-of-team-b,team-a:second-secret-of-team-a"
    done = serve_exits(env={SIM_PARTNERS: partners})
    assert done.returncode == 2 and done.stdout == ""
    line = _refused_in_one_line(done.stderr)
    assert SIM_PARTNERS in line and "'team-a' twice" in line
    assert "secret-of" not in line
