"""``kit serve`` among its neighbours (A39, A45, A70-A72): a colleague's snapshot, a web page in
the same browser, a peer on the network, a client that drips its headers.

A server bound beyond loopback is tried through the setting the CLI fills (``Settings.host``),
served on loopback: no test binds 0.0.0.0. ``kit serve`` itself runs in a subprocess where only
it can show a behaviour (its start refusals, its HTTP protocol).
"""

from __future__ import annotations

import asyncio
import decimal
import socket
import sqlite3
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from kit._env import SIM_CONTROL_TOKEN, SIM_PARTNER_CLIENTS, SIM_PARTNERS
from kit.sim import Settings, create_app, statefile
from kit.sim.guard import Guard, StartRefused, start_refusal, webhook_target_refusal
from kit.sim.server import start_embedded
from kit.sim.state import State
from kit.sim.statecodec import encode
from tests.sim.helpers.journeys import create_session, journey, session_token_of
from tests.sim.helpers.resources import create_card
from tests.sim.helpers.statefiles import START
from tests.sim.helpers.webhooks import Receiver, subscription_request
from tests.sim.helpers.wire import assert_problem, call, init_data, partner_token
from tests.support.launcher import serve_exits, serve_process

SNAPSHOT = {"content-type": "application/vnd.sqlite3"}
#: Partner clients of our own, for a server bound beyond loopback (the published ones are refused).
OURS = {"team-partner": "a-long-team-secret"}
#: A control token of A70's length at least.
CONTROL_TOKEN = "ctl-token-of-the-team-server"
OFF_LOOPBACK = {"host": "0.0.0.0", "partners": OURS, "control_token": CONTROL_TOKEN}
CONTROL = {"svc-control-token": CONTROL_TOKEN}


@contextmanager
def served(**settings: Any) -> Iterator[httpx.Client]:
    server = start_embedded(Settings(seed=7, **settings))
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            yield http
    finally:
        server.stop()


def ledger(http: httpx.Client) -> Any:
    return http.get("/_sim/ledger").json()


# --- 1. untrusted snapshots stay data ---------------------------------------------------------


def _crafted_view(path: Path) -> bytes:
    """A snapshot whose ``records`` is a view over a recursive CTE that never ends (12 KB)."""
    path.write_bytes(statefile.snapshot(State(7, START)))
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE records")
        conn.execute(
            "CREATE VIEW records (home, key, seq, value) AS WITH RECURSIVE n(i) AS "
            "(SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT 'nonces', i, i, x'00' FROM n"
        )
    return path.read_bytes()


def test_a_snapshot_with_a_view_is_refused_at_once_and_the_server_answers(
    http: httpx.Client, tmp_path: Path
) -> None:
    journey(http, persona_index=0, until="account")
    before = ledger(http)
    refused = http.post("/_sim/restore", content=_crafted_view(tmp_path / "view.kitstate"), headers=SNAPSHOT)
    assert (
        "schema is not the one the kit writes" in assert_problem(refused, 400, "snapshot-invalid")["detail"]
    )
    assert http.get("/_sim/health").status_code == 200
    assert ledger(http) == before


@pytest.mark.parametrize(
    "extra",
    ["CREATE TRIGGER t AFTER INSERT ON journal BEGIN SELECT 1; END", "CREATE INDEX i ON records (value)"],
    ids=["trigger", "index"],
)
def test_a_snapshot_with_anything_more_than_the_tables_is_refused(
    http: httpx.Client, tmp_path: Path, extra: str
) -> None:
    path = tmp_path / "more.kitstate"
    path.write_bytes(http.get("/_sim/snapshot").content)
    with sqlite3.connect(path) as conn:
        conn.execute(extra)
    before = ledger(http)
    assert_problem(
        http.post("/_sim/restore", content=path.read_bytes(), headers=SNAPSHOT), 400, "snapshot-invalid"
    )
    assert ledger(http) == before


def test_kit_serve_refuses_to_start_from_a_crafted_snapshot(tmp_path: Path) -> None:
    crafted = tmp_path / "view.kitstate"
    _crafted_view(crafted)
    done = serve_exits("--state", str(tmp_path / "new.kitstate"), "--restore", str(crafted))
    assert done.returncode == 2 and "Serving on" not in done.stdout
    assert done.stderr.startswith(f"refusing to start: {crafted}") and "Traceback" not in done.stderr


