"""What a team server keeps to itself (A71): a snapshot carries no token another server, or
its author, can use; restored values stay within what a server could have written; with named
partners its keys come from its own secret, not from its seed.

A restore is a real one: ``POST /_sim/restore`` over HTTP. ``kit serve`` runs as a subprocess
(``tests/support/launcher.py``) where its keys are the point.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from kit._env import SIM_PARTNERS
from kit.cli import main as kit_main
from kit.sim import Settings
from kit.sim.crypto import CryptoError, SimKeys
from kit.sim.cryptoworker import CryptoWorkers
from kit.sim.keycache import CACHE_VARIABLE
from kit.sim.server import start_embedded
from kit.sim.state import PartnerToken, keys_for, keys_of_secret
from kit.sim.statecodec import decode, encode
from tests.sim.helpers.encryption import Device, encrypt_for_server
from tests.sim.helpers.journeys import create_session, journey
from tests.sim.helpers.webhooks import subscription_request
from tests.sim.helpers.wire import assert_problem, b64u_decode, call, init_data, parse_time, partner_token
from tests.support.launcher import serve_exits, serve_process

SNAPSHOT = {"content-type": "application/vnd.sqlite3"}
TEAM = ("team-partner", "a-long-team-secret")
TEAM_ENV = {SIM_PARTNERS: f"{TEAM[0]}:{TEAM[1]}"}


@contextmanager
def served(**settings: Any) -> Iterator[httpx.Client]:
    server = start_embedded(Settings(seed=7, **settings))
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            yield http
    finally:
        server.stop()


def _rewritten(snapshot: bytes, tmp_path: Path, change: Callable[[sqlite3.Connection], None]) -> bytes:
    """``snapshot`` with ``change`` made to its database, as its author could."""
    path = tmp_path / "crafted.kitstate"
    path.write_bytes(snapshot)
    conn = sqlite3.connect(path)
    try:
        with conn:
            change(conn)
    finally:
        conn.close()
    return path.read_bytes()


def _planted(token: str, expires_at: dt.datetime) -> Callable[[sqlite3.Connection], None]:
    """A PartnerToken of ``sim-partner`` kept under the plain SHA-256 of ``token``."""

    def change(conn: sqlite3.Connection) -> None:
        (seq,) = conn.execute("SELECT coalesce(max(seq), 0) FROM records").fetchone()
        digest = hashlib.sha256(token.encode()).hexdigest()
        value = encode(PartnerToken("sim-partner", expires_at))
        conn.execute(
            "INSERT INTO records VALUES ('partner_tokens', ?, ?, ?)", (json.dumps(digest), seq + 1, value)
        )

    return change


def _now(http: httpx.Client) -> dt.datetime:
    return parse_time(http.get("/_sim/clock").json()["now"])


def _unchanged(http: httpx.Client) -> Any:
    """What a refused restore must leave as it was: the ledger, the clock and the stores."""
    health = http.get("/_sim/health").json()["stores"]
    return http.get("/_sim/ledger").json(), _now(http), {k: v["size"] for k, v in health.items()}


# --- 1. a token in a snapshot authenticates nothing it did not issue ----------------------------


def test_a_token_planted_in_a_restored_snapshot_is_refused(http: httpx.Client, tmp_path: Path) -> None:
    own = partner_token(http)
    planted = _rewritten(
        http.get("/_sim/snapshot").content, tmp_path, _planted("planted", _now(http) + dt.timedelta(hours=1))
    )
    assert http.post("/_sim/restore", content=planted, headers=SNAPSHOT).status_code == 200
    assert_problem(call(http, "GET", "/webhooks/jwks", token="planted"), 401, "invalid-partner-token")
    sub = subscription_request(http, "planted", "http://127.0.0.1:9/hook", ["card.closed"])
    assert_problem(sub, 401, "invalid-partner-token")
    assert call(http, "GET", "/webhooks/jwks", token=own).status_code == 200  # its own still work


def test_a_token_planted_for_the_year_8000_refuses_the_snapshot(http: httpx.Client, tmp_path: Path) -> None:
    journey(http, persona_index=0, until="account")
    before = _unchanged(http)
    year_8000 = dt.datetime(8000, 1, 1, tzinfo=dt.UTC)
    planted = _rewritten(http.get("/_sim/snapshot").content, tmp_path, _planted("planted", year_8000))
    refused = http.post("/_sim/restore", content=planted, headers=SNAPSHOT)
    assert (
        "PartnerToken.expires_at is more than" in assert_problem(refused, 400, "snapshot-invalid")["detail"]
    )
    assert _unchanged(http) == before
    assert_problem(call(http, "GET", "/webhooks/jwks", token="planted"), 401, "invalid-partner-token")


def test_a_snapshot_restored_on_another_server_carries_no_working_token(http: httpx.Client) -> None:
    a = journey(http, persona_index=0)
    snap = http.get("/_sim/snapshot").content
    with served() as other:
        assert other.post("/_sim/restore", content=snap, headers=SNAPSHOT).status_code == 200
        assert a.account_id in {row["account_id"] for row in other.get("/_sim/ledger").json()["accounts"]}
        assert_problem(call(other, "GET", "/webhooks/jwks", token=a.token), 401, "invalid-partner-token")
        cards = f"/accounts/{a.account_id}/cards"
        refused = call(
            other,
            "POST",
            cards,
            token=partner_token(other),
            session=a.person_session,
            json_body={"type": "virtual"},
        )
        assert_problem(refused, 401, "invalid-session")
    assert http.post("/_sim/restore", content=snap, headers=SNAPSHOT).status_code == 200
    mine = call(http, "POST", cards, token=a.token, session=a.person_session, json_body={"type": "virtual"})
    assert mine.status_code == 201, mine.text  # on the server that issued them, they still work


# --- 2. restored values stay within what a server could have written ----------------------------


def _record(home: str, **fields: Any) -> Callable[[sqlite3.Connection], None]:
    """The first record of ``home`` with ``fields`` changed."""

    def change(conn: sqlite3.Connection) -> None:
        key, value = conn.execute("SELECT key, value FROM records WHERE home = ? LIMIT 1", (home,)).fetchone()
        record = dataclasses.replace(decode(value), **fields)
        conn.execute("UPDATE records SET value = ? WHERE home = ? AND key = ?", (encode(record), home, key))

    return change


def _rekeyed(home: str, key: str, field: str) -> Callable[[sqlite3.Connection], None]:
    """The first record of ``home`` kept under ``key``, its own id ``field`` too."""

    def change(conn: sqlite3.Connection) -> None:
        old, value = conn.execute("SELECT key, value FROM records WHERE home = ? LIMIT 1", (home,)).fetchone()
        record = dataclasses.replace(decode(value), **{field: key})
        conn.execute(
            "UPDATE records SET key = ?, value = ? WHERE home = ? AND key = ?",
            (json.dumps(key), encode(record), home, old),
        )

    return change


def _meta(**fields: Any) -> Callable[[sqlite3.Connection], None]:
    def change(conn: sqlite3.Connection) -> None:
        (value,) = conn.execute("SELECT value FROM kit_state WHERE name = 'meta'").fetchone()
        conn.execute(
            "UPDATE kit_state SET value = ? WHERE name = 'meta'", (encode({**decode(value), **fields}),)
        )

    return change


OUT_OF_BOUNDS = {
    "huge-balance": (
        _record("accounts", balance=Decimal("1E+999999")),
        "Account.balance is not between 0 and",
    ),
    "balance-at-the-limit": (
        _record("accounts", balance=Decimal(10) ** 18),
        "Account.balance is not between 0 and",
    ),
    "negative-balance": (
        _record("accounts", balance=Decimal("-0.01")),
        "Account.balance is not between 0 and",
    ),
    "three-decimals": (_record("accounts", balance=Decimal("500.001")), "more than two decimals"),
    "not-an-id": (_rekeyed("accounts", "../acc", "account_id"), "account_id '../acc' is not an id"),
    "huge-seed": (_meta(seed=2**70), "the seed is not a 64-bit integer"),
    "clock-past-9000": (
        _meta(now=dt.datetime(9500, 1, 1, tzinfo=dt.UTC)),
        "the clock is not before the year 9000",
    ),
    "endless-latency": (_record("faults", latency_ms=10**9), "fault is outside the control plane's bounds"),
    "unknown-version": (
        _record("subscriptions", api_version="9.9.9"),
        "version '9.9.9' is not one the kit serves",
    ),
}


@pytest.mark.parametrize(("change", "words"), OUT_OF_BOUNDS.values(), ids=OUT_OF_BOUNDS.keys())
def test_a_value_no_server_could_write_is_refused_and_changes_nothing(
    http: httpx.Client, tmp_path: Path, change: Callable[[sqlite3.Connection], None], words: str
) -> None:
    a = journey(http, persona_index=0, until="account")
    parked = {"method": "GET", "path": "/webhooks/jwks", "rate": 0}  # a fault that never fires
    assert http.post("/_sim/faults", json=parked).status_code == 201
    assert subscription_request(http, a.token, "http://127.0.0.1:9/hook", ["card.closed"]).status_code == 201
    crafted = _rewritten(http.get("/_sim/snapshot").content, tmp_path, change)
    journey(http, persona_index=1, until="account")
    before = _unchanged(http)
    refused = http.post("/_sim/restore", content=crafted, headers=SNAPSHOT)
    assert words in assert_problem(refused, 400, "snapshot-invalid")["detail"]
    assert _unchanged(http) == before
    assert http.get("/_sim/ledger").status_code == 200


# --- 3. a team server's keys are its own ------------------------------------------------------


def _published(base_url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The encryption keys of init data and the webhook signing keys a team server publishes."""
    with httpx.Client(base_url=base_url, timeout=30) as http:
        token = partner_token(http, *TEAM)
        return init_data(http, token)["jwks"], call(http, "GET", "/webhooks/jwks", token=token).json()


