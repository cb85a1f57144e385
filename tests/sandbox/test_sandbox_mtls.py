"""A sandbox that requires mutual TLS (:mod:`tests.support.mtls`: the simulator without a control
plane behind uvicorn's HTTPS, ``CERT_REQUIRED``, certificates made by ``trustme``).

Without a client certificate nothing gets through and the error says to set one; with
``PARTNER_API_CLIENT_CERT`` / ``…_CLIENT_KEY`` / ``…_CA_BUNDLE`` a sandbox client gets its token
and onboards a customer; ``kit regress``'s token fetch and notebook 13's version probe present
the same certificate. The notebooks over it: test_sandbox_mtls_notebooks.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import kit
import kit.simulate
from kit import _env as env
from kit.errors import TransportError
from kit.lab.journeys import onboard
from kit.regress.leaks import scan_text
from kit.regress.model import RegressError
from kit.regress.sandbox import fetch_partner_token
from kit.regress.served import probe
from tests.support.mtls import PASSPHRASE, MtlsSandbox, mtls_sandbox

TLS_VARIABLES = (env.CLIENT_CERT, env.CLIENT_KEY, env.CLIENT_KEY_PASSPHRASE, env.CA_BUNDLE)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MtlsSandbox]:
    with mtls_sandbox(tmp_path_factory.mktemp("mtls")) as running:
        yield running


@pytest.fixture
def partner(sandbox: MtlsSandbox, monkeypatch: pytest.MonkeyPatch) -> MtlsSandbox:
    """The partner's environment for the sandbox, client certificate included."""
    for name in (*TLS_VARIABLES, env.ACCESS_TOKEN, env.PARTNER_CHOICES, env.EXPECT_CHOICES):
        monkeypatch.delenv(name, raising=False)
    for name, value in sandbox.environment().items():
        monkeypatch.setenv(name, value)
    return sandbox


def test_without_a_client_certificate_the_sandbox_refuses_and_the_error_says_why(
    partner: MtlsSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(env.CLIENT_CERT)
    monkeypatch.delenv(env.CLIENT_KEY)
    with kit.connect("sandbox", sleep=lambda _: None) as api, pytest.raises(TransportError) as refused:
        api.token()
    said = str(refused.value)
    assert "client certificate (mutual TLS)" in said and env.CLIENT_CERT in said and env.CLIENT_KEY in said
    history = api.history
    assert list(history["code"]) == ["connection-error"] and history["status"].isna().all()


def test_a_certificate_of_another_ca_is_refused(partner: MtlsSandbox) -> None:
    files = partner.files
    with (
        kit.connect(
            "sandbox", client_cert=files.stranger_cert, client_key=files.stranger_key, sleep=lambda _: None
        ) as api,
        pytest.raises(TransportError, match=f"refuse the client certificate of {env.CLIENT_CERT}"),
    ):
        api.token()


def test_the_server_is_not_trusted_without_its_ca(
    partner: MtlsSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(env.CA_BUNDLE)
    with (
        kit.connect("sandbox", sleep=lambda _: None) as api,
        pytest.raises(TransportError, match=env.CA_BUNDLE),
    ):
        api.token()


def test_with_the_variables_a_sandbox_client_onboards_over_mutual_tls(partner: MtlsSandbox) -> None:
    with kit.connect("sandbox") as api:
        token = api.token()
        assert token.token_type == "Bearer"
        done = onboard(api, persona="persona-02", expiration="sliding")
        assert done.status == "established" and done.person_id is not None
        assert api.session is not None and api.session.session_type == "person"
        assert api.drift.empty
        assert (api.history["status"] < 400).all()


def test_an_encrypted_key_and_a_combined_file_work_as_options(
    partner: MtlsSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(env.CLIENT_CERT)
    monkeypatch.delenv(env.CLIENT_KEY)
    files = partner.files
    with kit.connect(
        "sandbox",
        client_cert=files.client_cert,
        client_key=files.client_key_encrypted,
        client_key_passphrase=PASSPHRASE,
    ) as api:
        api.sessions.create("anonymous")
        assert api.accounts.create().account_id.startswith("acc_")
    with kit.connect("sandbox", client_cert=files.client_both) as api:  # key and certificate in one file
        assert api.token().token_type == "Bearer"


def test_kit_regress_fetches_its_token_over_mutual_tls(
    partner: MtlsSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert fetch_partner_token()
    monkeypatch.delenv(env.CLIENT_CERT)
    monkeypatch.delenv(env.CLIENT_KEY)
    with pytest.raises(RegressError, match=f"client certificate \\(mutual TLS\\), set {env.CLIENT_CERT}"):
        fetch_partner_token()
    monkeypatch.setenv(env.CLIENT_CERT, str(partner.files.client_cert))
    monkeypatch.setenv(env.CLIENT_KEY, str(partner.files.stranger_key))
    with pytest.raises(RegressError, match="does not match the certificate"):
        fetch_partner_token()


def test_the_version_probe_presents_the_client_certificate(partner: MtlsSandbox) -> None:
    """Notebook 13 asks the sandbox which versions it serves with a client of its own."""
    with kit.connect("sandbox") as api:
        asked = probe(api.config.base_url or "", "1.1.0", tls=api.config.tls)
        assert asked.served, asked.why()
    with pytest.raises(httpx.HTTPError):  # neither its CA trusted nor a certificate presented
        probe(partner.base_url, "1.1.0")


def test_a_relative_path_set_here_is_found_from_another_folder(
    partner: MtlsSandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A kernel or a worker runs in another folder: the paths it is given are absolute."""
    monkeypatch.chdir(partner.files.ca.parent)
    monkeypatch.setenv(env.CLIENT_CERT, partner.files.client_cert.name)
    with kit.connect("sandbox") as api:
        monkeypatch.chdir(tmp_path)
        assert api.config.tls is not None and Path(api.config.tls.client_cert or "").is_absolute()
        assert api.token().token_type == "Bearer"


@pytest.mark.slow  # a population over mutual TLS: ≈3 s
def test_a_population_plays_its_customers_over_mutual_tls(partner: MtlsSandbox) -> None:
    """Its token is fetched here, its worker processes are given the files: every customer onboards."""
    result = kit.simulate.run(8, seed=7, shards=2, profile="sandbox", server_cap=4, progress=False)
    assert result.partial.customers == 4 and result.settings["requested"] == 8


def test_the_passphrase_is_a_secret_the_leak_scan_finds(partner: MtlsSandbox) -> None:
    found = scan_text(f"the key opens with {PASSPHRASE}", environ={env.CLIENT_KEY_PASSPHRASE: PASSPHRASE})
    assert [f.kind for f in found] == ["secret"]


def test_a_request_made_by_hand_uses_the_clients_certificate(partner: MtlsSandbox) -> None:
    """``api.config.http_client()``: a plain httpx client of the server with the kit's TLS files,
    as notebooks 02 and 10 make their requests by hand; a bare ``httpx.Client`` is refused."""
    with kit.connect("sandbox", sleep=lambda _: None) as api:
        with api.config.http_client() as http:
            answer = http.get("/webhooks/jwks")  # no token: the server answers, and refuses it
        assert answer.status_code == 401
        assert str(answer.url).startswith(partner.base_url)
        with pytest.raises(httpx.HTTPError), httpx.Client(base_url=partner.base_url, verify=False) as bare:
            bare.get("/webhooks/jwks")  # no client certificate: the handshake fails