def test_kit_serve_refuses_a_crafted_state_file_and_leaves_it(tmp_path: Path) -> None:
    crafted = tmp_path / "team.kitstate"
    _crafted_view(crafted)
    before = crafted.read_bytes()
    done = serve_exits("--state", str(crafted))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"refusing to start: {crafted} is not a kit state")
    assert crafted.read_bytes() == before


@pytest.mark.parametrize(
    "media", [None, "text/plain", "application/x-www-form-urlencoded", "application/json"]
)
def test_a_restore_body_must_be_sent_as_a_snapshot(http: httpx.Client, media: str | None) -> None:
    journey(http, persona_index=0, until="account")
    snap = http.get("/_sim/snapshot").content
    journey(http, persona_index=1, until="account")
    before = ledger(http)
    headers = {} if media is None else {"content-type": media}
    refused = http.post("/_sim/restore", content=snap, headers=headers)
    assert_problem(refused, 415, "unsupported-media-type")
    assert ledger(http) == before
    octets = http.post("/_sim/restore", content=snap, headers={"content-type": "application/octet-stream"})
    assert octets.status_code == 200 and ledger(http) != before


def _many_accounts(count: int) -> bytes:
    """A snapshot of a state with ``count`` accounts, as the server writes one."""
    from kit.sim.records import Account

    big = State(7, START)
    for _ in range(count):
        account_id = big.ids.next("acc")  # the server's own ids (A71 refuses others)
        big.accounts[account_id] = Account(
            account_id, "sim-partner", "spending", decimal.Decimal("500.00"), big.now, ("dev", "thumb")
        )
    return statefile.snapshot(big)


def test_the_budget_ends_a_query_past_it_with_a_400() -> None:
    with served(sqlite_budget=10_000) as http:
        journey(http, persona_index=0, until="account")
        before = ledger(http)
        refused = http.post("/_sim/restore", content=_many_accounts(5_000), headers=SNAPSHOT)
        detail = assert_problem(refused, 400, "snapshot-invalid")["detail"]
        assert "budget of 10,000 SQLite instructions" in detail
        assert ledger(http) == before


@pytest.mark.slow  # a large state written and restored: ≈5 s
def test_a_large_state_the_server_wrote_is_restored_within_the_default_limits(http: httpx.Client) -> None:
    restored = http.post("/_sim/restore", content=_many_accounts(40_000), headers=SNAPSHOT)
    assert restored.status_code == 200, restored.text
    assert len(ledger(http)["accounts"]) == 40_000


# --- 5. malformed values are a 400 naming them, never a 500 -----------------------------------


class _Reduces:
    """Pickled as ``reduce``: a value the codec would never write."""

    def __init__(self, reduce: Any) -> None:
        self.reduce = reduce

    def __reduce__(self) -> Any:
        return self.reduce


def _with_balance(http: httpx.Client, tmp_path: Path, balance: Any) -> bytes:
    """The server's snapshot with its one account's balance replaced by ``balance``."""
    from kit.sim.records import Account

    path = tmp_path / "odd.kitstate"
    path.write_bytes(http.get("/_sim/snapshot").content)
    with sqlite3.connect(path) as conn:
        key, value = conn.execute("SELECT key, value FROM records WHERE home = 'accounts'").fetchone()
        account = statefile.decode(value)
        odd = Account(
            account.account_id, account.partner, account.product, balance, account.created_at, ("d", "t")
        )
        conn.execute("UPDATE records SET value = ? WHERE home = 'accounts' AND key = ?", (encode(odd), key))
    return path.read_bytes()


