"""Where a population's customers are played: simulators of the shards' own, or the one server
of another profile, capped.

The caller's profile says which (:attr:`kit._profiles.Profile.own_servers`):

- ``sim``: each shard starts a simulator of its own, in its worker process — seeded, faults
  injected through its control plane, its ledger read at the end. The caller's is never touched.
- any other profile (a partner's sandbox): the shards are clients of that profile's server,
  its base URL and credentials read from this process's environment as the profile reads them.
  At most ``server_cap`` customers run there (:data:`DEFAULT_SERVER_CAP`), each a full
  onboarding, playing the server's published test personas (the fixtures file), cycled. What
  needs the simulator's control plane is not done, and says so: ``faults=`` is refused, the
  ledger check is :attr:`Target.skipped` with its reason.

Local worker processes get the server's settings through their environment — never their
command line, never a file — with one partner token for the whole run, handed as
``PARTNER_API_ACCESS_TOKEN`` as ``kit regress`` hands it (reused when the caller already has
one). A profile whose secrets may not leave this machine refuses a Dask cluster
(``cluster=``), as ``kit regress`` refuses ``--scheduler``.

Example::

    >>> Target.of("sim").own, Target.of("sim").customers(1000)
    (True, 1000)
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
from typing import Any

from kit import _env as env
from kit._profiles import FixturePersonas, Profile, lookup
from kit._sensitive import Sensitive
from kit._tls import TLS_OPTIONS, TlsFiles
from kit.errors import ConfigError
from kit.notebook import NEEDS

__all__ = ["DEFAULT_SERVER_CAP", "Target"]

#: Customers run against a server the shards share (a sandbox) when ``server_cap`` is not given:
#: a handful, each a full onboarding — a check that the journeys hold there, not a load test.
DEFAULT_SERVER_CAP = 5

#: The environment variables a worker process of a server run is given (their values as now).
_PASSED = (env.BASE_URL, env.CLIENT_ID, env.CLIENT_SECRET, env.SANDBOX_FIXTURES, *TLS_OPTIONS.values())


@dataclasses.dataclass(frozen=True)
class Target:
    """Where a run's shards play their customers (see the module docstring).

    ``profile``: the caller's profile class (the shards connect with it); ``cap``: the most
    customers on a shared server (``None``: no cap, the shards' own simulators); ``personas``:
    the published personas the plans cycle through (``None``: the simulator's register);
    ``server``: the shared server's base URL (``None``: the shards' own simulators).
    """

    profile: type[Profile]
    cap: int | None = None
    personas: tuple[Mapping[str, Any], ...] | None = None
    server: str | None = None

    @classmethod
    def of(
        cls, profile: str | Profile | type[Profile] = "sim", server_cap: int = DEFAULT_SERVER_CAP
    ) -> Target:
        """The target of ``profile``: its settings and published personas checked now.

        Raises:
            ValueError: ``server_cap`` < 1.
            ConfigError: an unknown profile, or its settings missing (each named).
            FixturesError: a server profile without a usable fixtures file.
        """
        if server_cap < 1:
            raise ValueError("server_cap must be >= 1")
        chosen = lookup(profile)
        if chosen.own_servers:
            return cls(type(chosen))
        base_url = chosen.settings({}, os.environ)[0]
        ids = FixturePersonas(chosen.fixtures).ids()
        return cls(type(chosen), server_cap, tuple({"persona_id": i} for i in ids), base_url)

    @property
    def own(self) -> bool:
        """Each shard runs its own simulator (else: the shards share the profile's server)."""
        return self.profile.own_servers

    @property
    def name(self) -> str:
        return self.profile.name

    def customers(self, requested: int) -> int:
        """How many of ``requested`` customers run (at most the cap on a shared server)."""
        return requested if self.cap is None else min(requested, self.cap)

    @property
    def skipped(self) -> Mapping[str, str]:
        """What this target does not do, with the reason (empty on the shards' own simulators)."""
        if self.own:
            return {}
        return {"ledger": f"the ledger check {NEEDS['control plane'].reason}"}

    def refuse(self, faults: Iterable[Any], cluster: Any) -> None:
        """Refuse what this target cannot do, before anything runs.

        Raises:
            ValueError: faults on a shared server (they are injected through each shard's own
                simulator's control plane).
            ConfigError: a cluster for a profile whose secrets may not leave this machine.
        """
        if list(faults) and not self.own:
            raise ValueError(
                f"faults= are injected through each shard's own simulator (its control plane); on the "
                f"{self.name} profile the shards are clients of its server, which has none: drop faults= "
                "or run on the sim profile"
            )
        if cluster is not None and not self.profile.secrets_may_leave:
            raise ConfigError(
                f"a population on the {self.name} profile stays on this machine: its shards would need "
                f"the {self.name} credentials and partner token on the cluster's workers. Drop cluster= "
                "(the shards then run in local worker processes)"
            )

    def environment(self) -> dict[str, str]:
        """What local worker processes are given in their environment: nothing for the
        shards' own simulators; for a shared server its settings and one partner token (the
        caller's ``PARTNER_API_ACCESS_TOKEN``, else fetched now, once for the run).

        Raises:
            ConfigError: the settings are missing.
            KitError: the token could not be fetched (its reason named, never a secret).
        """
        if self.own:
            return {}
        from kit._auth import fetch_token

        base_url, client_id, secret, extra = self.profile().settings({}, os.environ)
        files = TlsFiles.resolve({}, os.environ)  # mutual TLS: the workers get its files' absolute paths
        handed = extra.get("access_token")
        if handed is None:
            handed = fetch_token(
                str(base_url), client_id, Sensitive(secret, label="client_secret"), tls=files
            ).access_token
        given = {name: os.environ[name] for name in _PASSED if os.environ.get(name)}
        if files is not None:
            given.update(files.environ())
        return {**given, env.ACCESS_TOKEN: handed.reveal()}
