"""JWE decryption in worker processes, for a simulator that many clients share (``kit serve``).

The RSA-OAEP decrypt a session needs is most of its server time (benchmark 1's profile). On the
event loop it is serial; on a thread it fights the loop for the GIL (measured: each side's CPU
per session grew by half, and throughput did not move). A worker *process* has its own
interpreter: the loop writes the token down a pipe and goes on serving other requests.

Frames on the pipes are length-prefixed. Request: ``seed`` (8 bytes, signed) + token (UTF-8).
Answer: one status byte (0 decrypted, 1 refused) + the plaintext. A worker answers in order, so
the parent keeps one queue of waiting futures per worker. The workers derive the keys from the
seed exactly as the simulator does (``keys_for``), so nothing secret crosses the pipe but the
token and its plaintext, in memory only; a server whose keys come from its secret
(``Settings.secret_keys``) first writes the keys' secret (32 bytes, one frame) down each
worker's pipe, never on its command line, and the worker derives the keys from it
(``keys_of_secret``) whatever the seed of a frame. The parent reads a worker's answers with one protocol
(``_Pipes``: a frame parsed where it arrives resolves its future); a worker reads whatever
frames are there in one system call and answers each as soon as it is decrypted.

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
_READ_SIZE = 1 << 16
#: The worker's argument when the keys come from a secret, its first frame.
_SECRET_ARG = "--secret"


class WorkerUnavailable(Exception):
    """No worker process could take the token; decrypt in process instead."""


class _Pipes(asyncio.SubprocessProtocol):
    """A worker's pipes as one protocol: frames parsed where its answers arrive, each resolving
    the oldest waiting future. (``asyncio.create_subprocess_exec``'s streams cost the loop a
    task wake-up and two ``readexactly`` coroutines per answer.)"""

    #: What ``asyncio.subprocess.Process`` reads from its protocol: no streams here.
    stdin = stdout = stderr = None

    def __init__(self) -> None:
        self.waiting: collections.deque[asyncio.Future[bytes]] = collections.deque()
        self.gone = False
        self._buffer = bytearray()
        self._stdin: asyncio.WriteTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a SubprocessTransport in kind (uvloop's is not an asyncio.SubprocessTransport)
        self._stdin = transport.get_pipe_transport(0)  # type: ignore[attr-defined]

    def write(self, frame: bytes) -> None:
        """A frame that asks for no answer (the keys' secret, first)."""
        if self._stdin is not None:
            self._stdin.write(frame)

    def send(self, frame: bytes) -> asyncio.Future[bytes]:
        if self.gone or self._stdin is None or self._stdin.is_closing():
            raise WorkerUnavailable()
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.waiting.append(future)
        self._stdin.write(frame)
        return future

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        while len(buffer) >= _LENGTH.size:
            (size,) = _LENGTH.unpack_from(buffer)
            end = _LENGTH.size + size
            if len(buffer) < end:
                return
            status, answer = buffer[_LENGTH.size : _LENGTH.size + 1], bytes(buffer[_LENGTH.size + 1 : end])
            del buffer[:end]
            if not self.waiting:  # an answer nobody asked for: the worker is not ours to trust
                self._lost()
                return
            future = self.waiting.popleft()
            if future.done():
                continue
            if status == _DECRYPTED:
                future.set_result(answer)
            else:
                future.set_exception(CryptoError("refused by the worker"))

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd != 0:
            self._lost()

    def process_exited(self) -> None:
        self._lost()

    def close_stdin(self) -> None:
        if self._stdin is not None:
            self._stdin.close()

    def _lost(self) -> None:
        """The worker is gone: whoever still waits decrypts in process."""
        self.gone = True
        while self.waiting:
            future = self.waiting.popleft()
            if not future.done():
                future.set_exception(WorkerUnavailable())


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process, pipes: _Pipes) -> None:
        self.process = process
        self.pipes = pipes

    @property
    def waiting(self) -> collections.deque[asyncio.Future[bytes]]:
        return self.pipes.waiting

    @property
    def alive(self) -> bool:
        return not self.pipes.gone

    def submit(self, seed: int, token: str) -> asyncio.Future[bytes]:
        payload = _SEED.pack(seed) + token.encode()
        return self.pipes.send(_LENGTH.pack(len(payload)) + payload)

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            self.pipes.close_stdin()
        try:
            await asyncio.wait_for(self.process.wait(), timeout=2)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()
        self.pipes._lost()