@pytest.mark.parametrize(
    ("balance", "words"),
    [
        (_Reduces((decimal.Decimal, ("abc",))), "InvalidOperation"),
        ("12.50", "Account.balance is a str, not a Decimal"),
        (decimal.Decimal("NaN"), "Account.balance is not a finite decimal"),
    ],
    ids=["does-not-unpickle", "wrong-type", "not-finite"],
)
def test_a_malformed_value_is_a_400_naming_it(
    http: httpx.Client, tmp_path: Path, balance: Any, words: str
) -> None:
    journey(http, persona_index=0, until="account")
    crafted = _with_balance(http, tmp_path, balance)
    journey(http, persona_index=1, until="account")
    before = ledger(http)
    refused = http.post("/_sim/restore", content=crafted, headers=SNAPSHOT)
    assert words in assert_problem(refused, 400, "snapshot-invalid")["detail"]
    assert ledger(http) == before


def test_kit_serve_refuses_a_malformed_value_at_start_without_a_traceback(
    http: httpx.Client, tmp_path: Path
) -> None:
    journey(http, persona_index=0, until="account")
    crafted = tmp_path / "odd-start.kitstate"
    crafted.write_bytes(_with_balance(http, tmp_path, _Reduces((decimal.Decimal, ("abc",)))))
    done = serve_exits("--state", str(tmp_path / "new.kitstate"), "--restore", str(crafted))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"refusing to start: {crafted}: cannot be read (InvalidOperation)")


def _answer_of(raw: socket.socket) -> str:
    """One HTTP answer read off ``raw``: its head, then its Content-Length of body."""
    data = b""
    while b"\r\n\r\n" not in data and (chunk := raw.recv(65536)):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    while len(body) < length and (chunk := raw.recv(65536)):
        body += chunk
    return (head + b"\r\n\r\n" + body).decode("latin-1")


# --- 6. the restore body has a cap ------------------------------------------------------------


def test_a_restore_body_past_the_cap_is_refused_before_it_is_read() -> None:
    with served(snapshot_max_bytes=4096) as http:
        host, port = http.base_url.host, http.base_url.port
        before = ledger(http)
        with socket.create_connection((host, port), timeout=10) as raw:
            # Headers announcing 10 MB, and only a few bytes of it: the answer comes all the same.
            raw.sendall(
                b"POST /_sim/restore HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/vnd.sqlite3\r\n"
                b"Content-Length: 10000000\r\n\r\nSQLite format 3\x00"
            )
            answer = _answer_of(raw)
        assert answer.startswith("HTTP/1.1 413") and '"code":"payload-too-large"' in answer
        streamed = http.post("/_sim/restore", content=iter([b"x" * 3000] * 3), headers=SNAPSHOT)
        assert_problem(streamed, 413, "payload-too-large")
        assert ledger(http) == before


# --- 2. the Host names the server; the control plane takes no other origin --------------------


@pytest.mark.parametrize(
    "host", ["attacker.example", "attacker.example:8000", "127.0.0.1.nip.example", "[::2]"]
)
def test_a_host_that_does_not_name_the_server_is_refused_before_anything_else(
    http: httpx.Client, host: str
) -> None:
    journey(http, persona_index=0, until="account")
    before = ledger(http)
    for method, path in (("POST", "/_sim/reset"), ("GET", "/_sim/snapshot"), ("POST", "/oauth/accesstoken")):
        refused = http.request(method, path, headers={"host": host, "svc-api-version": "0.0.1"})
        assert_problem(refused, 400, "host-not-allowed")
        assert "A70" in refused.headers["svc-assumptions"]
    assert ledger(http) == before


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST:1234", "127.0.0.1", "127.1.2.3:80", "[::1]:8000"])
def test_loopback_names_are_the_server_on_loopback(http: httpx.Client, host: str) -> None:
    assert http.get("/_sim/health", headers={"host": host}).status_code == 200


def test_a_request_without_host_is_answered_on_loopback(http: httpx.Client) -> None:
    with socket.create_connection((http.base_url.host, http.base_url.port), timeout=10) as raw:
        raw.sendall(b"GET /_sim/health HTTP/1.0\r\n\r\n")
        answer = b""
        while chunk := raw.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize(
    "origin", ["http://attacker.example", "null", "http://127.0.0.1:1", "https://localhost.attacker.example"]
)
def test_the_control_plane_refuses_another_origin(http: httpx.Client, origin: str) -> None:
    journey(http, persona_index=0, until="account")
    before = ledger(http)
    refused = http.post("/_sim/reset", content=b"", headers={"origin": origin})
    assert_problem(refused, 403, "origin-not-allowed")
    assert ledger(http) == before
    assert_problem(http.get("/_sim/snapshot", headers={"origin": origin}), 403, "origin-not-allowed")


