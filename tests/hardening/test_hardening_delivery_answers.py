"""A delivery's target answering without end (issue 58, finding 4; A25).

Two raw loopback targets, each bounded in time: one answers 200 and then streams a 64 MiB body
as fast as the simulator takes it; one drips its answer's body a byte a second, so that no single
read ever waits long. Only the status counts: the simulator reads a few KiB of a body and closes
the connection on the rest, and one attempt has one deadline (A25's 5 s) for all of it.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from kit import register
from tests.sim.helpers.control import advance, deliveries
from tests.sim.helpers.journeys import journey
from tests.sim.helpers.resources import close_card, create_card
from tests.sim.helpers.webhooks import subscribe
from tests.sim.helpers.wire import wait_until

DEADLINE_S = float(register.value("A25")["timeout_seconds"])
#: What the flooding target offers: far more than the simulator may read.
FLOOD_BYTES = 64 * 1024 * 1024
#: What may have left the target although the simulator read only a few KiB: the socket buffers
#: of both ends on loopback, which the kernel sizes (the old behaviour read all 64 MiB).
BUFFERS_BYTES = 8 * 1024 * 1024
#: How long the dripping target keeps a connection: well past the deadline.
DRIP_S = 15.0

Feed = Callable[[socket.socket], int]


class RawTarget:
    """A loopback HTTP/1.1 target on a raw socket: for each connection it reads the request (its
    head and its Content-Length body), then ``answer``s on the socket, which returns the bytes it
    managed to send; ``sent`` lists them per connection once it is done."""

    def __init__(self, *answers: Feed) -> None:
        self.sent: list[int] = []
        self._answers = list(answers)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/hook"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            answer = self._answers.pop(0) if len(self._answers) > 1 else self._answers[0]
            with conn:
                _read_request(conn)
                self.sent.append(answer(conn))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(DRIP_S + 5)
        self._listener.close()


def _read_request(conn: socket.socket) -> None:
    conn.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = [line.lower() for line in head.split(b"\r\n")]
    length = next((int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk


def _send_counted(conn: socket.socket, chunks: Iterator[bytes], pause: float) -> int:
    """Send each chunk (after ``pause`` seconds) until the peer goes or the chunks end."""
    sent = 0
    try:
        for chunk in chunks:
            time.sleep(pause)
            conn.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass  # the simulator closed the connection
    return sent


def flood(conn: socket.socket) -> int:
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
    conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {FLOOD_BYTES}\r\n\r\n".encode())
    block = b"x" * 65536
    return _send_counted(conn, (block for _ in range(FLOOD_BYTES // len(block))), 0.0)


def drip(conn: socket.socket) -> int:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
    return _send_counted(conn, (b"x" for _ in range(int(DRIP_S))), 1.0)


def refuse(conn: socket.socket) -> int:
    conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    return 0


@pytest.fixture
def targets() -> Iterator[list[RawTarget]]:
    made: list[RawTarget] = []
    yield made
    for target in made:
        target.close()


def _card_closed_to(http: httpx.Client, token: str, url: str) -> None:
    subscribe(http, token, url, ["card.closed"])
    account = journey(http, token=token, until="account").account_id
    card = create_card(http, token, account)["card_id"]
    assert close_card(http, token, card, {"reason": "lost"}).status_code == 200


def _attempts(http: httpx.Client, count: int) -> list[dict[str, Any]]:
    found = wait_until(
        lambda: [d for d in deliveries(http) if len(d["attempts"]) >= count], timeout=DRIP_S + 5
    )
    assert found, deliveries(http)
    return list(found[0]["attempts"])


def test_a_target_streaming_a_huge_answer_is_read_only_up_to_the_cap(
    http: httpx.Client, token: str, targets: list[RawTarget]
) -> None:
    target = RawTarget(flood)
    targets.append(target)
    _card_closed_to(http, token, target.url)
    attempts = _attempts(http, 1)
    assert [a["status_code"] for a in attempts] == [200], "the status is what counts"
    assert wait_until(lambda: target.sent, timeout=DRIP_S), "the target is still sending"
    assert target.sent[0] < BUFFERS_BYTES, f"the simulator took {target.sent[0]} bytes of the answer"
    assert next(d for d in deliveries(http))["status"] == "delivered"


def test_a_target_dripping_its_answer_fails_the_attempt_at_one_deadline(
    http: httpx.Client, token: str, targets: list[RawTarget]
) -> None:
    target = RawTarget(refuse, drip)  # the first attempt fails at once; the retry meets the drip
    targets.append(target)
    _card_closed_to(http, token, target.url)
    assert [a["status_code"] for a in _attempts(http, 1)] == [500]
    started = time.monotonic()
    advance(http, 1)  # runs the retry that falls due, and answers when it is over
    took = time.monotonic() - started
    # A bound, not a speed: one deadline ends the attempt (reading per read, it lasted DRIP_S).
    assert took < DEADLINE_S + 3, f"the clock's advance waited {took:.1f} s for one attempt"
    attempts = _attempts(http, 2)
    assert attempts[1]["status_code"] is None and attempts[1]["error"] == "timeout", attempts
    assert next(d for d in deliveries(http))["status"] == "pending", "a failed attempt, retried"