class CryptoWorkers:
    """``count`` worker processes; each token goes to the one with the fewest waiting."""

    def __init__(self, count: int, seed: int, secret: bytes | None = None) -> None:
        self.count = count
        self.seed = seed  # keys for this seed are derived as each worker starts
        self._secret = secret  # the keys' secret, when they come from one (sent down the pipe)
        self._workers: list[_Worker] = []

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        for _ in range(self.count):
            transport, pipes = await loop.subprocess_exec(
                _Pipes,
                sys.executable,
                "-m",
                "kit.sim.cryptoworker",
                _SECRET_ARG if self._secret is not None else str(self.seed),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
            )
            if self._secret is not None:
                pipes.write(_LENGTH.pack(len(self._secret)) + self._secret)
            # asyncio's own process handle (wait, kill) over our protocol, which has no streams
            process = asyncio.subprocess.Process(transport, pipes, loop)  # type: ignore[arg-type]
            self._workers.append(_Worker(process, pipes))

    @property
    def running(self) -> int:
        """How many workers are alive."""
        return sum(w.alive for w in self._workers)

    def decrypt(self, seed: int, token: str) -> asyncio.Future[bytes]:
        """The token's plaintext, awaited; CryptoError if refused; WorkerUnavailable if none can
        (raised at once, or by the future when its worker is lost). A future rather than a
        coroutine: one frame less to suspend and resume on every hand-off."""
        workers = self._workers
        if len(workers) == 1:  # kit serve's default: no choosing
            worker = workers[0]
            if not worker.alive:
                raise WorkerUnavailable()
        else:
            alive = [w for w in workers if w.alive]
            if not alive:
                raise WorkerUnavailable()
            worker = min(alive, key=lambda w: len(w.waiting))
        try:
            return worker.submit(seed, token)
        except (ConnectionError, RuntimeError) as exc:
            raise WorkerUnavailable() from exc

    async def aclose(self) -> None:
        workers, self._workers = self._workers, []
        await asyncio.gather(*(w.aclose() for w in workers))


def serve(stdin: BinaryIO, stdout: BinaryIO, seed: int | None = None, *, secret: bool = False) -> None:
    """The worker's loop: a frame in, a frame out, until the parent closes the pipe. With
    ``secret``, the first frame is the keys' secret, and every token is decrypted with its keys."""
    from kit.sim.crypto import SimKeys
    from kit.sim.state import keys_for, keys_of_secret

    read = getattr(stdin, "read1", stdin.read)  # what is there (one system call), not a fixed size
    buffer = b""
    fixed: SimKeys | None = None  # the secret's keys, whatever a frame's seed
    if seed is not None:
        keys_for(seed)  # derive the keys now, not on the first session
    while True:
        chunk = read(_READ_SIZE)
        if not chunk:
            return
        buffer += chunk
        while len(buffer) >= _LENGTH.size:
            end = _LENGTH.size + _LENGTH.unpack_from(buffer)[0]
            if len(buffer) < end:
                break
            frame, buffer = buffer[_LENGTH.size : end], buffer[end:]
            if secret and fixed is None:
                fixed = keys_of_secret(frame)
                continue
            (seed,) = _SEED.unpack_from(frame)
            try:
                keys = fixed if fixed is not None else keys_for(seed)
                answer = _DECRYPTED + keys.decrypt(frame[_SEED.size :].decode())
            except (CryptoError, UnicodeDecodeError):
                answer = _REFUSED
            stdout.write(_LENGTH.pack(len(answer)) + answer)
            stdout.flush()  # each answer as soon as it is ready: the loop may be waiting for it


def _main(argv: list[str]) -> None:
    if argv and argv[0] == _SECRET_ARG:
        serve(sys.stdin.buffer, sys.stdout.buffer, secret=True)
    else:
        serve(sys.stdin.buffer, sys.stdout.buffer, int(argv[0]) if argv else None)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        _main(sys.argv[1:])
