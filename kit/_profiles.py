"""Profiles: what the server a client talks to has, decided once, by one object.

``kit.connect(profile)`` looks the profile's name up in :data:`PROFILES` (the one place a name
such as ``"sim"`` or ``"sandbox"`` — as in ``kit regress -p profile=sandbox`` — is read) and
keeps the object as ``api.config.profile``. Everything that depends on the profile asks it:

- where the settings come from (``settings``), how the embedded simulator starts (``start``);
- where test personas and their KYC answers come from (:meth:`Profile.personas`): the
  simulator's control plane, or the fixtures file named by ``PARTNER_API_SANDBOX_FIXTURES``;
- what the server has: its clock (``server_clock``), a reachable webhook receiver
  (``reaches_receiver``), a control plane, its own choices named (``server_choices``); whether a
  choice miss fails or differs (``knows_choices``), secrets may leave this machine
  (``secrets_may_leave``), this machine starts its servers (``own_servers``).

A third profile (a partner's staging, say) is one class, passed (or an instance) to ``kit.connect``::

    >>> class Staging(SandboxProfile):
    ...     name = "staging"
    >>> lookup(Staging).name, lookup("sandbox").control_plane
    ('staging', False)
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from kit import _choices as overlays
from kit import _env as env
from kit import register
from kit._sensitive import Sensitive
from kit.errors import ConfigError, FixturesError
from kit.models import Persona

if TYPE_CHECKING:  # the fixtures module is imported by a sandbox profile's first read of its file
    from kit._fixtures import AnyPersona, FixturePersona, Fixtures

__all__ = [
    "PROFILES",
    "FixturePersonas",
    "Personas",
    "Profile",
    "SandboxProfile",
    "Settings",
    "SimPersonas",
    "SimProfile",
    "lookup",
]

#: The settings a profile reads and the environment variable each comes from.
ENV_VARS = {"base_url": env.BASE_URL, "client_id": env.CLIENT_ID, "client_secret": env.CLIENT_SECRET}
#: ``(base_url, client_id, client_secret, further Config fields)``.
Settings = tuple[str | None, str, str, dict[str, Any]]


class SimAnswers(Protocol):
    """What :class:`SimPersonas` asks of ``api.sim`` (:class:`kit._resources.SimControl`)."""

    def persona(self, which: int | str = 0) -> Persona: ...

    def kyc_answers(self, person_id: str) -> Sensitive[Any]: ...


class HasSim(Protocol):
    """A client with a control plane (:class:`kit.Client` in the ``sim`` profile)."""

    @property
    def sim(self) -> SimAnswers: ...


class ControlClock(Protocol):
    """What :meth:`Profile.server_clock` asks of a requestor (:class:`kit._requestor.Requestor`)."""

    def control_clock(self) -> datetime: ...


class Personas:
    """Where one client's test personas and their KYC answers come from.

    ``next()`` cycles through the personas, per client (a fresh client starts at the first).
    """

    def ids(self) -> list[str]:
        """The persona ids to pick from (no PII)."""
        raise NotImplementedError

    def get(self, which: int | str = 0) -> AnyPersona:
        """A persona by position or ``persona_id``."""
        raise NotImplementedError

    def next(self) -> AnyPersona:
        """The next persona of this client's turn."""
        raise NotImplementedError

    def matching(self, pii: Mapping[str, Any]) -> FixturePersona | None:
        """The published persona with this PII (``None``: not needed, or none)."""
        return None

    def kyc_answers(
        self,
        person_id: str,
        questions: Sequence[Mapping[str, Any]] | Sensitive[Any],
        who: AnyPersona | str | None = None,
    ) -> Sensitive[Any]:
        """The answers that pass KYC for ``person_id``, wrapped (``who``: the persona the
        person was created from, or its id, where the source needs it)."""
        raise NotImplementedError


class SimPersonas(Personas):
    """The simulator's personas (``register.personas()``, ``api.sim.persona``) and right
    answers (``api.sim.kyc_answers``)."""

    def __init__(self, sim: SimAnswers) -> None:
        self._sim = sim
        self._turns = itertools.count()

    def ids(self) -> list[str]:
        return [str(p["persona_id"]) for p in register.personas()]

    def get(self, which: int | str = 0) -> AnyPersona:
        return self._sim.persona(which)

    def next(self) -> AnyPersona:
        people = register.personas()
        return Persona.from_wire(people[next(self._turns) % len(people)])

    def kyc_answers(
        self,
        person_id: str,
        questions: Sequence[Mapping[str, Any]] | Sensitive[Any],
        who: AnyPersona | str | None = None,
    ) -> Sensitive[Any]:
        return self._sim.kyc_answers(person_id)


