"""One running simulator: its settings, state, webhook engine and crypto workers.

The app keeps it in ``app.state.sim``; routes reach it through ``request.app.state.sim``.

    >>> sim = Sim(Settings(seed=7))  # doctest: +SKIP
    >>> sim.version  # doctest: +SKIP
    '1.2.0-20221215'
"""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

from kit import register
from kit.sim.crypto import Payloads
from kit.sim.cryptoworker import CryptoWorkers
from kit.sim.delivery import DeliveryEngine
from kit.sim.guard import StartRefused
from kit.sim.models import Representation
from kit.sim.personality import Personality, resolve
from kit.sim.settings import Settings
from kit.sim.state import State
from kit.sim.statebounds import start_outside


class Sim:
    """What every route reaches through ``request.app.state.sim``."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.version: str = register.fact("version")
        #: The register's values under the settings' choice overlay, resolved once (ChoicesError).
        self.personality: Personality = resolve(settings.choices)
        #: The payloads sealed and opened (JWEs, webhook bodies), spelled as its dialect spells them.
        self.payloads = Payloads(self.personality.dialect)
        refusal = start_outside(settings.seed, self.starting_balance)  # a state it would refuse (A71)
        if refusal is not None:
            raise StartRefused(refusal)
        #: The state file of a durable simulator (``kit serve --state``); None: in memory.
        self.state_file: Any = None
        restore, sealer = None, None
        if settings.state_file:
            self.state_file, restore, sealer = self._open_state_file()
        try:
            self.state = State(
                settings.seed,
                settings.clock_start,
                wall_clock=settings.follows_wall_clock,
                uuid_ids=self.personality.uuid_ids,
                sealer=sealer,  # the secret kept beside the state file; None: one of this process
                secret_keys=settings.secret_keys,
            )
            if self.state_file is not None:
                self._load(restore)
        except BaseException:
            if self.state_file is not None:
                self.state_file.close()
            raise
        self.delivery = DeliveryEngine(self.state, self.version, settings, self.payloads)
        #: Worker processes that decrypt JWEs off the event loop (``kit serve``); None: on it.
        self.crypto = (
            CryptoWorkers(settings.crypto_workers, settings.seed, self._keys_secret())
            if settings.crypto_workers
            else None
        )

    def _keys_secret(self) -> bytes | None:
        """What the crypto workers derive the keys from: the secret's, when the keys are."""
        return self.state.sealer.derive("server-keys") if self.state.secret_keys else None

    def _open_state_file(self) -> tuple[Any, bytes | None, Any]:
        """The state file (held), the snapshot to start from and the secret kept beside the file."""
        from kit.sim import statefile  # sqlite3 only for a durable simulator
        from kit.sim.durable import StateFile

        settings = self.settings
        assert settings.state_file is not None
        restore = settings.restore
        data = statefile.read_snapshot(restore, settings.snapshot_max_bytes) if restore else None
        state_file = StateFile.open(settings.state_file, settings.sqlite_budget)
        try:
            sealer = statefile.sealer_beside(state_file.path)
            if data is not None and state_file.holds_state() and not settings.replace:
                raise statefile.StateFileError(
                    f"{state_file.path} already holds state: pass --replace to start it over from "
                    f"{settings.restore}, or give a new --state file"
                )
        except BaseException:
            state_file.close()
            raise
        return state_file, data, sealer

    def _load(self, data: bytes | None) -> None:
        """The state from the file, then from the snapshot to start from (if any)."""
        from kit.sim import statefile

        self.state_file.load(self.state)
        if data is not None:
            settings = self.settings
            where = settings.restore or "the snapshot"
            loaded = statefile.read_snapshot_bytes(data, settings.sqlite_budget, where=where)
            statefile.apply(self.state, loaded)
            self.state.commit()

    def snapshot(self) -> bytes:
        """The whole state as a snapshot (a SQLite database; ``kit.sim.statefile``)."""
        from kit.sim import statefile

        return statefile.snapshot(self.state)

    async def restore(self, data: bytes) -> None:
        """Replace the state with a snapshot's (StateFileError, nothing changed, if it is not one):
        read and validated off the event loop, then swapped in on it (A71); deliveries in flight
        are cancelled, pending ones resume."""
        from kit.sim import statefile

        loaded = await asyncio.to_thread(statefile.read_snapshot_bytes, data, self.settings.sqlite_budget)
        self.delivery.cancel_all()
        statefile.apply(self.state, loaded)
        self.delivery.resume()

    async def start(self) -> None:
        """Start what runs beside the app (the app's lifespan calls this)."""
        if self.crypto is not None:
            await self.crypto.start()
        if self.state_file is not None:
            self.delivery.resume()  # what was pending when the server stopped

    async def aclose(self) -> None:
        """Stop the webhook engine and the crypto workers (the app's lifespan calls this)."""
        await self.delivery.aclose()
        if self.crypto is not None:
            await self.crypto.aclose()
        if self.state_file is not None:
            self.state.commit()
            self.state_file.close()

    @property
    def starting_balance(self) -> Decimal:
        """The balance a new account opens with: the setting, else the register's (A10)."""
        if self.settings.starting_balance is not None:
            return Decimal(self.settings.starting_balance)
        return self.personality.starting_balance

    def reset(self, seed: int) -> None:
        """Back to the seeded start: deliveries in flight cancelled, state reset to ``seed``."""
        self.delivery.cancel_all()
        self.state.reset(seed)

    def show(self, model: type[Representation], record: Any) -> dict[str, Any]:
        """``record`` as ``model`` answers it under this personality (optional fields, A62)."""
        return self.personality.writer(model)(record)

    def emit(self, partner: str, event_type: str, data: dict[str, Any]) -> str:
        """Record a webhook event for the partner's subscriptions; returns its ``evt_`` id."""
        return self.delivery.emit(partner, event_type, data)
