"""Resolving ``kit.connect``'s profile and overrides into one :class:`Config`.

Profiles:

- ``sim``: the embedded simulator (started or reused through :mod:`kit._embedded`), the
  simulator's first built-in partner client (``sim-partner`` / ``sim-secret``,
  :data:`kit.env.SIM_PARTNER_CLIENTS`) unless overridden.
- ``sandbox``: ``PARTNER_API_BASE_URL``, ``PARTNER_API_CLIENT_ID`` and
  ``PARTNER_API_CLIENT_SECRET`` from the environment or keyword arguments — never notebook
  parameters (papermill writes parameters into the output notebook). The names come from
  :mod:`kit.env`.

Example::

    >>> cfg = resolve("sandbox", {"base_url": "https://sandbox.example", "client_id": "me",
    ...                            "client_secret": "s3cret"}, environ={})
    >>> cfg.client_secret
    Sensitive(client_secret=••••••)
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kit import env
from kit.errors import ConfigError
from kit.sensitive import Sensitive

__all__ = ["DRIFT_MODES", "ENV_VARS", "PROFILES", "Config", "resolve"]

PROFILES = ("sim", "sandbox")
#: The sandbox settings and the environment variable each is read from.
ENV_VARS = {"base_url": env.BASE_URL, "client_id": env.CLIENT_ID, "client_secret": env.CLIENT_SECRET}
#: The ``sim`` profile's partner client: the simulator's first built-in one.
SIM_CLIENT_ID, SIM_CLIENT_SECRET = next(iter(env.SIM_PARTNER_CLIENTS.items()))


@dataclass(frozen=True)
class Config:
    """Everything a client needs; secrets are :class:`~kit.Sensitive`."""

    profile: str
    base_url: str | None
    client_id: str
    client_secret: Sensitive[str] = field(repr=False)
    allow_deprecated: bool = False
    jwe_alg: str = "RSA-OAEP-256"
    timeout: float = 10.0
    max_retries: int = 4
    backoff_base: float = 0.2
    backoff_cap: float = 8.0
    max_retry_after: float = 60.0
    rng: random.Random = field(default_factory=random.Random, repr=False)
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    device: Mapping[str, str] | None = None
    control_token: Sensitive[str] | None = field(default=None, repr=False)
    token_refresh_margin: float = 60.0
    access_token: Sensitive[str] | None = field(default=None, repr=False)
    drift: str = "report"


_OPTIONS = {
    "base_url",
    "client_id",
    "client_secret",
    "allow_deprecated",
    "jwe_alg",
    "timeout",
    "max_retries",
    "backoff_base",
    "backoff_cap",
    "max_retry_after",
    "rng",
    "seed",
    "sleep",
    "device",
    "control_token",
    "token_refresh_margin",
    "drift",
}
#: ``drift=``: report contract drift in ``api.drift`` (default), raise ContractDrift, or skip the check.
DRIFT_MODES = ("report", "raise", "off")


def resolve(profile: str, overrides: Mapping[str, Any], *, environ: Mapping[str, str]) -> Config:
    """Build the configuration for ``profile`` from keyword overrides and the environment.

    ``seed`` seeds the retry jitter's random source (or pass ``rng``); ``sleep`` replaces
    ``time.sleep`` between retries (tests); ``drift`` is what contract drift does: ``"report"``
    (``api.drift``, the default), ``"raise"`` (``ContractDrift``) or ``"off"``. For ``sim``
    the base URL may be left out: the embedded simulator's is filled in by :func:`kit.connect`.

    Raises:
        ConfigError: an unknown profile or option, or (sandbox) missing settings, named.
    """
    if profile not in PROFILES:
        raise ConfigError(f"profile {profile!r} is not known; allowed: {', '.join(PROFILES)}")
    unknown = sorted(set(overrides) - _OPTIONS)
    if unknown:
        raise ConfigError(f"unknown option(s) {', '.join(unknown)}; accepted: {', '.join(sorted(_OPTIONS))}")
    opts = dict(overrides)
    secret_in = opts.pop("client_secret", None)
    if isinstance(secret_in, Sensitive):
        secret_in = secret_in.reveal()
    control = opts.pop("control_token", None)
    if isinstance(control, Sensitive):
        control = control.reveal()
    seed = opts.pop("seed", None)
    if "rng" not in opts and seed is not None:
        opts["rng"] = random.Random(seed)

    if profile == "sim":
        base_url = opts.pop("base_url", None)
        client_id = opts.pop("client_id", None) or SIM_CLIENT_ID
        secret = secret_in or SIM_CLIENT_SECRET
    else:
        values = {
            "base_url": opts.pop("base_url", None) or environ.get(ENV_VARS["base_url"]),
            "client_id": opts.pop("client_id", None) or environ.get(ENV_VARS["client_id"]),
            "client_secret": secret_in or environ.get(ENV_VARS["client_secret"]),
        }
        missing = [ENV_VARS[k] for k, v in values.items() if not v]
        if missing:
            raise ConfigError(
                f"the sandbox profile needs {', '.join(missing)}: set them in the environment "
                "(or pass base_url=, client_id=, client_secret= to kit.connect)"
            )
        base_url = str(values["base_url"]).rstrip("/")
        client_id = str(values["client_id"])
        secret = str(values["client_secret"])
        handed = environ.get(env.ACCESS_TOKEN)  # fetched once by ``kit regress``, never a parameter
        if handed:
            opts["access_token"] = Sensitive(handed, label="access_token")
    if opts.get("drift", "report") not in DRIFT_MODES:
        raise ConfigError(f"drift {opts['drift']!r} is not allowed; allowed: {', '.join(DRIFT_MODES)}")
    if opts.get("jwe_alg", "RSA-OAEP-256") not in ("RSA-OAEP-256", "ECDH-ES+A256KW"):
        raise ConfigError(
            f"jwe_alg {opts['jwe_alg']!r} is not allowed; allowed: RSA-OAEP-256, ECDH-ES+A256KW"
        )
    return Config(
        profile=profile,
        base_url=base_url.rstrip("/") if base_url else None,
        client_id=client_id,
        client_secret=Sensitive(secret, label="client_secret"),
        control_token=Sensitive(control, label="control_token") if control else None,
        **opts,
    )
