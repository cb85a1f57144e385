"""A sandbox stand-in that requires mutual TLS: the simulator without a control plane, served
by uvicorn over HTTPS on loopback, asking every client for a certificate signed by its CA.

The certificates are made here with ``trustme``: one CA signs the server's certificate
(``127.0.0.1``, ``localhost``) and the partner's client certificate; a second CA signs a client
certificate the server does not trust. Every file is written to a temporary folder.

    with mtls_sandbox(tmp_path) as sandbox:
        kit.connect("sandbox", base_url=sandbox.base_url, ca_bundle=sandbox.files.ca, ...)
"""

from __future__ import annotations

import asyncio
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trustme
import uvicorn
from cryptography.hazmat.primitives import serialization

from kit import _env as env
from kit._fixtures import write_sim_fixtures
from kit.sim import Settings, create_app

__all__ = [
    "PASSPHRASE",
    "CertFiles",
    "MtlsSandbox",
    "make_certificates",
    "mtls_sandbox",
]

#: The passphrase of the encrypted copy of the partner's key (a secret: never in an output).
PASSPHRASE = "correct horse battery staple"
_START_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class CertFiles:
    """The PEM files of one test's certificates."""

    ca: Path  # the CA that signed the server's certificate and the partner's
    server_cert: Path
    server_key: Path
    client_cert: Path  # the partner's certificate, alone
    client_key: Path  # its private key
    client_both: Path  # its key and certificate in one file
    client_key_encrypted: Path  # its key, encrypted with PASSPHRASE
    stranger_cert: Path  # a client certificate of a CA the server does not trust
    stranger_key: Path

    def key_text(self) -> str:
        """The partner's private key's PEM body (what must never reach an output)."""
        return self.client_key.read_text(encoding="ascii")


def make_certificates(folder: Path) -> CertFiles:
    """A CA, the server's certificate, the partner's client certificate (its key also encrypted)
    and a stranger's, written into ``folder``."""
    ca, other_ca = trustme.CA(), trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    client = ca.issue_cert("partner@sandbox.example")
    stranger = other_ca.issue_cert("stranger@sandbox.example")
    files = CertFiles(
        *(
            folder / name
            for name in (
                "ca.pem",
                "server.pem",
                "server.key",
                "client.pem",
                "client.key",
                "client-both.pem",
                "client-encrypted.key",
                "stranger.pem",
                "stranger.key",
            )
        )
    )
    ca.cert_pem.write_to_path(str(files.ca))
    server.cert_chain_pems[0].write_to_path(str(files.server_cert))
    server.private_key_pem.write_to_path(str(files.server_key))
    client.cert_chain_pems[0].write_to_path(str(files.client_cert))
    client.private_key_pem.write_to_path(str(files.client_key))
    client.private_key_and_cert_chain_pem.write_to_path(str(files.client_both))
    stranger.cert_chain_pems[0].write_to_path(str(files.stranger_cert))
    stranger.private_key_pem.write_to_path(str(files.stranger_key))
    key = serialization.load_pem_private_key(client.private_key_pem.bytes(), password=None)
    encrypted = serialization.BestAvailableEncryption(PASSPHRASE.encode())
    files.client_key_encrypted.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encrypted)
    )
    return files


@dataclass(frozen=True)
class MtlsSandbox:
    """A running stand-in: its HTTPS base URL, its certificates and its fixtures file."""

    base_url: str
    files: CertFiles
    fixtures: Path

    def environment(self, *, cert: bool = True) -> dict[str, str]:
        """A partner's environment for it: credentials, fixtures, the CA bundle and (``cert``)
        the client certificate and key."""
        client_id, secret = next(iter(env.SIM_PARTNER_CLIENTS.items()))
        variables = {
            env.BASE_URL: self.base_url,
            env.CLIENT_ID: client_id,
            env.CLIENT_SECRET: secret,
            env.SANDBOX_FIXTURES: str(self.fixtures),
            env.CA_BUNDLE: str(self.files.ca),
        }
        if cert:
            variables[env.CLIENT_CERT] = str(self.files.client_cert)
            variables[env.CLIENT_KEY] = str(self.files.client_key)
        return variables


class _Server(uvicorn.Server):
    """uvicorn's server, saying when its start-up is over (as ``kit.sim.server``'s does)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: Any = None) -> None:
        try:
            await super().startup(sockets=sockets)
        finally:
            self.ready.set()


@contextmanager
def mtls_sandbox(folder: Path) -> Iterator[MtlsSandbox]:
    """``kit serve --no-control --sandbox-fixtures F`` as a partner's sandbox would serve it
    behind mutual TLS: uvicorn with ``ssl_cert_reqs=CERT_REQUIRED`` in a thread, on a port it
    binds itself (``port=0``, read back from its socket), stopped at the end."""
    files = make_certificates(folder)
    fixtures = folder / "fixtures.toml"
    refused = write_sim_fixtures(str(fixtures), overwrite=True)  # kit serve's --sandbox-fixtures file
    assert refused is None, refused
    config = uvicorn.Config(
        create_app(Settings(control=False)),
        host="127.0.0.1",
        port=0,
        log_config=None,
        access_log=False,
        lifespan="on",
        loop="asyncio",
        ws="none",
        timeout_graceful_shutdown=2,
        ssl_certfile=str(files.server_cert),
        ssl_keyfile=str(files.server_key),
        ssl_ca_certs=str(files.ca),
        ssl_cert_reqs=ssl.CERT_REQUIRED,
    )
    server = _Server(config)

    def serve() -> None:
        try:
            asyncio.run(server.serve())
        finally:
            server.ready.set()

    thread = threading.Thread(target=serve, name="mtls-sandbox", daemon=True)
    thread.start()
    try:
        server.ready.wait(_START_TIMEOUT_S)
        assert server.started, "the mTLS sandbox did not start"
        port = server.servers[0].sockets[0].getsockname()[1]
        yield MtlsSandbox(f"https://127.0.0.1:{port}", files, fixtures)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
