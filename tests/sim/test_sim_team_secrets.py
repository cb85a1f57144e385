"""What a team server keeps to itself (A71): a snapshot carries no token another server, or
its author, can use; restored values stay within what a server could have written.

A restore is a real one: ``POST /_sim/restore`` over HTTP. ``kit serve`` runs as a subprocess
(``tests/support/launcher.py``) where its start is the point.
"""

from __future__ import annotations

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

from kit._env import SIM_PARTNERS
from kit.sim import Settings
from kit.sim.server import start_embedded
from kit.sim.state import PartnerToken
from kit.sim.statecodec import decode, encode
from tests.sim.helpers.journeys import journey
from tests.sim.helpers.webhooks import subscription_request
from tests.sim.helpers.wire import assert_problem, call, parse_time, partner_token
from tests.support.launcher import serve_exits

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
    assert http.post("/_sim/faults", json={"method": "GET", "path": "/never"}).status_code == 201
    assert subscription_request(http, a.token, "http://127.0.0.1:9/hook", ["card.closed"]).status_code == 201
    crafted = _rewritten(http.get("/_sim/snapshot").content, tmp_path, change)
    journey(http, persona_index=1, until="account")
    before = _unchanged(http)
    refused = http.post("/_sim/restore", content=crafted, headers=SNAPSHOT)
    assert words in assert_problem(refused, 400, "snapshot-invalid")["detail"]
    assert _unchanged(http) == before
    assert http.get("/_sim/ledger").status_code == 200


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
