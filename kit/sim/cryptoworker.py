"""JWE decryption in worker processes, for a simulator that many clients share (``kit serve``).

The RSA-OAEP decrypt a session needs is most of its server time (issue #7 profile). On the
event loop it is serial; on a thread it fights the loop for the GIL (measured: each side's CPU
per session grew by half, and throughput did not move). A worker *process* has its own
interpreter: the loop writes the token down a pipe and goes on serving other requests.

Frames on the pipes are length-prefixed. Request: ``seed`` (8 bytes, signed) + token (UTF-8).
Answer: one status byte (0 decrypted, 1 refused) + the plaintext. A worker answers in order, so
the parent keeps one queue of waiting futures per worker. The workers derive the keys from the
seed exactly as the simulator does (``keys_for``), so nothing secret crosses the pipe but the
token and its plaintext, in memory only.

If a worker cannot be started or dies, :meth:`CryptoWorkers.decrypt` raises
:class:`WorkerUnavailable` and the caller decrypts on the loop instead: slower, same answers.

A stock ``concurrent.futures.ProcessPoolExecutor`` (through ``loop.run_in_executor``) was
measured in its place and made session creation about 40 % slower: its hand-offs between the
loop, its management thread and its queue feeder cost the loop more than the decrypt it saves
(``benchmarks/results/fastpath.json``).

    >>> workers = CryptoWorkers(2, seed=7)  # doctest: +SKIP
    >>> await workers.start()  # doctest: +SKIP
    >>> await workers.decrypt(7, token)  # the plaintext; CryptoError if refused  # doctest: +SKIP
    >>> await workers.aclose()  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import struct
import sys
from typing import BinaryIO

from kit.sim.crypto import CryptoError

_LENGTH = struct.Struct(">I")
_SEED = struct.Struct(">q")
_DECRYPTED, _REFUSED = b"\x00", b"\x01"


class WorkerUnavailable(Exception):
    """No worker process could take the token; decrypt in process instead."""


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        assert process.stdin is not None and process.stdout is not None
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.waiting: collections.deque[asyncio.Future[bytes]] = collections.deque()
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        try:
            while True:
                (size,) = _LENGTH.unpack(await self.stdout.readexactly(_LENGTH.size))
                frame = await self.stdout.readexactly(size)
                future = self.waiting.popleft()
                if future.done():
                    continue
                if frame[:1] == _DECRYPTED:
                    future.set_result(frame[1:])
                else:
                    future.set_exception(CryptoError("refused by the worker"))
        except (asyncio.IncompleteReadError, ConnectionError, IndexError):
            pass
        finally:  # the worker is gone: whoever still waits decrypts in process
            while self.waiting:
                future = self.waiting.popleft()
                if not future.done():
                    future.set_exception(WorkerUnavailable())

    @property
    def alive(self) -> bool:
        return not self.reader.done()

    def submit(self, seed: int, token: str) -> asyncio.Future[bytes]:
        payload = _SEED.pack(seed) + token.encode()
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.waiting.append(future)
        self.stdin.write(_LENGTH.pack(len(payload)) + payload)
        return future

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            self.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), timeout=2)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()
        self.reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.reader


class CryptoWorkers:
    """``count`` worker processes; each token goes to the one with the fewest waiting."""

    def __init__(self, count: int, seed: int) -> None:
        self.count = count
        self.seed = seed  # keys for this seed are derived as each worker starts
        self._workers: list[_Worker] = []

    async def start(self) -> None:
        for _ in range(self.count):
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "kit.sim.cryptoworker",
                str(self.seed),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
            )
            self._workers.append(_Worker(process))

    @property
    def running(self) -> int:
        """How many workers are alive."""
        return sum(w.alive for w in self._workers)

    async def decrypt(self, seed: int, token: str) -> bytes:
        """The token's plaintext; CryptoError if refused; WorkerUnavailable if none can."""
        alive = [w for w in self._workers if w.alive]
        if not alive:
            raise WorkerUnavailable()
        worker = min(alive, key=lambda w: len(w.waiting))
        try:
            future = worker.submit(seed, token)
        except (ConnectionError, RuntimeError) as exc:
            raise WorkerUnavailable() from exc
        return await future

    async def aclose(self) -> None:
        workers, self._workers = self._workers, []
        await asyncio.gather(*(w.aclose() for w in workers))


def serve(stdin: BinaryIO, stdout: BinaryIO, seed: int | None = None) -> None:
    """The worker's loop: a frame in, a frame out, until the parent closes the pipe."""
    from kit.sim.state import keys_for

    if seed is not None:
        keys_for(seed)  # derive the keys now, not on the first session
    while True:
        head = stdin.read(_LENGTH.size)
        if len(head) < _LENGTH.size:
            return
        frame = stdin.read(_LENGTH.unpack(head)[0])
        (seed,) = _SEED.unpack_from(frame)
        try:
            answer = _DECRYPTED + keys_for(seed).decrypt(frame[_SEED.size :].decode())
        except (CryptoError, UnicodeDecodeError):
            answer = _REFUSED
        stdout.write(_LENGTH.pack(len(answer)) + answer)
        stdout.flush()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        serve(sys.stdin.buffer, sys.stdout.buffer, int(sys.argv[1]) if len(sys.argv) > 1 else None)
