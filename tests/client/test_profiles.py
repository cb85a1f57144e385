"""The profile object (``kit._profiles``): looked up once, asked everywhere, never compared by name."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import kit
from kit import _env as env
from kit import errors
from kit._profiles import PROFILES, Profile, SandboxProfile, SimProfile, lookup

KIT = Path(kit.__file__).resolve().parent
NAMES = set(PROFILES)


def _name_comparisons(tree: ast.AST) -> list[ast.AST]:
    """Comparisons of a profile's name (``x == "sim"``, ``"sandbox" in (…)``, ``!=``…) and
    ``match`` cases on one."""
    found: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            constants = [
                c.value
                for part in parts
                for c in ast.walk(part)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            ]
            if NAMES & set(constants):
                found.append(node)
        elif (
            isinstance(node, ast.MatchValue)
            and isinstance(node.value, ast.Constant)
            and node.value.value in NAMES
        ):
            found.append(node)
    return found


def test_no_module_outside_kit_profiles_compares_a_profile_name() -> None:
    offenders = [
        f"{path.relative_to(KIT)}:{node.lineno} {ast.unparse(node)}"  # type: ignore[attr-defined]
        for path in sorted(KIT.rglob("*.py"))
        if path.name != "profiles.py" or path.parent != KIT
        for node in _name_comparisons(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert offenders == []
    planted = ast.parse('if config.profile == "sim":\n    pass\nok = "sandbox" in names\n')
    assert len(_name_comparisons(planted)) == 2


def test_a_name_is_looked_up_once_into_a_profile_object() -> None:
    assert isinstance(lookup("sim"), SimProfile) and isinstance(lookup("sandbox"), SandboxProfile)
    chosen = SimProfile()
    assert lookup(chosen) is chosen and isinstance(lookup(SandboxProfile), SandboxProfile)
    with pytest.raises(errors.ConfigError, match="allowed: sim, sandbox"):
        lookup("staging")
    sim, sandbox = SimProfile(), SandboxProfile()
    assert (sim.control_plane, sim.server_choices, sim.secrets_may_leave) == (True, True, True)
    assert (sandbox.control_plane, sandbox.server_choices, sandbox.secrets_may_leave) == (False, False, False)
    assert sim.reaches_receiver("https://far.example") and not sandbox.reaches_receiver("https://far.example")
    assert sandbox.reaches_receiver("http://127.0.0.1:8000")


def test_config_holds_the_profile_object(api: kit.Client) -> None:
    assert isinstance(api.config.profile, SimProfile) and api.config.profile.name == "sim"
    assert "profile='sim'" in repr(api)


class Staging(Profile):
    """A partner's staging: one class (settings from PARTNER_API_*, no control plane)."""

    name = "staging"


def test_a_third_profile_is_one_class_and_works_with_connect(
    make_client: Callable[..., kit.Client], sim_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_client()  # a reset simulator
    client_id, secret = next(iter(env.SIM_PARTNER_CLIENTS.items()))
    monkeypatch.setenv(env.BASE_URL, sim_url)
    monkeypatch.setenv(env.CLIENT_ID, client_id)
    monkeypatch.setenv(env.CLIENT_SECRET, secret)
    with kit.connect(Staging, max_retries=0) as api:
        assert api.config.profile.name == "staging" and api.config.base_url == sim_url
        assert api.sessions.create("anonymous").session_type == "anonymous"
        assert list(api.history["status"]) == [200, 200, 201]
        with pytest.raises(errors.NotAvailable, match="staging"):
            api.sim  # noqa: B018
        assert api.webhooks.reachable  # its API is on this machine's loopback
    monkeypatch.delenv(env.CLIENT_SECRET)
    with pytest.raises(errors.ConfigError, match=f"the staging profile needs {env.CLIENT_SECRET}"):
        kit.connect(Staging())


def test_personas_come_from_the_profile(make_client: Callable[..., kit.Client], monkeypatch) -> None:  # type: ignore[no-untyped-def]
    api = make_client()
    assert api.personas is api.personas  # one source per client, its turn kept there
    first, second = api.personas.next(), api.personas.next()
    assert first.persona_id != second.persona_id
    assert make_client().personas.next().persona_id == first.persona_id  # a new client starts over
    assert api.personas.ids()[0] == api.personas.get(0).persona_id
    monkeypatch.delenv(env.SANDBOX_FIXTURES, raising=False)
    sandbox = kit.connect("sandbox", base_url="https://sandbox.invalid", client_id="me", client_secret="s")
    with sandbox, pytest.raises(errors.FixturesError, match=env.SANDBOX_FIXTURES):
        sandbox.personas.get(0)


def test_the_core_touches_neither_ipython_nor_a_process_wide_record() -> None:
    """A client inside a partner's web server: no IPython loaded, and no module-level list,
    dict, set or deque of ``kit`` (outside the simulator) grows with a second client's calls."""
    code = """
import collections, sys, kit

def sizes():
    out = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("kit") or name.startswith("kit.sim"):
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, (list, dict, set, collections.deque)) and not attr.startswith("__"):
                out[f"{name}.{attr}"] = len(value)
    return out

def journey():
    with kit.connect("sim") as api:
        api.sessions.create("anonymous")
        api.accounts.create()
        api.history, api.drift

journey()
before = sizes()
journey()
after = sizes()
grown = {k: (before.get(k), v) for k, v in after.items() if before.get(k) != v}
assert not grown, grown
assert "IPython" not in sys.modules, "the client core loaded IPython"
assert "kit.notebook" not in sys.modules, "the client core loaded the notebook companion"
"""
    subprocess.run([sys.executable, "-c", code], check=True, cwd=KIT.parent, timeout=120)
