"""The public surface is pinned; the client reaches the simulator only through one seam."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import kit
from kit import _env as env
from kit import errors
from tests.test_layout import ENTRY

KIT = Path(kit.__file__).resolve().parent
ROOT = KIT.parent
SANDBOX_VARIABLES = (env.BASE_URL, env.CLIENT_ID, env.CLIENT_SECRET)


def test_public_all_is_pinned_and_sorted() -> None:
    assert kit.__all__ == [
        "ApiError",
        "Client",
        "Hooks",
        "KitError",
        "Money",
        "Profile",
        "SandboxProfile",
        "Sensitive",
        "SimProfile",
        "connect",
        "errors",
        "webhooks",
    ]
    assert kit.__all__ == sorted(kit.__all__)
    for name in kit.__all__:
        assert hasattr(kit, name)
    assert kit.__version__ == importlib.metadata.version("partner-api-kit")  # one value: hatch reads it
    assert "version" in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dynamic"]


#: The modules users and notebooks import by name (docs/api.md, "The public API"; issue 30 item 3).
PUBLIC_MODULES = (
    "kit",
    "kit.errors",
    "kit.webhooks",
    "kit.models",
    "kit.register",
    "kit.crypto",
    "kit.notebook",
    "kit.sim",
    "kit.simulate",
    "kit.widgets",
    "kit.lab",
    "kit.lab.journeys",
    "kit.regress",
)


def test_the_public_api_is_documented_in_one_place() -> None:
    """docs/api.md's table names exactly these modules, and ``kit``'s row every name of ``__all__``."""
    section = (ROOT / "docs" / "api.md").read_text().split("# The public API", 1)[1].split("\n## ", 1)[0]
    rows = {
        line.split("|")[1].strip(): line.split("|")[2]
        for line in section.splitlines()
        if line.startswith("| `kit")
    }
    named = [module for cell in rows for module in re.findall(r"`(kit[\w.]*)`", cell)]
    assert sorted(named) == sorted(PUBLIC_MODULES)
    assert sorted(re.findall(r"`(\w+)`", rows["`kit`"])) == sorted([*kit.__all__, "__version__"])
    for module in PUBLIC_MODULES:
        importlib.import_module(module)


def test_kit_resolves_its_own_names_only_never_any_submodule() -> None:
    """No fallback: a submodule is reached by importing it, never as ``kit.<name>``."""
    code = (
        "import kit\n"
        "for name in ('fixtures', 'checks', 'crypto', 'models', 'sim', 'lab', 'no_such_thing'):\n"
        "    try:\n        getattr(kit, name)\n"
        "    except AttributeError as exc:\n        assert repr(name) in str(exc), exc\n"
        "    else:\n        raise AssertionError(f'kit.{name} resolved without an import')\n"
        "assert sorted(n for n in dir(kit) if not n.startswith('_')) == sorted(kit.__all__), dir(kit)\n"
        "import kit.models\n"
        "assert kit.models.Money is kit.Money\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=KIT.parent)


# The client core is kit/*.py and kit/_resources/: not the base (env, register), the entry room
# (the ``kit`` command's modules, as tests/test_layout.py lists them), the public aliases of the
# lab, nor the wings sim, lab, regress.
NOT_CLIENT = {
    "env.py",
    "register.py",
    "simulate.py",
    "widgets.py",
    *(f"{name.rpartition('.')[2]}.py" for name in ENTRY if name.count(".") == 1),
}
WINGS = ("notebook", "sim", "lab", "regress")


def _client_files() -> list[Path]:
    return [p for p in KIT.rglob("*.py") if p.relative_to(KIT).parts[0] not in (*WINGS, *NOT_CLIENT)]


def _imported(path: Path) -> set[str]:
    """Every module a file imports anywhere in it (``from a import b``: ``a`` and ``a.b``)."""
    nodes = list(ast.walk(ast.parse(path.read_text(), filename=str(path))))
    plain = {alias.name for n in nodes if isinstance(n, ast.Import) for alias in n.names}
    froms = [n for n in nodes if isinstance(n, ast.ImportFrom) and n.module]
    return plain | {str(n.module) for n in froms} | {f"{n.module}.{a.name}" for n in froms for a in n.names}


def _users(prefix: str) -> set[str]:
    """The core files importing ``prefix`` or a module below it."""
    return {
        str(p.relative_to(KIT))
        for p in _client_files()
        if any(m == prefix or m.startswith(prefix + ".") for m in _imported(p))
    }


def test_only_the_seam_imports_kit_sim_and_only_lazily() -> None:
    assert _users("kit.sim") == {"_embedded.py"}
    modules = sorted(
        "kit." + ".".join(p.relative_to(KIT).with_suffix("").parts).removesuffix(".__init__")
        for p in _client_files()
        if p.name != "__init__.py" or p.parent != KIT
    )
    code = (
        f"import sys, {', '.join(modules)}; "
        "loaded = [m for m in ('kit.sim', 'fastapi', 'uvicorn') if m in sys.modules]; "
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=KIT.parent)


def test_only_crypto_imports_joserfc() -> None:
    """And the JOSE glue it shares with the simulator (``kit._jose``, base room)."""
    assert _users("joserfc") == {"crypto.py", "_jose.py"}


def test_no_client_module_imports_authlib() -> None:
    assert _users("authlib") == set()


#: A named tuple's public methods: underscored only so that no field's name can clash with them.
_NAMEDTUPLE_API = {"_asdict", "_field_defaults", "_fields", "_make", "_replace"}


def _private_reaches(tree: ast.Module) -> list[ast.Attribute]:
    """``x._name`` where ``x`` is not ``self`` and ``_name`` is not defined in this module (nor
    a named tuple's public method)."""
    attributes = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute)]
    own = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    own |= {a.attr for a in attributes if isinstance(a.value, ast.Name) and a.value.id == "self"}
    own |= _NAMEDTUPLE_API
    return [
        a for a in attributes if a.attr.startswith("_") and not a.attr.startswith("__") and a.attr not in own
    ]