class FixturePersonas(Personas):
    """The personas and answers a sandbox publishes (:mod:`kit._fixtures`)."""

    def __init__(self, published: Callable[[], Fixtures | None]) -> None:
        self._published = published
        self._turns = itertools.count()

    def _required(self) -> Fixtures:
        found = self._published()
        if found is None:
            raise FixturesError(
                f"the sandbox profile takes its test personas and KYC answers from the file named by "
                f"{env.SANDBOX_FIXTURES}: set it "
                "(kit serve --sandbox-fixtures PATH writes one for the simulator)"
            )
        return found

    def ids(self) -> list[str]:
        return [p.persona_id for p in self._required().personas]

    def get(self, which: int | str = 0) -> AnyPersona:
        return self._required().persona(which)

    def next(self) -> AnyPersona:
        published = self._required()
        return published.personas[next(self._turns) % len(published)]

    def matching(self, pii: Mapping[str, Any]) -> FixturePersona | None:
        found = self._published()
        return found.matching(pii) if found is not None else None

    def kyc_answers(
        self,
        person_id: str,
        questions: Sequence[Mapping[str, Any]] | Sensitive[Any],
        who: AnyPersona | str | None = None,
    ) -> Sensitive[Any]:
        if who is None:
            raise FixturesError(
                "no sandbox fixtures persona has this PII, so its KYC answers are not known: "
                "onboard a fixtures persona (persona=, or who= for the answers) or pass answers="
            )
        chosen = self._required().persona(who if isinstance(who, str) else who.persona_id)
        return chosen.answers(questions)


#: A profile and the dialect file its client speaks (``None``: the simulator's own spelling).
Spoken = tuple["Profile", "overlays.Overlay | None"]


class Profile:
    """What a server has (see the module docstring). Subclass it for a new profile.

    The defaults are a partner's sandbox: settings from ``PARTNER_API_*``, personas from the
    fixtures file, the machine's clock, no control plane.
    """

    #: The name ``kit.connect`` and ``-p profile=`` take.
    name: ClassVar[str] = "sandbox"
    #: The simulator's control plane (``/_sim``): clock travel, faults, funding, deliveries log.
    control_plane: ClassVar[bool] = False
    #: The server names its own choices (``svc-assumptions``: register entries).
    server_choices: ClassVar[bool] = False
    #: The server's choices are the ones checks expect (the register's, or an expectation
    #: overlay's): a choice check that does not hold is a failure. Elsewhere it is a
    #: difference (``kit.notebook``), reported apart and not failing the run.
    knows_choices: ClassVar[bool] = False
    #: Secrets (client secret, partner token) may be handed to other machines. When not,
    #: ``kit regress`` fetches the partner token once, here, for the whole run and refuses a
    #: Dask scheduler.
    secrets_may_leave: ClassVar[bool] = False
    #: The loopback webhook receiver starts and subscribes on first use of ``api.webhooks``.
    listens_by_default: ClassVar[bool] = False
    #: This machine may start servers of this profile at will (the simulator, embedded in a
    #: process): a population's shards each run their own. When not, the shards are clients of
    #: the one server the settings name, and a population there is capped (``kit.simulate``).
    own_servers: ClassVar[bool] = False

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = environ
        self._fixtures: tuple[tuple[str, float, int], Fixtures] | None = None

    def __repr__(self) -> str:
        return f"<profile {self.name}>"

    def __str__(self) -> str:
        return self.name

    def settings(self, given: dict[str, Any], environ: Mapping[str, str]) -> Settings:
        """Base URL, client id and secret from ``given`` (keyword arguments, popped) or the
        environment, never notebook parameters; a partner token ``kit regress`` handed over.

        Raises:
            ConfigError: missing settings, each named.
        """
        values = {
            "base_url": given.pop("base_url", None) or environ.get(ENV_VARS["base_url"]),
            "client_id": given.pop("client_id", None) or environ.get(ENV_VARS["client_id"]),
            "client_secret": given.pop("client_secret", None) or environ.get(ENV_VARS["client_secret"]),
        }
        missing = [ENV_VARS[k] for k, v in values.items() if not v]
        if missing:
            raise ConfigError(
                f"the {self.name} profile needs {', '.join(missing)}: set them in the environment "
                "(or pass base_url=, client_id=, client_secret= to kit.connect)"
            )
        extra: dict[str, Any] = {}
        handed = environ.get(env.ACCESS_TOKEN)  # fetched once by ``kit regress``, never a parameter
        if handed:
            extra["access_token"] = Sensitive(handed, label="access_token")
        return (
            str(values["base_url"]).rstrip("/"),
            str(values["client_id"]),
            str(values["client_secret"]),
            extra,
        )

    def start(self) -> str | None:
        """Start (or reuse) the server this profile brings along; its base URL, or ``None``."""
        return None

    def with_choices(self, path: str | None, environ: Mapping[str, str], base_url: bool = False) -> Spoken:
        """This profile, and the dialect file the client speaks (``choices=FILE``, else
        ``PARTNER_API_CHOICES``; ``None``: the simulator's own spelling). A refused file is a
        ConfigError naming entry and key."""
        return self, _load(path or environ.get(env.PARTNER_CHOICES))

    def reaches_receiver(self, base_url: str | None) -> bool:
        """Whether the API can deliver to a webhook receiver on this machine's loopback."""
        return env.is_loopback_url(base_url)

    def server_clock(self, requestor: ControlClock) -> datetime:
        """The time webhook signatures are judged against: the machine's clock, as a partner's
        own server would use."""
        return datetime.now(UTC)

    def fixtures(self) -> Fixtures | None:
        """The published personas (``PARTNER_API_SANDBOX_FIXTURES``), read in memory once per
        file version, or ``None`` when the variable is not set.

        Raises:
            FixturesError: the file cannot be used.
        """
        environ = os.environ if self._environ is None else self._environ
        path = environ.get(env.SANDBOX_FIXTURES)
        if not path:
            return None
        from kit import _fixtures as fixtures

        key = fixtures.version(path)
        if self._fixtures is None or self._fixtures[0] != key:
            self._fixtures = (key, fixtures.load(path))
        return self._fixtures[1]

    def personas(self, client: HasSim) -> Personas:
        """Where ``client``'s test personas and KYC answers come from: the fixtures file."""
        return FixturePersonas(self.fixtures)


