"""``kit proxy --to URL`` between the kit and ``kit serve --no-control --choices camel.toml``:
a client journey runs through it unchanged, hop-by-hop headers stop at it, and on SIGTERM it
writes a redacted HAR, the drift rows (an unknown path listed) and the conformance report."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import kit
from kit import register
from kit.lab.journeys import onboard
from tests.sandbox.conftest import CLIENT_SECRET, point_at
from tests.support.launcher import Served, proxy_process, serve_process, stop

CAMEL = register.data_dir() / "choices" / "camel.toml"


@pytest.fixture(scope="module")
def camel_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Path]]:
    fixtures = tmp_path_factory.mktemp("camel") / "fixtures.toml"
    with serve_process(
        "--no-control", "--choices", str(CAMEL), "--sandbox-fixtures", str(fixtures), "--log-level", "info"
    ) as served:
        yield served, fixtures


def _raw(base_url: str, request: bytes) -> bytes:
    host, port = base_url.rsplit("/", 1)[1].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_journey_runs_through_the_proxy_and_its_files_are_written(
    camel_sandbox: tuple[Served, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served, fixtures = camel_sandbox
    har, out, learned = tmp_path / "run.har", tmp_path / "out", tmp_path / "learned.toml"
    args = ("--choices", str(CAMEL), "--har", str(har), "--out", str(out), "--write-choices", str(learned))
    with proxy_process(served.base_url, *args) as proxy:
        point_at(monkeypatch, proxy.base_url, fixtures)
        with kit.connect("sandbox", choices=CAMEL, sleep=lambda _: None, record=True) as api:
            done = onboard(api, persona=0)
            assert done.status == "established"
            card = api.cards.create(done.account_id, type="temporary")
            assert api.cards.close(card.card_id, reason="lost").status == "closed"
            # the secrets the client's own recorder learned: the partner token, the session tokens
            secrets = [v for v, kind in api.wire_log.redactor._known.items() if "token" in kind]
        unknown = httpx.get(proxy.base_url + "/no/such/thing", timeout=10)
        assert unknown.status_code == 404
        stop(proxy.process)  # SIGTERM: the files are written on the way out
    log: dict[str, Any] = json.loads(har.read_text(encoding="utf-8"))["log"]
    assert log["version"] == "1.2" and len(log["entries"]) >= 8
    text = har.read_text(encoding="utf-8")
    assert secrets and CLIENT_SECRET not in text
    assert not [s for s in secrets if s in text]
    closes = [e for e in log["entries"] if e["request"]["url"].endswith("/close")]
    assert closes and closes[0]["response"]["status"] == 200
    rows = json.loads((out / "drift.json").read_text(encoding="utf-8"))
    assert [r for r in rows if r["kind"] == "unplaced" and r["operation"] == "GET /no/such/thing"]
    conformance = json.loads((out / "conformance.json").read_text(encoding="utf-8"))
    assert [u for u in conformance["unplaced"] if u["path"] == "/no/such/thing"]
    verdicts = {row["id"]: row for row in conformance["verdicts"]}
    for entry in ("A01", "A02", "A64", "A67", "A68"):  # what camel chose, shown by the traffic
        assert verdicts[entry]["verdict"] == "confirmed", verdicts[entry]
    shown = verdicts["A67"]["exchange"]
    assert (
        shown["source"] == "kit proxy"
        and log["entries"][shown["har_entry"]]["response"]["status"] == (shown["status"])
    )
    assert verdicts["A24"]["verdict"] == "never exercised"  # no webhook delivery crossed it
    assert "/no/such/thing" in (out / "conformance.md").read_text(encoding="utf-8")
    written = learned.read_text(encoding="utf-8")
    assert "[A67" in written and "[A68]" in written


def test_hop_by_hop_headers_stop_at_the_proxy(camel_sandbox: tuple[Served, Path], tmp_path: Path) -> None:
    """A header the request's ``Connection`` names is the connection's, not the upstream's: the
    upstream (here a second proxy recording what reached it) never sees ``x-secret``."""
    served, _ = camel_sandbox
    inner_har = tmp_path / "inner.har"
    with (
        proxy_process(served.base_url, "--choices", str(CAMEL), "--har", str(inner_har)) as inner,
        proxy_process(inner.base_url, "--choices", str(CAMEL)) as outer,
    ):
        port = outer.port
        answer = _raw(
            outer.base_url,
            f"GET /webhooks/jwks HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close, x-secret\r\n"
            "x-secret: 1\r\nx-kept: 2\r\n\r\n".encode(),
        )
        assert answer.startswith(b"HTTP/1.1 ")
        stop(inner.process)
    entries = json.loads(inner_har.read_text(encoding="utf-8"))["log"]["entries"]
    sent = {h["name"].lower() for h in entries[0]["request"]["headers"]}
    assert "x-kept" in sent and "x-secret" not in sent  # its own Connection header is the outer hop's


def test_a_request_naming_another_host_is_refused(camel_sandbox: tuple[Served, Path]) -> None:
    """The Host check of ``kit serve`` (A70), with ``--allowed-host`` as it has it."""
    served, _ = camel_sandbox
    with proxy_process(served.base_url, "--allowed-host", "proxy.example") as proxy:
        refused, allowed = (
            _raw(
                proxy.base_url,
                f"GET /v2/webhook-keys HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode(),
            )
            for host in ("attacker.example", "proxy.example")
        )
    assert refused.startswith(b"HTTP/1.1 400") and b"host-not-allowed" in refused
    assert allowed.startswith(b"HTTP/1.1 401"), allowed[:200]  # the upstream's answer: no token
    assert allowed.lower().count(b"\r\ndate:") == 1 and allowed.lower().count(b"\r\nserver:") == 1


@pytest.mark.slow  # notebooks through kit proxy: ≈8 s
@pytest.mark.papermill
def test_notebooks_hold_through_the_proxy_and_it_reports_as_kit_regress_does(
    camel_sandbox: tuple[Served, Path], tmp_path: Path
) -> None:
    """``kit regress -p profile=sandbox --choices camel`` through the proxy: the notebooks pass,
    and the dialect file the proxy writes agrees with the one ``kit regress --write-choices``
    writes for the same run on A67 and A68, with no drift on either side."""
    from kit import _choices as choices
    from kit.regress import conformance
    from tests.sandbox.conftest import assert_every_notebook_passed, regress_on

    served, fixtures = camel_sandbox
    out, proxied_file, run_file = tmp_path / "proxy-out", tmp_path / "proxy.toml", tmp_path / "regress.toml"
    args = ("--choices", str(CAMEL), "--out", str(out), "--write-choices", str(proxied_file))
    selection = ("05_cards_close_with_reason", "14_errors")
    with proxy_process(served.base_url, *args) as proxy:
        report = regress_on(proxy.base_url, fixtures, tmp_path / "run", choices=CAMEL, selection=selection)
        stop(proxy.process)
    assert_every_notebook_passed(report, len(selection))
    notebooks = Path(__file__).resolve().parents[2] / "notebooks"
    table = conformance.from_results(report.results, notebooks, CAMEL)
    conformance.write_choices(table, run_file, source="profile sandbox", expected=CAMEL)
    proxied, run = choices.load(proxied_file), choices.load(run_file)
    for entry in ("A67", "A68"):
        assert proxied.changes(entry) == run.changes(entry) == choices.load(CAMEL).changes(entry), entry
    drift = [
        r for r in json.loads((out / "drift.json").read_text(encoding="utf-8")) if r["kind"] != "unplaced"
    ]
    assert not report.drift and not drift, drift
    assert set(proxied.entries()) == set(run.entries())
    assert "# Conformance" in (out / "conformance.md").read_text(encoding="utf-8")
    # the verdicts per entry: the same from the proxy's traffic and the run's own wire
    verdicts = [
        {
            r["id"]: r["verdict"]
            for r in json.loads((d / "conformance.json").read_text(encoding="utf-8"))["verdicts"]
        }
        for d in (out, tmp_path / "run")
    ]
    for entry in ("A02", "A67", "A68"):
        assert verdicts[0][entry] == verdicts[1][entry] == "confirmed", entry
    # the proxy sees the runner's token request and the problems' codes; the run also its checks
    assert verdicts[0]["A01"] == verdicts[0]["A64"] == "confirmed"


def test_an_unreachable_upstream_is_a_502_problem() -> None:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with proxy_process(f"http://127.0.0.1:{port}") as proxy:
        answer = httpx.get(proxy.base_url + "/webhooks/jwks", timeout=20)
    assert answer.status_code == 502
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert answer.json()["code"] == "http-error"


def test_the_wire_path_of_a_moved_operation_is_checked_at_the_kits_path() -> None:
    from kit import _choices as choices
    from kit._dialect import Dialect
    from kit._proxylog import kit_path

    camel = Dialect.of(choices.load(CAMEL))
    assert kit_path(camel, "GET", "/v2/payment-cards/card_1") == "/cards/card_1"
    assert kit_path(camel, "POST", "/v2/accounts/acc_9/payment-cards") == "/accounts/acc_9/cards"
    assert kit_path(camel, "GET", "/v2/accounts/acc_9/payment-cards") == "/v2/accounts/acc_9/payment-cards"
    assert kit_path(camel, "POST", "/oauth/accesstoken") == "/oauth/accesstoken"


def test_hop_by_hop_headers_and_those_connection_names_are_dropped() -> None:
    from kit._proxy import _forwarded

    raw = [
        (b"Host", b"proxy"),
        (b"Connection", b"keep-alive, X-Secret"),
        (b"X-Secret", b"1"),
        (b"Keep-Alive", b"timeout=5"),
        (b"Proxy-Authorization", b"Basic x"),
        (b"TE", b"trailers"),
        (b"Transfer-Encoding", b"chunked"),
        (b"Upgrade", b"h2c"),
        (b"Trailer", b"x"),
        (b"X-Kept", b"2"),
    ]
    assert _forwarded(raw, request=True) == [(b"x-kept", b"2")]
    assert (b"host", b"proxy") in _forwarded(raw, request=False)


@pytest.mark.parametrize("dialect", ["default", "camel"])
def test_answers_are_checked_in_the_dialect_given(
    camel_sandbox: tuple[Served, Path], tmp_path: Path, dialect: str
) -> None:
    """The same token exchange: under the simulator's own choices the server's header names
    are differences (A27, A28 in drift.json and conformance.json); under camel.toml, none."""
    from tests.sandbox.conftest import CLIENT_ID

    served, _ = camel_sandbox
    args = ("--choices", str(CAMEL)) if dialect == "camel" else ()
    with proxy_process(served.base_url, *args, "--out", str(tmp_path)) as proxy:
        form = {"grant_type": "client_credentials", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}
        assert httpx.post(proxy.base_url + "/oauth/accesstoken", data=form, timeout=10).status_code == 200
        stop(proxy.process)
    rows = json.loads((tmp_path / "drift.json").read_text(encoding="utf-8"))
    table = json.loads((tmp_path / "conformance.json").read_text(encoding="utf-8"))
    differs = {row["id"] for row in table["entries"] if row["status"] == "differs"}
    if dialect == "camel":
        assert rows == [] and not differs
    else:
        assert {(r["field"], r["basis"]) for r in rows} >= {
            ("header svc-request-id", "A28"),
            ("header svc-api-version", "A27"),
        }
        assert {"A27", "A28"} <= differs
