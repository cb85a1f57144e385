"""Crypto worker processes (``kit serve --crypto-workers``): same answers, off the event loop.

The HTTP contract in both modes is covered by the JWE, session and onboarding modules (their
``http`` runs each test in both). Here: the workers really do the decrypting, refuse what the
simulator refuses, and a dead worker costs speed, never an answer. To tell who decrypted,
decrypting is made impossible in this process (``_no_decrypt_here``): the worker processes,
each its own interpreter, still can.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from kit.sim.crypto import CryptoError, SimKeys
from kit.sim.cryptoworker import CryptoWorkers, WorkerUnavailable
from kit.sim.state import keys_for
from tests.sim.helpers import (
    Device,
    assert_problem,
    create_session,
    encrypt_for_server,
    init_data,
    partner_token,
)


def _sim(server: Any) -> Any:
    return server._server.config.app.state.sim


def _no_decrypt_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on, a JWE decrypted in this process (an embedded simulator's loop) is refused."""

    def refuse(self: SimKeys, token: object) -> bytes:
        raise CryptoError("decrypted in the test process")

    monkeypatch.setattr(SimKeys, "decrypt", refuse)


def _token(seed: int, plaintext: dict[str, Any]) -> str:
    keys = keys_for(seed)
    init = {"jwks": keys.encryption_jwks()}
    return encrypt_for_server(init, plaintext)


def test_workers_decrypt_what_the_simulator_decrypts_and_refuse_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    good = _token(7, {"nonce": "n-1"})
    other_seed = _token(8, {"nonce": "n-2"})  # encrypted to another seed's key
    expected = keys_for(7).decrypt(good)
    _no_decrypt_here(monkeypatch)  # what is decrypted below, a worker decrypted

    async def scenario() -> None:
        workers = CryptoWorkers(2, seed=7)
        await workers.start()
        try:
            assert workers.running == 2
            answers = await asyncio.gather(
                workers.decrypt(7, good),
                workers.decrypt(8, other_seed),
                workers.decrypt(7, other_seed),
                workers.decrypt(7, "not.a.jwe.at.all"),
                return_exceptions=True,
            )
            decrypted, other = answers[0], answers[1]
            assert isinstance(decrypted, bytes) and isinstance(other, bytes), answers
            assert json.loads(decrypted) == {"nonce": "n-1"}
            assert decrypted == expected
            assert json.loads(other) == {"nonce": "n-2"}
            for refused in answers[2:]:  # refused by a worker, not by this process
                assert isinstance(refused, CryptoError) and str(refused) == "refused by the worker"
        finally:
            await workers.aclose()
        assert workers.running == 0
        with pytest.raises(WorkerUnavailable):
            await workers.decrypt(7, good)

    asyncio.run(scenario())


def test_a_worker_that_dies_fails_over_to_no_worker() -> None:
    async def scenario() -> None:
        workers = CryptoWorkers(1, seed=7)
        await workers.start()
        try:
            workers._workers[0].process.kill()
            await workers._workers[0].process.wait()
            with pytest.raises(WorkerUnavailable):
                for _ in range(50):  # until the parent has noticed the closed pipe
                    await workers.decrypt(7, _token(7, {"nonce": "n"}))
                    await asyncio.sleep(0.01)
            assert workers.running == 0
        finally:
            await workers.aclose()

    asyncio.run(scenario())


def test_sessions_on_a_worker_server_are_decrypted_by_the_worker(
    workers_server: Any, both_decrypt_modes: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    http = both_decrypt_modes
    token = partner_token(http)
    _no_decrypt_here(monkeypatch)
    r = create_session(http, token, Device())
    if str(http.base_url).rstrip("/") == workers_server.base_url:
        assert r.status_code == 201, r.text  # the worker decrypted it
    else:
        assert_problem(r, 400, "invalid-encrypted-data")  # this server decrypts on its loop


def test_after_a_worker_dies_sessions_are_still_created_and_refusals_unchanged() -> None:
    from kit.sim import Settings
    from kit.sim.server import start_embedded
    from tests.sim.helpers import checked_client, wait_until

    server = start_embedded(Settings(seed=7, crypto_workers=1))  # its own: this kills the worker
    try:
        worker = _sim(server).crypto._workers[0]
        worker.process.kill()
        assert wait_until(lambda: not worker.alive)
        with checked_client(server.base_url) as http:
            token = partner_token(http)
            assert create_session(http, token, Device()).status_code == 201
            init = init_data(http, token)
            bad = create_session(http, token, Device(), init=init, encrypted_data="x.y.z.w.v")
            assert_problem(bad, 400, "invalid-encrypted-data")
            # the refused JWE did not use the nonce up
            assert create_session(http, token, Device(), init=init).status_code == 201
            assert http.violations == []
    finally:
        server.stop()