def test_the_control_plane_takes_its_own_origin_and_partner_routes_any(http: httpx.Client) -> None:
    own = f"http://{http.base_url.host}:{http.base_url.port}"
    assert http.get("/_sim/health", headers={"origin": own}).status_code == 200
    # A partner route is the API a browser app may call; Origin is not its guard.
    assert http.get("/webhooks/jwks", headers={"origin": "http://app.example"}).status_code == 401


def test_allowed_hosts_name_a_proxy(tmp_path: Path) -> None:
    with served(allowed_hosts=("kit.example.org",)) as http:
        assert http.get("/_sim/health", headers={"host": "kit.example.org"}).status_code == 200
        assert http.get("/_sim/health", headers={"host": "KIT.example.org.:443"}).status_code == 200
        assert_problem(
            http.get("/_sim/health", headers={"host": "other.example.org"}), 400, "host-not-allowed"
        )


def test_off_loopback_the_bound_host_and_the_allowed_names_are_the_server() -> None:
    guard = Guard(Settings(host="10.1.2.3", allowed_hosts=("kit.example.org",)))
    assert guard.allows_host("10.1.2.3:8000") and guard.allows_host("kit.example.org")
    assert not guard.allows_host("localhost") and not guard.allows_host(None)
    everywhere = Guard(Settings(host="0.0.0.0"))
    assert everywhere.allows_host("localhost") and everywhere.allows_host(socket.gethostname())
    assert not everywhere.allows_host("attacker.example") and not everywhere.allows_host(None)


def test_kit_serve_with_an_allowed_host_needs_a_control_token() -> None:
    done = serve_exits("--allowed-host", "kit.example.org")
    assert done.returncode == 2 and SIM_CONTROL_TOKEN in done.stderr
    assert done.stderr.startswith("refusing to start: with --allowed-host")


# --- 3. no usable credential at rest ----------------------------------------------------------


def test_a_snapshot_holds_no_token_and_a_state_file_neither(tmp_path: Path) -> None:
    path = tmp_path / "team.kitstate"
    with served(state_file=str(path)) as http:
        a = journey(http, persona_index=0)
        snap = http.get("/_sim/snapshot").content
    tokens = [a.token, a.anonymous, a.account_session, a.person_session]
    assert all(t and t.encode() not in snap for t in tokens)
    wal = Path(f"{path}-wal")
    on_disk = path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    assert all(t and t.encode() not in on_disk for t in tokens)
    assert (tmp_path / "team.kitstate.key").stat().st_mode & 0o077 == 0
    assert (tmp_path / "team.kitstate.key").read_bytes() not in snap
    with served(state_file=str(path)) as http:  # restarted: its own tokens still work
        card = create_card(http, a.token, a.account_id, session=a.person_session)
        assert card["status"] == "active"


def _anonymous(http: httpx.Client, token: str, encrypted: str) -> httpx.Response:
    """The anonymous session under one Idempotency-Key, the same body each time."""
    return create_session(http, token, None, encrypted_data=encrypted, idem="anon-1")


def test_a_stored_answer_with_a_token_replays_on_its_server_and_is_dropped_on_another(
    http: httpx.Client,
) -> None:
    from tests.sim.helpers.encryption import Device, encrypt_for_server

    token = partner_token(http)
    device = Device.for_persona(http.get("/_sim/personas").json()["personas"][0])
    init = init_data(http, token)
    encrypted = encrypt_for_server(init, device.plaintext(init["nonce"]))
    first = _anonymous(http, token, encrypted)
    assert first.status_code == 201
    snap = http.get("/_sim/snapshot").content
    assert session_token_of(first, device).encode() not in snap
    replay = _anonymous(http, token, encrypted)
    assert replay.headers.get("idempotent-replayed") == "true" and replay.content == first.content
    assert http.post("/_sim/restore", content=snap, headers=SNAPSHOT).status_code == 200
    again = _anonymous(http, token, encrypted)  # the same server's key: replayed as before
    assert again.headers.get("idempotent-replayed") == "true" and again.content == first.content
    with served() as other:
        assert other.post("/_sim/restore", content=snap, headers=SNAPSHOT).status_code == 200
        token = partner_token(other)  # the first server's token is not one of this server's
        init = init_data(other, token)
        fresh = _anonymous(other, token, encrypt_for_server(init, device.plaintext(init["nonce"])))
        assert fresh.status_code == 201 and fresh.headers.get("idempotent-replayed") is None
        assert session_token_of(fresh, device) != session_token_of(first, device)


