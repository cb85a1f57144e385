"""``kit serve --ssl-certfile/--ssl-keyfile`` (HTTPS from the server itself) and ``--log-level``,
run as users run them: ``kit serve`` in a subprocess, a certificate made here by a test CA."""

from __future__ import annotations

import argparse
import os
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import trustme

from kit.cli import build_parser
from tests.sim.helpers.wire import init_data, partner_token
from tests.support.launcher import serve_exits, serve_process


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def pems(ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(certificate chain, private key) of 127.0.0.1 and localhost, issued by ``ca``."""
    folder = tmp_path_factory.mktemp("tls")
    issued = ca.issue_cert("127.0.0.1", "localhost")
    cert, key = folder / "cert.pem", folder / "key.pem"
    for blob in issued.cert_chain_pems:
        blob.write_to_path(str(cert), append=True)
    issued.private_key_pem.write_to_path(str(key))
    return cert, key


def _trusting(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


@pytest.fixture(scope="module")
def served(pems: tuple[Path, Path]) -> Iterator[str]:
    cert, key = pems
    with serve_process("--ssl-certfile", str(cert), "--ssl-keyfile", str(key)) as server:
        yield server.base_url


def test_kit_serve_answers_https_to_a_client_trusting_its_ca(served: str, ca: trustme.CA) -> None:
    assert served.startswith("https://127.0.0.1:")  # the first line names the scheme it serves
    with httpx.Client(base_url=served, verify=_trusting(ca), timeout=10) as http:
        assert http.get("/_sim/health").json()["status"] == "ok"
        assert init_data(http, partner_token(http))["enc"] == ["A256GCM"]


def test_kit_serve_over_tls_is_refused_unverified_and_in_clear(served: str) -> None:
    with (
        pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"),
        httpx.Client(timeout=10) as http,
    ):
        http.get(f"{served}/_sim/health")  # the default trust does not know the test CA
    with pytest.raises(httpx.HTTPError), httpx.Client(timeout=10) as http:
        http.get(served.replace("https://", "http://") + "/_sim/health")  # no plain HTTP beside it


def _args(*argv: str) -> argparse.Namespace:
    """``kit serve``'s arguments as its parser reads them."""
    return build_parser().parse_args(["serve", *argv])


def test_the_tls_files_are_checked_before_anything_starts(pems: tuple[Path, Path], tmp_path: Path) -> None:
    from kit import _serveopts

    cert, key = pems
    both = tmp_path / "both.pem"
    both.write_bytes(key.read_bytes() + cert.read_bytes())
    stranger = tmp_path / "stranger.pem"
    trustme.CA().issue_cert("127.0.0.1").private_key_pem.write_to_path(str(stranger))
    assert _serveopts.refusal(_args()) is None
    assert _serveopts.refusal(_args("--ssl-certfile", str(cert), "--ssl-keyfile", str(key))) is None
    assert _serveopts.refusal(_args("--ssl-certfile", str(both))) is None  # the key inside it
    refused = {
        ("--ssl-keyfile", str(key)): "--ssl-keyfile needs --ssl-certfile",
        ("--ssl-certfile", str(tmp_path / "missing.pem")): "No such file",
        ("--ssl-certfile", str(cert)): "--ssl-certfile",  # no key inside it, none given
        ("--ssl-certfile", str(cert), "--ssl-keyfile", str(stranger)): "--ssl-certfile",  # not its key
    }
    for argv, said in refused.items():
        assert said in (_serveopts.refusal(_args(*argv)) or ""), argv
    # and kit serve says so, and starts nothing
    done = serve_exits("--ssl-certfile", str(cert), "--ssl-keyfile", str(stranger))
    assert done.returncode == 2 and "refusing to start: --ssl-certfile" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "Serving on" not in done.stdout


def test_kit_serve_log_level_shows_uvicorns_log() -> None:
    from kit import _serveopts

    with serve_process("--log-level", "info") as server:
        httpx.get(f"{server.base_url}/_sim/health")
    assert "Application startup complete" in server.stderr()
    assert _serveopts.uvicorn_options(_args())["log_level"] == "warning"  # by default
    assert _serveopts.uvicorn_options(_args("--access-log"))["log_level"] == "info"  # to show it


def test_kit_serve_reads_a_proxys_forwarded_address_for_its_access_log_only() -> None:
    import uvicorn
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    from kit import _serveopts

    # Behind a reverse proxy on loopback, the access log names the client, not the proxy.
    with serve_process("--access-log") as server:
        answer = httpx.get(f"{server.base_url}/_sim/health", headers={"X-Forwarded-For": "203.0.113.7"})
    assert answer.status_code == 200
    assert '203.0.113.7:0 - "GET /_sim/health HTTP/1.1" 200' in server.stdout(), server.stdout()

    # Without the access log nothing shows the address, so uvicorn's layer that reads it is left out.
    async def app(scope: object, receive: object, send: object) -> None:
        return None

    def layers(args: argparse.Namespace) -> object:
        # only the option under test: the others would configure this process's logging
        proxy_headers = _serveopts.uvicorn_options(args)["proxy_headers"]
        config = uvicorn.Config(app, proxy_headers=proxy_headers, log_config=None)
        config.load()
        return config.loaded_app

    assert not isinstance(layers(_args()), ProxyHeadersMiddleware)
    assert isinstance(layers(_args("--access-log")), ProxyHeadersMiddleware)


def test_kit_serve_log_level_reaches_the_kits_loggers_and_no_others() -> None:
    # What uvicorn is given configures its loggers and the kit's; another library's stay as
    # they were (no handler of its own, nothing printed at INFO).
    code = (
        "import argparse, logging, uvicorn\n"
        "from kit import _serveopts\n"
        "parser = argparse.ArgumentParser(); parser.add_argument('--access-log', action='store_true')\n"
        "_serveopts.add_arguments(parser)\n"
        "args = parser.parse_args(['--log-level', 'info'])\n"
        "uvicorn.Config(lambda *a: None, **_serveopts.uvicorn_options(args)).configure_logging()\n"
        "logging.getLogger('kit.sim').info('from the simulator')\n"
        "logging.getLogger('kit.sim').debug('below the level')\n"
        "logging.getLogger('httpx').info('from another library')\n"
        "assert not logging.getLogger().handlers\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "kit.sim: from the simulator" in done.stderr
    assert "below the level" not in done.stderr and "another library" not in done.stderr


def test_kit_health_asks_over_https_trusting_the_ca_named(
    served: str, ca: trustme.CA, tmp_path: Path
) -> None:
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    command = [sys.executable, "-m", "kit", "health", served]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=60, env={**os.environ, "SSL_CERT_FILE": str(bundle)}
    )
    assert done.returncode == 0 and done.stdout.startswith(f"healthy: {served}"), done.stderr
    unknown = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 1 and "CERTIFICATE_VERIFY_FAILED" in unknown.stderr
