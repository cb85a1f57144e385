"""Settings of one simulator instance (passed to ``create_app``; no module-level state)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from kit import register
from kit._choices import Overlay
from kit._env import SIM_PARTNER_CLIENTS, is_loopback


@dataclass(frozen=True)
class Settings:
    """How a simulator starts.

    ``partners`` maps client ids to client secrets (A30: two partner clients ship,
    ``kit._env.SIM_PARTNER_CLIENTS``).
    ``strict`` makes the deprecated token endpoints answer 410. ``control`` mounts the
    ``/_sim`` control plane; ``control_token`` protects it (required off loopback). ``wall_clock``
    makes the clock follow the machine's instead of starting at ``clock_start`` (A46); by
    default it does exactly when the control plane is off (nobody could move it).
    ``webhook_hosts`` names hosts webhooks may be delivered to besides loopback (off loopback:
    besides global addresses, A39).
    ``host`` is the address ``kit serve`` binds (the embedded server binds 127.0.0.1): the guards
    of a team server follow it (A70, ``kit.sim.guard``), as do ``allowed_hosts``, the other
    names a request's Host may give (a reverse proxy's). ``snapshot_max_bytes`` and
    ``sqlite_budget`` bound an untrusted snapshot or state file (A71); ``max_concurrency`` the
    requests answered at once and ``header_timeout`` the seconds ``kit serve`` waits for a
    request's headers (A72).
    ``crypto_workers`` processes decrypt JWEs beside the event loop (``kit serve`` starts one
    per spare core); the embedded simulator decrypts in process.
    ``api_version`` serves the requests that name no version in ``svc-api-version`` (A27).
    ``state_file`` keeps the whole state in a SQLite file, written before every answer
    (``kit.sim.statefile``); ``restore`` starts it from a snapshot, over a file that already
    holds state only with ``replace``.
    ``choices`` re-chooses register values (``kit.sim.personality``: validated when the app is built).
    ``seeded_keys`` derives the server's keys from ``seed`` even where they would come from its
    secret (:attr:`secret_keys`): anyone who knows the seed can then decrypt what is sent to it
    and sign its webhooks.

        >>> Settings(seed=11, strict=True).partners["sim-partner"]
        'sim-secret'
    """

    seed: int = 7
    partners: dict[str, str] = field(default_factory=lambda: dict(SIM_PARTNER_CLIENTS))
    strict: bool = False
    control: bool = True
    control_token: str | None = None
    starting_balance: Decimal | None = None  # None: the register's value (A10)
    clock_start: str = "2025-01-06T09:00:00Z"
    wall_clock: bool | None = None  # None: the wall clock exactly when there is no control plane
    webhook_hosts: tuple[str, ...] = ()
    host: str = "127.0.0.1"  # the address kit serve binds; its guards follow it (A70)
    allowed_hosts: tuple[str, ...] = ()  # other names a request's Host may give (A70)
    snapshot_max_bytes: int = field(default_factory=lambda: int(register.value("A71")["snapshot_max_bytes"]))
    sqlite_budget: int = field(
        default_factory=lambda: int(register.value("A71")["sqlite_budget_instructions"])
    )
    max_concurrency: int = field(
        default_factory=lambda: int(register.value("A72")["max_concurrent_requests"])
    )
    header_timeout: float = field(
        default_factory=lambda: float(register.value("A72")["header_timeout_seconds"])
    )
    crypto_workers: int = 0  # processes that decrypt JWEs off the event loop; 0: on it
    api_version: str = "1.2.0-20221215"  # the version serving requests that name none (A27)
    state_file: str | None = None  # the SQLite file keeping the state (kit serve --state); None: memory
    restore: str | None = None  # a snapshot to start from (with state_file)
    replace: bool = False  # restore over a state file that already holds state
    choices: Overlay | None = None  # a choice overlay (kit._choices); None: the register's own values
    seeded_keys: bool = False  # keys from the seed even with named partners or off loopback

    @property
    def on_loopback(self) -> bool:
        """Whether the server is bound to this machine's loopback only."""
        return is_loopback(self.host)

    @property
    def secret_keys(self) -> bool:
        """Whether the server's keys (encryption and webhook signing) come from its secret
        (``kit.sim.atrest``) rather than its seed: with a partner client other than the published
        ones, or bound beyond loopback, unless ``seeded_keys``. On loopback with the published
        clients, the same seed gives the same keys (the simulator's determinism).

            >>> Settings().secret_keys, Settings(partners={"team": "long-secret"}).secret_keys
            (False, True)
        """
        named = any(SIM_PARTNER_CLIENTS.get(cid) != secret for cid, secret in self.partners.items())
        return not self.seeded_keys and (named or not self.on_loopback)

    @property
    def follows_wall_clock(self) -> bool:
        """Whether the clock is the machine's (A46): ``wall_clock``, else no control plane."""
        return (not self.control) if self.wall_clock is None else self.wall_clock
