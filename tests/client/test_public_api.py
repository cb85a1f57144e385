"""The public surface is pinned; the client reaches the simulator only through one seam."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kit
from kit import errors

KIT = Path(kit.__file__).resolve().parent


def test_public_all_is_pinned_and_sorted() -> None:
    assert kit.__all__ == [
        "ApiError",
        "Client",
        "KitError",
        "Money",
        "Sensitive",
        "connect",
        "errors",
        "webhooks",
    ]
    assert kit.__all__ == sorted(kit.__all__)
    for name in kit.__all__:
        assert hasattr(kit, name)


def _imports_of(path: Path) -> list[tuple[str, bool]]:
    """(module imported, at module level?) for every import in a file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    top_level = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        found += [(n, id(node) in top_level) for n in names]
    return found


# kit/cli.py is the simulator's launcher (``kit serve``), owned with the simulator; it is the
# one module outside kit/sim that may import kit.sim directly.
NOT_CLIENT = {"cli.py"}


def _client_files() -> list[Path]:
    return [p for p in KIT.rglob("*.py") if p.relative_to(KIT).parts[0] not in ("sim", *NOT_CLIENT)]


def test_only_the_seam_imports_kit_sim_and_only_lazily() -> None:
    offenders = []
    seam_imports = []
    for path in _client_files():
        for module, top in _imports_of(path):
            if module == "kit.sim" or module.startswith("kit.sim."):
                if path.name == "_embedded.py" and path.parent == KIT:
                    seam_imports.append((module, top))
                else:
                    offenders.append((str(path.relative_to(KIT)), module))
    assert offenders == []
    assert seam_imports, "the seam must import the simulator"
    assert all(not top for _, top in seam_imports), "the seam imports kit.sim inside a function"


def test_only_crypto_imports_joserfc() -> None:
    users = {
        str(p.relative_to(KIT))
        for p in _client_files()
        for module, _ in _imports_of(p)
        if module.split(".")[0] == "joserfc"
    }
    # kit/register.py and kit/cli.py belong to the lead; neither is expected to use joserfc.
    assert users == {"crypto.py"}


def test_no_client_module_imports_authlib() -> None:
    users = [p for p in _client_files() for m, _ in _imports_of(p) if m.startswith("authlib")]
    assert users == []


def test_sandbox_names_every_missing_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PARTNER_API_BASE_URL", "PARTNER_API_CLIENT_ID", "PARTNER_API_CLIENT_SECRET"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(errors.ConfigError) as info:
        kit.connect("sandbox")
    message = str(info.value)
    for name in ("PARTNER_API_BASE_URL", "PARTNER_API_CLIENT_ID", "PARTNER_API_CLIENT_SECRET"):
        assert name in message


def test_sandbox_names_only_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARTNER_API_BASE_URL", "https://sandbox.invalid")
    monkeypatch.setenv("PARTNER_API_CLIENT_ID", "partner")
    monkeypatch.delenv("PARTNER_API_CLIENT_SECRET", raising=False)
    with pytest.raises(errors.ConfigError) as info:
        kit.connect("sandbox")
    assert "PARTNER_API_CLIENT_SECRET" in str(info.value)
    assert "PARTNER_API_BASE_URL" not in str(info.value)


def test_sandbox_takes_keyword_arguments_and_has_no_sim(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PARTNER_API_BASE_URL", "PARTNER_API_CLIENT_ID", "PARTNER_API_CLIENT_SECRET"):
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


def test_unknown_profile_and_option_are_config_errors() -> None:
    with pytest.raises(errors.ConfigError, match="allowed: sim, sandbox"):
        kit.connect("production")
    with pytest.raises(errors.ConfigError, match="colour"):
        kit.connect("sim", colour="blue")


def test_removed_savings_close_is_not_offered(api: kit.Client) -> None:
    assert not any("saving" in name for name in dir(api))
    assert not any("saving" in name for name in dir(api.cards) + dir(api.accounts))


def test_two_connects_share_one_simulator(make_client) -> None:  # type: ignore[no-untyped-def]
    a, b = make_client(), make_client()
    assert a.config.base_url == b.config.base_url
    assert a.device.device_id != b.device.device_id
    assert a.device.kid != b.device.kid
