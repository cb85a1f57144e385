"""Crypto worker processes (``kit serve --crypto-workers``): same answers, off the event loop.

The HTTP contract in both modes is covered by the JWE, session and onboarding modules (their
``http`` runs each test in both). Here: the workers really do the decrypting, refuse what the
simulator refuses, and a dead worker costs speed, never an answer.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from kit.sim.crypto import CryptoError
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


def _token(seed: int, plaintext: dict[str, Any]) -> str:
    keys = keys_for(seed)
    init = {"jwks": keys.encryption_jwks()}
    return encrypt_for_server(init, plaintext)


def test_workers_decrypt_what_the_simulator_decrypts_and_refuse_the_rest() -> None:
    async def scenario() -> None:
        workers = CryptoWorkers(2, seed=7)
        await workers.start()
        try:
            assert workers.running == 2
            good = _token(7, {"nonce": "n-1"})
            other_seed = _token(8, {"nonce": "n-2"})  # encrypted to another seed's key
            answers = await asyncio.gather(
                workers.decrypt(7, good),
                workers.decrypt(8, other_seed),
                workers.decrypt(7, other_seed),
                workers.decrypt(7, "not.a.jwe.at.all"),
                return_exceptions=True,
            )
            assert json.loads(answers[0]) == {"nonce": "n-1"}
            assert answers[0] == keys_for(7).decrypt(good)
            assert json.loads(answers[1]) == {"nonce": "n-2"}
            assert isinstance(answers[2], CryptoError)
            assert isinstance(answers[3], CryptoError)
            assert workers.answered == 4
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
    workers_server: Any, both_decrypt_modes: Any
) -> None:
    http = both_decrypt_modes
    token = partner_token(http)
    workers = _sim(workers_server).crypto
    before = workers.answered
    r = create_session(http, token, Device())
    assert r.status_code == 201, r.text
    on_worker_server = str(http.base_url).rstrip("/") == workers_server.base_url
    assert workers.answered == before + (1 if on_worker_server else 0)


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
