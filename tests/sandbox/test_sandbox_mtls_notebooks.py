"""``kit regress -p profile=sandbox --client-cert F --client-key K --ca-bundle C`` against a
sandbox that requires mutual TLS (:mod:`tests.support.mtls`).

The options reach the kernels through the environment: the token fetched before any kernel
starts, the notebooks' clients, notebook 13's own side clients (its version probe and the plain
client of its partner code path) all present the certificate. The key is encrypted, its
passphrase in ``PARTNER_API_CLIENT_KEY_PASSPHRASE``: neither the key nor the passphrase nor any
of the paths reaches an output, a report, the HAR files, the history or the log.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kit import _env as env
from kit.regress import cli
from tests.notebooks.junit_check import valid_results
from tests.support.mtls import PASSPHRASE, MtlsSandbox, mtls_sandbox

# five notebooks through papermill (about 20 s): in make slow, which CI runs after make test
pytestmark = [pytest.mark.papermill, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = (
    "01_partner_token.ipynb",
    "02_session_init_data.ipynb",
    "08_webhooks.ipynb",
    "10_whats_new_in_1_2_0.ipynb",
    "13_migrating_to_1_2_0.ipynb",
)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MtlsSandbox]:
    with mtls_sandbox(tmp_path_factory.mktemp("mtls")) as running:
        yield running


def test_the_notebooks_run_over_mutual_tls_and_nothing_of_the_key_is_written(
    sandbox: MtlsSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    for name in (env.CLIENT_CERT, env.CLIENT_KEY, env.CA_BUNDLE, env.ACCESS_TOKEN, env.EXPECT_CHOICES):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv(env.PARTNER_CHOICES, raising=False)
    partner = sandbox.environment(cert=False)
    ca_bundle = partner.pop(env.CA_BUNDLE)
    for name, value in partner.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv(env.CLIENT_KEY_PASSPHRASE, PASSPHRASE)
    files, out, kept = sandbox.files, tmp_path / "out", tmp_path / "history"
    # relative paths, as a partner types them: the kernels run in the notebooks' folder
    monkeypatch.chdir(files.ca.parent)
    code = cli.main(
        [
            *(name[:2] for name in NOTEBOOKS),
            "-p",
            "profile=sandbox",
            "--notebooks",
            str(ROOT / "notebooks"),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--no-progress",
            "--har",
            "--history",
            str(kept),
            "--log-level",
            "DEBUG",
            "--client-cert",
            files.client_cert.name,
            "--client-key",
            files.client_key_encrypted.name,
            "--ca-bundle",
            Path(ca_bundle).name,
        ]
    )
    logged = capfd.readouterr()
    ran = {n["notebook"]: n for n in valid_results(out)["notebooks"]}
    assert sorted(ran) == sorted(NOTEBOOKS), logged.err
    for name, result in ran.items():  # every cell ran, and nothing leaked
        assert result["status"] == "passed", (name, result["error"])
    checks = valid_results(out)["checks"]
    assert not [c for c in checks if c["outcome"] == "failed"], [
        c for c in checks if c["outcome"] == "failed"
    ]
    # 12 probed both versions and walked its partner code path under each, with its own clients
    migration = [c["outcome"] for c in checks if c["notebook"] == "13_migrating_to_1_2_0.ipynb"]
    assert migration and set(migration) == {"passed"}, migration
    assert code == 0, logged.err

    # Independent of the run's own scan: the key's PEM lines (either form), the passphrase and
    # the paths, in no file written and not in the log.
    secrets = [PASSPHRASE, *_pem_lines(files.client_key), *_pem_lines(files.client_key_encrypted)]
    paths = [str(p) for p in (files.client_cert, files.client_key_encrypted, files.ca)]
    written = [p for p in (*out.rglob("*"), *kept.rglob("*")) if p.is_file()]
    assert any(p.suffix == ".har" for p in written) and any(p.suffix == ".ipynb" for p in written)
    for where, text in [
        *((p.name, p.read_text(encoding="utf-8", errors="replace")) for p in written),
        ("log", logged.out + logged.err),
    ]:
        assert not [s for s in secrets if s in text], f"the key or its passphrase in {where}"
        assert not [p for p in paths if p in text], f"a TLS path in {where}"


def _pem_lines(path: Path) -> list[str]:
    """The base64 lines of a PEM file (its ``-----BEGIN …-----`` frame left out)."""
    return [
        line
        for line in path.read_text(encoding="ascii").splitlines()
        if line and not line.startswith("-----")
    ]


def test_an_unusable_file_stops_the_run_before_any_kernel_starts(
    sandbox: MtlsSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in sandbox.environment().items():
        monkeypatch.setenv(name, value)
    files, out = sandbox.files, tmp_path / "out"
    options = ["01", "-p", "profile=sandbox", "--notebooks", str(ROOT / "notebooks"), "--out", str(out)]
    code = cli.main(
        [*options, "--client-cert", str(files.client_cert), "--client-key", str(files.stranger_key)]
    )
    said = capsys.readouterr().err
    assert code == 2 and f"the client key ({env.CLIENT_KEY}) does not match the certificate" in said
    assert not out.exists() or not list(out.rglob("*.ipynb"))
    code = cli.main([*options, "--ca-bundle", str(tmp_path / "missing.pem")])
    assert (
        code == 2 and f"the CA bundle {tmp_path / 'missing.pem'} ({env.CA_BUNDLE})" in capsys.readouterr().err
    )
