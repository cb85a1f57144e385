"""``-p profile=sandbox``: one partner token, fetched before any kernel, handed over by environment."""

from __future__ import annotations

import base64
import json
import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import httpx
import pytest

from kit import _env as env
from kit import regress
from tests.notebooks.helpers import FIXTURES, load, run_cli, stream_text

CLIENT_ID = "partner-under-test"


class _TokenServer(ThreadingHTTPServer):
    """A minimal ``POST /oauth/accesstoken`` (the wire contract) that counts its calls."""

    def __init__(self, secret: str) -> None:
        super().__init__(("127.0.0.1", 0), _TokenHandler)
        self.secret = secret
        self.token = secrets.token_urlsafe(32)
        self.calls: list[str] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _TokenHandler(BaseHTTPRequestHandler):
    server: _TokenServer

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        self.server.calls.append(self.path)
        basic = base64.b64encode(f"{CLIENT_ID}:{self.server.secret}".encode()).decode()
        if self.path != "/oauth/accesstoken" or parse_qs(body) != {"grant_type": ["client_credentials"]}:
            self._answer(400, {"error": "invalid_request"})
        elif self.headers.get("Authorization") != f"Basic {basic}":
            self._answer(401, {"error": "invalid_client"})
        else:
            self._answer(
                200, {"access_token": self.server.token, "token_type": "Bearer", "expires_in": 86400}
            )

    def _answer(self, status: int, body: dict[str, object]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def sandbox(monkeypatch: pytest.MonkeyPatch) -> Iterator[_TokenServer]:
    server = _TokenServer(secret=secrets.token_urlsafe(24))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv(env.BASE_URL, server.base_url)
    monkeypatch.setenv(env.CLIENT_ID, CLIENT_ID)
    monkeypatch.setenv(env.CLIENT_SECRET, server.secret)
    monkeypatch.delenv(env.ACCESS_TOKEN, raising=False)
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.slow  # a kit regress run against a sandbox: ≈6 s
@pytest.mark.papermill
def test_the_token_is_fetched_once_and_reaches_kernels_by_environment(
    sandbox: _TokenServer, tmp_path: Path
) -> None:
    code, stdout, _ = run_cli(
        "--notebooks",
        str(FIXTURES),
        "--out",
        str(tmp_path),
        "--jobs",
        "1",
        "-p",
        "profile=sandbox",
        "01",
        "02",
    )
    # The token server's thread makes regress spawn its worker (not fork): that path runs here.
    assert code == 0, stdout
    assert sandbox.calls == ["/oauth/accesstoken"]  # once for the whole run, two kernels
    executed = load(tmp_path / "01_pass.ipynb")
    assert "token in environment: True\n" in stream_text(executed)
    assert executed["metadata"]["papermill"]["parameters"] == {"profile": "sandbox"}
    for path in tmp_path.iterdir():
        text = path.read_text(encoding="utf-8")
        assert sandbox.token not in text and sandbox.secret not in text, path.name


def test_missing_sandbox_variables_are_named_before_any_kernel(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in regress.SANDBOX_ENV:
        monkeypatch.delenv(name, raising=False)
    code, stdout, stderr = run_cli(
        "--notebooks", str(FIXTURES), "--out", str(tmp_path), "-p", "profile=sandbox"
    )
    assert code == 2
    assert stdout == ""
    for name in regress.SANDBOX_ENV:
        assert name in stderr
    assert list(tmp_path.iterdir()) == []


def test_fetch_sends_client_credentials_by_basic_auth_and_form() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"access_token": "tok-123-ABC", "token_type": "Bearer"})

    variables = {
        env.BASE_URL: "https://sandbox.example/",
        env.CLIENT_ID: "me",
        env.CLIENT_SECRET: "s3cret-value",
    }
    token = regress.fetch_partner_token(variables, transport=httpx.MockTransport(answer))
    assert token == "tok-123-ABC"
    (request,) = seen
    assert (request.method, str(request.url)) == ("POST", "https://sandbox.example/oauth/accesstoken")
    assert request.headers["Authorization"] == "Basic " + base64.b64encode(b"me:s3cret-value").decode()
    assert request.content == b"grant_type=client_credentials"


def test_a_refused_token_request_names_the_oauth_error_not_the_secret() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"error": "invalid_client"})

    variables = {
        env.BASE_URL: "https://sandbox.example",
        env.CLIENT_ID: "me",
        env.CLIENT_SECRET: "s3cret-value",
    }
    with pytest.raises(regress.RegressError) as caught:
        regress.fetch_partner_token(variables, transport=httpx.MockTransport(answer))
    assert "401" in str(caught.value) and "invalid_client" in str(caught.value)
    assert "s3cret-value" not in str(caught.value)
