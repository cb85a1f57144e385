"""Mutual TLS settings: ``kit.connect(client_cert=, client_key=, client_key_passphrase=, ca_bundle=)``
or ``PARTNER_API_CLIENT_CERT``, ``…_CLIENT_KEY``, ``…_CLIENT_KEY_PASSPHRASE``, ``…_CA_BUNDLE``.

A file that cannot be used is a ConfigError naming the setting when the client is made, never
at its first call; a TLS context is built once per set of files and built again when one of them
changes; the passphrase is never shown. The handshakes themselves: tests/sandbox/test_sandbox_mtls.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import kit
from kit import _env as env
from kit._tls import TlsFiles, tls_context_for
from kit.errors import ConfigError
from tests.support.mtls import PASSPHRASE, CertFiles, make_certificates

SANDBOX = {"base_url": "https://sandbox.example", "client_id": "me", "client_secret": "s3cret"}


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> CertFiles:
    return make_certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture(autouse=True)
def _no_tls_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (env.CLIENT_CERT, env.CLIENT_KEY, env.CLIENT_KEY_PASSPHRASE, env.CA_BUNDLE):
        monkeypatch.delenv(name, raising=False)


def _presented(api: kit.Client) -> TlsFiles:
    assert api.config.tls is not None
    return api.config.tls


def test_the_files_come_from_the_environment_or_the_options(
    certs: CertFiles, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(env.CLIENT_CERT, str(certs.client_cert))
    monkeypatch.setenv(env.CLIENT_KEY, str(certs.client_key))
    monkeypatch.setenv(env.CA_BUNDLE, str(certs.ca))
    with kit.connect("sandbox", **SANDBOX) as api:
        files = _presented(api)
        assert (files.client_cert, files.client_key, files.ca_bundle) == (
            str(certs.client_cert),
            str(certs.client_key),
            str(certs.ca),
        )
    # an option wins over its variable; a relative path is made absolute where the client is made
    monkeypatch.chdir(certs.ca.parent)
    with kit.connect(
        "sandbox", client_key=Path("client.key"), client_cert="client-both.pem", **SANDBOX
    ) as api:
        files = _presented(api)
        assert files.client_cert == str(certs.client_both) and files.client_key == str(certs.client_key)
    # a certificate given brings its own key: none here (its file holds it), not the variable's
    with kit.connect("sandbox", client_cert="client-both.pem", **SANDBOX) as api:
        files = _presented(api)
        assert files.client_key is None and files.ca_bundle == str(certs.ca)


def test_without_any_tls_setting_the_shared_context_stays(certs: CertFiles) -> None:
    with kit.connect("sandbox", **SANDBOX) as api:
        assert api.config.tls is None


def test_two_sets_of_files_get_two_contexts_and_a_changed_file_a_new_one(
    certs: CertFiles, tmp_path: Path
) -> None:
    shutil.copy(certs.client_cert, tmp_path / "cert.pem")
    shutil.copy(certs.client_key, tmp_path / "key.pem")
    mine = TlsFiles.resolve({"client_cert": tmp_path / "cert.pem", "client_key": tmp_path / "key.pem"}, {})
    both = TlsFiles.resolve({"client_cert": certs.client_both, "ca_bundle": certs.ca}, {})
    assert mine is not None and both is not None
    first = mine.context()
    assert mine.context() is first  # built once per set of files
    assert tls_context_for("https://sandbox.example", mine) is first
    assert both.context() is not first  # another set: another context, trusting its CA
    assert len(both.context().get_ca_certs()) == 1
    assert tls_context_for("http://127.0.0.1:8000", mine) is not first  # plain http: no TLS at all
    # the partner renews its certificate in place: the next client presents the new one
    shutil.copy(certs.stranger_cert, tmp_path / "cert.pem")
    shutil.copy(certs.stranger_key, tmp_path / "key.pem")
    assert mine.context() is not first


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"client_cert": "missing.pem"}, f"/missing.pem ({env.CLIENT_CERT}): no such file"),
        ({"ca_bundle": "missing-ca.pem"}, "the CA bundle /"),
        ({"client_key": "client.key"}, f"a client key needs its certificate: set {env.CLIENT_CERT}"),
        ({"client_cert": "client.pem", "client_key": "stranger.key"}, "does not match the certificate"),
        ({"client_cert": "client.pem"}, f"set {env.CLIENT_KEY} to the key's file"),
        (
            {"client_cert": "client.pem", "client_key": "client-encrypted.key"},
            f"set {env.CLIENT_KEY_PASSPHRASE}",
        ),
        (
            {
                "client_cert": "client.pem",
                "client_key": "client-encrypted.key",
                "client_key_passphrase": "no",
            },
            f"a wrong {env.CLIENT_KEY_PASSPHRASE}",
        ),
        ({"ca_bundle": "client.key"}, f"{env.CA_BUNDLE} ("),
        ({"client_cert": "client.key", "client_key": "client.key"}, "are not a PEM certificate and key"),
    ],
)
def test_an_unusable_file_is_a_config_error_when_the_client_is_made(
    certs: CertFiles, monkeypatch: pytest.MonkeyPatch, options: dict[str, str], said: str
) -> None:
    monkeypatch.chdir(certs.ca.parent)
    with pytest.raises(ConfigError, match="PARTNER_API_") as refused:
        kit.connect("sandbox", **options, **SANDBOX)  # type: ignore[arg-type]
    assert said in refused.value.message
    assert "PRIVATE KEY" not in str(refused.value) and "BEGIN" not in str(refused.value)


def test_an_encrypted_key_opens_with_its_passphrase_which_is_never_shown(
    certs: CertFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(env.CLIENT_KEY_PASSPHRASE, PASSPHRASE)
    with kit.connect(
        "sandbox", client_cert=certs.client_cert, client_key=certs.client_key_encrypted, **SANDBOX
    ) as api:
        files = _presented(api)
        assert files.client_key_passphrase is not None
        assert files.client_key_passphrase.reveal() == PASSPHRASE
        shown = f"{api.config!r} {files!r} {files.client_key_passphrase!r} {files.client_key_passphrase}"
        assert PASSPHRASE not in shown and "battery" not in shown
    # the variable is a secret the leak scan knows
    assert env.SECRET_VARIABLES[env.CLIENT_KEY_PASSPHRASE]


def test_a_plain_http_client_never_reads_the_files(certs: CertFiles) -> None:
    """The embedded simulator (``http://``) does no TLS: the files are not loaded, so a
    variable left set for a sandbox does not stop a ``sim`` client."""
    with kit.connect("sim", client_cert="missing.pem") as api:
        assert api.sessions.create("anonymous").session_type == "anonymous"