def _seeded(seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """What a loopback server with the published partners and ``seed`` publishes: anyone can derive it."""
    keys = keys_for(seed)
    return keys.encryption_jwks(), keys.signing_jwks()


def _moduli(folder: Path) -> set[int]:
    keys = (load_pem_private_key(p.read_bytes(), None) for p in folder.rglob("*.pem"))
    return {key.private_numbers().public_numbers.n for key in keys}  # type: ignore[union-attr]


@pytest.mark.slow  # kit serve started and restarted: ≈8 s
def test_a_team_servers_keys_are_not_its_seeds_nor_in_the_key_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {**TEAM_ENV, CACHE_VARIABLE: str(cache)}
    with serve_process("--crypto-workers", "1", seed=42, env=env) as team:
        first = _published(team.base_url)
        with httpx.Client(base_url=team.base_url, timeout=30) as http:  # decrypted by its worker
            token = partner_token(http, *TEAM)
            device = Device.for_persona(http.get("/_sim/personas").json()["personas"][0])
            assert create_session(http, token, device).status_code == 201
    seeded = _seeded(42)
    assert first[0] != seeded[0] and first[1] != seeded[1]
    rsa = next(k for k in first[0]["keys"] if k["kty"] == "RSA")
    assert int.from_bytes(b64u_decode(rsa["n"]), "big") not in _moduli(cache)
    with serve_process(seed=42, env=env) as again:  # another start, no state: other keys
        second = _published(again.base_url)
    assert second[0] != first[0] and second[1] != first[1]


@pytest.mark.slow  # kit serve started and restarted: ≈11 s
def test_a_team_servers_keys_survive_a_restart_with_its_state(tmp_path: Path) -> None:
    state = str(tmp_path / "team.kitstate")
    with serve_process("--state", state, seed=42, env=TEAM_ENV) as team:
        first = _published(team.base_url)
    with serve_process("--state", state, seed=42, env=TEAM_ENV) as team:
        assert _published(team.base_url) == first
    assert first != _seeded(42)


def test_seeded_keys_are_the_seeds_keys_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    with serve_process("--seeded-keys", seed=42, env=TEAM_ENV) as team:
        assert _published(team.base_url) == _seeded(42)
    with pytest.raises(SystemExit):
        kit_main(["serve", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert (
        "--seeded-keys takes --seed" in said
        and "decrypt the PII sent to the server and forge its webhooks" in said
    )


def test_on_loopback_with_the_published_partners_the_seed_gives_the_keys() -> None:
    assert not Settings(seed=42).secret_keys and Settings(seed=42, partners={"x": "long-secret"}).secret_keys
    assert Settings(host="0.0.0.0").secret_keys and not Settings(host="0.0.0.0", seeded_keys=True).secret_keys


def test_crypto_workers_decrypt_with_the_keys_of_the_secret_they_were_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker given the keys' secret (down its pipe) decrypts with its keys, not with the
    seed's, whatever seed a token names."""
    secret = bytes(range(32))
    to_secret = encrypt_for_server({"jwks": keys_of_secret(secret).encryption_jwks()}, {"nonce": "n-1"})
    to_seed = encrypt_for_server({"jwks": keys_for(7).encryption_jwks()}, {"nonce": "n-2"})

    def refuse(self: SimKeys, token: object) -> bytes:  # decrypted below: by a worker
        raise CryptoError("decrypted in the test process")

    monkeypatch.setattr(SimKeys, "decrypt", refuse)

    async def scenario() -> list[Any]:
        workers = CryptoWorkers(1, seed=7, secret=secret)
        await workers.start()
        try:
            return await asyncio.gather(
                workers.decrypt(7, to_secret), workers.decrypt(7, to_seed), return_exceptions=True
            )
        finally:
            await workers.aclose()

    decrypted, refused = asyncio.run(scenario())
    assert json.loads(decrypted) == {"nonce": "n-1"}
    assert isinstance(refused, CryptoError) and str(refused) == "refused by the worker"


# --- 4. a server starts only where its own state would be restored --------------------------


@pytest.mark.parametrize("balance", ["500.001", "1000000000000000000"])
def test_kit_serve_refuses_a_starting_balance_its_state_could_not_hold(balance: str) -> None:
    done = serve_exits("--starting-balance", balance)
    assert done.returncode == 2 and "Serving on" not in done.stdout
    assert done.stderr.startswith("refusing to start: the starting balance (--starting-balance, A10)")


def test_a_reset_to_a_seed_past_64_bits_is_refused_and_changes_nothing(http: httpx.Client) -> None:
    journey(http, persona_index=0, until="account")
    before = _unchanged(http)
    assert_problem(http.post("/_sim/reset", json={"seed": 2**70}), 422, "validation-error")
    assert _unchanged(http) == before