def _load(path: str | None) -> overlays.Overlay | None:
    """The overlay at ``path`` (``None`` for none); a refusal is a ConfigError naming entry and key."""
    if not path:
        return None
    try:
        return overlays.load(path)
    except overlays.ChoicesError as exc:
        raise ConfigError(f"dialect file refused: {exc}") from None


class SandboxProfile(Profile):
    """A partner's sandbox (``PARTNER_API_*``; personas from the fixtures file)."""

    name = "sandbox"


class SimProfile(Profile):
    """The simulator: embedded (or ``base_url=`` of a ``kit serve``), its control plane, its
    personas and its clock."""

    name = "sim"
    control_plane = True
    server_choices = True
    knows_choices = True
    secrets_may_leave = True
    listens_by_default = True
    own_servers = True

    def settings(self, given: dict[str, Any], environ: Mapping[str, str]) -> Settings:
        """The simulator's first built-in partner client unless overridden; the base URL may
        be left out (the embedded simulator's is filled in by ``kit.connect``)."""
        client_id, secret = next(iter(env.SIM_PARTNER_CLIENTS.items()))
        return (
            given.pop("base_url", None),
            given.pop("client_id", None) or client_id,
            given.pop("client_secret", None) or secret,
            {},
        )

    #: The choice overlay the embedded simulator starts with (``choices=``, ``KIT_SIM_CHOICES``).
    choices: overlays.Overlay | None = None

    def with_choices(self, path: str | None, environ: Mapping[str, str], base_url: bool = False) -> Spoken:
        """With the dialect file ``path`` (else ``PARTNER_API_CHOICES``): the client speaks it, the
        embedded simulator serves it (else ``KIT_SIM_CHOICES``'s; another overlay than a running
        one's starts a second one). At ``base_url=`` (a ``kit serve``) only the client speaks it.
        A refused file is a ConfigError naming entry and key."""
        spoken = _load(path or environ.get(env.PARTNER_CHOICES))
        served = None if base_url else spoken or _load(environ.get(env.SIM_CHOICES))
        if served is None:
            return self, spoken
        profile = type(self)(self._environ)
        profile.choices = served
        return profile, spoken or served

    def start(self) -> str | None:
        from kit._embedded import embedded_base_url

        return embedded_base_url(self.choices)

    def reaches_receiver(self, base_url: str | None) -> bool:
        return True

    def server_clock(self, requestor: ControlClock) -> datetime:
        """The simulator's clock (``GET /_sim/clock``), which the control plane moves."""
        return requestor.control_clock()

    def personas(self, client: HasSim) -> Personas:
        return SimPersonas(client.sim)


#: The profiles by name: the one place a profile's name is read.
PROFILES: Mapping[str, type[Profile]] = MappingProxyType({"sim": SimProfile, "sandbox": SandboxProfile})


def lookup(profile: str | Profile | type[Profile]) -> Profile:
    """The profile object for a name, a :class:`Profile` class, or a profile object.

    Raises:
        ConfigError: an unknown name (the known ones are named).
    """
    if isinstance(profile, Profile):
        return profile
    if isinstance(profile, type) and issubclass(profile, Profile):
        return profile()
    found = PROFILES.get(str(profile))
    if found is None:
        raise ConfigError(f"profile {profile!r} is not known; allowed: {', '.join(PROFILES)}")
    return found()


def profile_class(name: str) -> type[Profile]:
    """The class of a profile name (``kit regress`` asks it before any client exists).

    Raises:
        ConfigError: an unknown name.
    """
    return type(lookup(name))