def test_no_core_module_reaches_into_another_modules_private_names() -> None:
    """Resources and sessions call the requestor's methods, never a client's or a requestor's
    private fields; no core module touches another's."""
    offenders = [
        f"{path.relative_to(KIT)}:{node.lineno} {ast.unparse(node)}"
        for path in _client_files()
        for node in _private_reaches(ast.parse(path.read_text(), filename=str(path)))
    ]
    assert offenders == []
    planted = ast.parse("def f(api, t):\n    return api._call('GET', t._replace(a=1))\n")
    assert [ast.unparse(n) for n in _private_reaches(planted)] == ["api._call"]


def test_import_kit_loads_the_client_only_when_used() -> None:
    code = (
        "import sys, kit; assert 'kit._client' not in sys.modules, 'eager'; "
        "assert sorted(kit.__all__) == sorted(n for n in kit.__all__ if n in dir(kit)); "
        "kit.connect; assert 'kit._client' in sys.modules; "
        "from kit import Sensitive; assert Sensitive is kit._sensitive.Sensitive"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=KIT.parent)


def test_a_resource_is_built_on_first_use_once_and_its_module_imported_then() -> None:
    code = (
        "import sys, threading, kit; api = kit.connect('sim'); api.sessions.create('anonymous'); "
        "loaded = sorted(m for m in sys.modules if m.startswith('kit._resources.')); "
        "assert loaded == ['kit._resources._base'], loaded; assert 'kit._results' not in sys.modules; "
        "seen = []; threads = [threading.Thread(target=lambda: seen.append(api.cards)) for _ in range(8)]; "
        "[t.start() for t in threads]; [t.join() for t in threads]; "
        "assert len({id(c) for c in seen}) == 1 and seen[0] is api.cards, seen; "
        "assert type(api.cards).__name__ == 'Cards' and 'kit._resources.cards' in sys.modules; "
        "assert 'kit._resources.webhooks' not in sys.modules; api.close()"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=KIT.parent, timeout=120)


def test_the_results_models_are_kit_models_own_though_defined_on_first_use() -> None:
    import pickle

    import kit.models

    card = kit.models.Card.from_wire({"card_id": "c1", "status": "active", "expires_on": "2028-01-31"})
    assert type(card) is kit.models.Card
    assert pickle.loads(pickle.dumps(card)) == card
    assert set(kit.models.__all__) <= set(dir(kit.models))
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        kit.models.Nothing  # noqa: B018


def test_sandbox_names_every_missing_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SANDBOX_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(errors.ConfigError) as info:
        kit.connect("sandbox")
    message = str(info.value)
    for name in SANDBOX_VARIABLES:
        assert name in message


def test_sandbox_names_only_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(env.BASE_URL, "https://sandbox.invalid")
    monkeypatch.setenv(env.CLIENT_ID, "partner")
    monkeypatch.delenv(env.CLIENT_SECRET, raising=False)
    with pytest.raises(errors.ConfigError) as info:
        kit.connect("sandbox")
    assert env.CLIENT_SECRET in str(info.value)
    assert env.BASE_URL not in str(info.value)


def test_sandbox_takes_keyword_arguments_and_has_no_sim(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SANDBOX_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    api = kit.connect(
        "sandbox", base_url="https://sandbox.invalid/", client_id="me", client_secret="s3cr3t-value"
    )
    try:
        assert api.config.base_url == "https://sandbox.invalid"
        assert "s3cr3t-value" not in repr(api) + repr(api.config)
        with pytest.raises(errors.NotAvailable) as info:
            api.sim  # noqa: B018
        assert isinstance(info.value, AttributeError)
        assert "sim profile" in str(info.value)
        assert not hasattr(api, "sim")
    finally:
        api.close()


def test_an_unknown_profile_is_a_config_error_and_an_unknown_option_a_type_error() -> None:
    with pytest.raises(errors.ConfigError, match="allowed: sim, sandbox"):
        kit.connect("production")
    with pytest.raises(TypeError, match="colour"):
        kit.connect("sim", colour="blue")  # type: ignore[call-arg]


def test_removed_savings_close_is_not_offered(api: kit.Client) -> None:
    assert not any("saving" in name for name in dir(api))
    assert not any("saving" in name for name in dir(api.cards) + dir(api.accounts))


def test_two_connects_share_one_simulator(make_client) -> None:  # type: ignore[no-untyped-def]
    a, b = make_client(), make_client()
    assert a.config.base_url == b.config.base_url
    assert a.device.device_id != b.device.device_id
    assert a.device.kid != b.device.kid


def test_calls_are_the_history_as_entries(api: kit.Client) -> None:
    api.sessions.init_data()
    entries = api.calls.entries()
    assert len(api.calls) == len(entries) == len(api.history) == 2  # token, init data
    assert [e.path for e in entries] == list(api.history["path"])
    assert api.calls is api.calls  # the client's own record, not a copy