# --- 4. off loopback nothing is open by default -----------------------------------------------


def test_off_loopback_the_published_credentials_refuse_the_start() -> None:
    with pytest.raises(StartRefused, match=SIM_PARTNERS):
        create_app(Settings(host="0.0.0.0", control=False))
    named = {**OURS, "sim-partner": SIM_PARTNER_CLIENTS["sim-partner"]}
    assert SIM_PARTNERS in (start_refusal(Settings(host="10.0.0.5", partners=named, control=False)) or "")
    assert start_refusal(Settings(host="10.0.0.5", partners=OURS, control=False)) is None
    assert start_refusal(Settings()) is None  # on loopback the published ones are the point


def test_kit_serve_off_loopback_refuses_the_published_credentials() -> None:
    done = serve_exits("--host", "0.0.0.0", "--no-control", env={SIM_PARTNERS: ""})
    assert done.returncode == 2 and SIM_PARTNERS in done.stderr and "Serving on" not in done.stdout


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/hook",
        "http://localhost/hook",
        "http://[::1]/hook",
        "http://10.0.0.7/hook",
        "http://192.168.1.10/hook",
        "http://169.254.169.254/latest",
        "http://[fe80::1]/hook",
        "http://0.0.0.0/",
    ],
)
def test_off_loopback_private_and_loopback_targets_are_refused(url: str) -> None:
    with served(**OFF_LOOPBACK) as http:
        token = partner_token(http, *next(iter(OURS.items())))
        refused = subscription_request(http, token, url, ["card.closed"])
        assert_problem(refused, 422, "webhook-url-not-allowed")
        assert http.get("/_sim/webhooks/deliveries", headers=CONTROL).json() == {"deliveries": []}


def test_a_global_address_is_a_target_off_loopback_and_not_on_it() -> None:
    off, on = Settings(**OFF_LOOPBACK), Settings()
    assert asyncio.run(webhook_target_refusal("https://93.184.216.34/hook", off)) is None
    assert asyncio.run(webhook_target_refusal("https://93.184.216.34/hook", on)) == "not a loopback host"
    allowed = Settings(**OFF_LOOPBACK, webhook_hosts=("localhost",))
    assert asyncio.run(webhook_target_refusal("http://localhost:9/hook", allowed)) is None


def test_off_loopback_each_attempt_checks_the_target_again(http: httpx.Client) -> None:
    """A subscription to a loopback receiver (made on loopback, carried in a snapshot) meets a
    server bound beyond loopback: its attempt fails target-not-allowed, and nothing is posted.
    (The event comes from the control plane: the loopback server's tokens are not the team's.)"""
    receiver = Receiver()
    try:
        a = journey(http, persona_index=0)
        sub = subscription_request(http, a.token, receiver.url, ["document_request.created"])
        assert sub.status_code == 201
        snap = http.get("/_sim/snapshot").content
        with served(**OFF_LOOPBACK) as team:
            assert (
                team.post("/_sim/restore", content=snap, headers={**SNAPSHOT, **CONTROL}).status_code == 200
            )
            made = team.post(f"/_sim/persons/{a.person_id}/document_requests", headers=CONTROL)
            assert made.status_code == 201, made.text
            deadline = time.monotonic() + 10
            deliveries: list[Any] = []
            while time.monotonic() < deadline and not (deliveries and deliveries[0]["attempts"]):
                deliveries = team.get("/_sim/webhooks/deliveries", headers=CONTROL).json()["deliveries"]
            assert deliveries[0]["attempts"][0]["error"] == "target-not-allowed"
        assert receiver.received() == []
    finally:
        receiver.close()


# --- 7. limits for a shared server ----------------------------------------------------------


def test_one_request_more_than_the_limit_is_a_503_problem() -> None:
    with served(max_concurrency=1) as http:
        token = partner_token(http)
        slow = {"method": "GET", "path": "/webhooks/jwks", "status": None, "rate": 1, "latency_ms": 2000}
        assert http.post("/_sim/faults", json=slow).status_code == 201
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(call, http, "GET", "/webhooks/jwks", token=token)
            time.sleep(0.5)  # the first is in flight for two seconds
            busy = http.get("/_sim/clock")
            assert first.result().status_code == 200
        body = assert_problem(busy, 503, "server-busy")
        assert busy.headers["retry-after"] == "1" and "A72" in busy.headers["svc-assumptions"]
        assert body["status"] == 503
        assert http.get("/_sim/clock").status_code == 200  # and once it finished, the next goes


def test_kit_serve_closes_a_connection_that_drips_its_headers() -> None:
    with serve_process("--header-timeout", "1") as served_:
        with socket.create_connection(("127.0.0.1", served_.port), timeout=10) as raw:
            raw.sendall(b"GET /_sim/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Drip: ")
            closed = False
            for _ in range(40):  # 40 bytes, one every 0.25 s: 10 s at most
                time.sleep(0.25)
                try:
                    raw.sendall(b"a")
                    raw.settimeout(0.01)
                    closed = raw.recv(1) == b""
                except TimeoutError:
                    continue
                except OSError:
                    closed = True
                finally:
                    raw.settimeout(10)
                if closed:
                    break
        assert closed, "the connection was still open after ten seconds of dripped headers"
        assert httpx.get(served_.base_url + "/_sim/health", timeout=10).status_code == 200


def test_the_header_deadline_of_a_later_request_counts_from_its_first_byte() -> None:
    # The connection's timer, set when it opened, fires while a later request's headers are
    # pending: it must wait for that request's own deadline, then close the connection.
    with (
        serve_process("--header-timeout", "1") as served_,
        socket.create_connection(("127.0.0.1", served_.port), timeout=10) as raw,
    ):
        opened = time.monotonic()
        raw.sendall(b"GET /_sim/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += raw.recv(65536)
        head, _, body = answer.partition(b"\r\n\r\n")
        length = int(
            next(line for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:"))[15:]
        )
        while len(body) < length:
            body += raw.recv(65536)
        assert head.startswith(b"HTTP/1.1 200")
        time.sleep(max(0.0, opened + 0.6 - time.monotonic()))
        started = time.monotonic()
        raw.sendall(b"GET /_sim/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        raw.settimeout(10)
        try:
            closed = raw.recv(1) == b""
        except OSError:
            closed = True
        waited = time.monotonic() - started
    assert closed
    assert 0.9 <= waited < 5, f"closed {waited:.2f} s after the second request began"


def test_only_the_declared_encrypted_member_is_decrypted() -> None:
    from tests.sim.helpers.encryption import Device, encrypt_for_server

    server = start_embedded(Settings(seed=7, crypto_workers=1))
    try:
        sim = server._server.config.app.sim
        asked: list[str] = []
        decrypt = sim.crypto.decrypt

        async def counted(seed: int, token: str) -> bytes:
            asked.append(token)
            return await decrypt(seed, token)

        sim.crypto.decrypt = counted
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            token = partner_token(http)
            device = Device.for_persona(http.get("/_sim/personas").json()["personas"][0])
            init = init_data(http, token)
            jwe = encrypt_for_server(init, device.plaintext(init["nonce"]))
            body = {"session_type": "anonymous", "expiration_strategy": "fixed", "encrypted_data": jwe}
            refused = call(http, "POST", "/sessions", token=token, json_body={**body, "encrypted_note": jwe})
            assert_problem(refused, 422, "unknown-field")
            assert asked == []
            created = call(http, "POST", "/sessions", token=token, json_body=body)
            assert created.status_code == 201 and asked == [jwe]
    finally:
        server.stop()
