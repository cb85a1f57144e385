"""Resolving ``kit.connect``'s profile and overrides into one :class:`Config`.

The profile (:mod:`kit._profiles`) is looked up once, here, and decides where the settings
come from:

- ``sim``: the embedded simulator (started or reused through :mod:`kit._embedded`), the
  simulator's first built-in partner client (``sim-partner`` / ``sim-secret``,
  :data:`kit._env.SIM_PARTNER_CLIENTS`) unless overridden.
- ``sandbox``: ``PARTNER_API_BASE_URL``, ``PARTNER_API_CLIENT_ID`` and
  ``PARTNER_API_CLIENT_SECRET`` from the environment or keyword arguments — never notebook
  parameters (papermill writes parameters into the output notebook). The names come from
  :mod:`kit._env`.

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
from typing import TYPE_CHECKING, Any, Literal, get_args

from kit._dialect import DEFAULT as DEFAULT_DIALECT
from kit._dialect import Dialect
from kit._hooks import Hooks
from kit._profiles import ENV_VARS, Profile, lookup
from kit._sensitive import Sensitive
from kit._tls import TLS_OPTIONS, TlsFiles
from kit.errors import ConfigError

if TYPE_CHECKING:
    import httpx

__all__ = ["DRIFT_MODES", "ENV_VARS", "JWE_ALGS", "Config", "DriftMode", "JweAlg", "resolve"]


@dataclass(frozen=True)
class Config:
    """Everything a client needs; secrets are :class:`~kit.Sensitive`."""

    profile: Profile
    base_url: str | None
    client_id: str
    client_secret: Sensitive[str] = field(repr=False)
    allow_deprecated: bool = False
    jwe_alg: JweAlg = "RSA-OAEP-256"
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
    drift: DriftMode = "report"
    hooks: Hooks = field(default_factory=Hooks, repr=False)
    api_version: str | None = None
    record: bool = False
    #: What every ``httpx.Client`` of the client sends through (:mod:`kit._http`); None: httpx's.
    transport: httpx.BaseTransport | None = field(default=None, repr=False)
    #: How the server spells the wire (``choices=``, ``PARTNER_API_CHOICES``): the simulator's own
    #: unless a dialect file says otherwise (:mod:`kit._dialect`).
    dialect: Dialect = field(default=DEFAULT_DIALECT, repr=False)
    #: The CA bundle, client certificate and key of every ``https`` connection (paths; None: none).
    tls: TlsFiles | None = None

    def http_client(self) -> httpx.Client:
        """A plain ``httpx.Client`` of this server, for a request made by hand: its base URL, and
        the transport and TLS files (a client certificate included) the kit's own calls use. It
        sends no token: add the headers a request needs.

            >>> with api.config.http_client() as http:  # doctest: +SKIP
            ...     http.get("/webhooks/jwks").status_code
            401

        Raises:
            ConfigError: a TLS file cannot be used (the setting named).
        """
        from kit._http import http_client

        return http_client(self.base_url, transport=self.transport, tls=self.tls, timeout=self.timeout)


#: ``drift=``: report contract drift in ``api.drift`` (default), raise ContractDrift, or skip the check.
DriftMode = Literal["report", "raise", "off"]
DRIFT_MODES: tuple[DriftMode, ...] = get_args(DriftMode)
#: ``jwe_alg=``: the key management algorithms the client encrypts to the server with.
JweAlg = Literal["RSA-OAEP-256", "ECDH-ES+A256KW"]
JWE_ALGS: tuple[JweAlg, ...] = get_args(JweAlg)


def resolve(
    profile: str | Profile | type[Profile], overrides: Mapping[str, Any], *, environ: Mapping[str, str]
) -> Config:
    """Build the configuration for ``profile`` from the options :func:`kit.connect` was given
    (only those given: a missing one takes :class:`Config`'s default) and the environment.

        ``seed`` seeds the retry jitter's random source (or pass ``rng``); ``sleep`` replaces
        ``time.sleep`` between retries (tests); ``drift`` is what contract drift does: ``"report"``
        (``api.drift``, the default), ``"raise"`` (``ContractDrift``) or ``"off"``; ``api_version``: the
        version to pin (sent as ``svc-api-version`` on every call; None: the server's default); ``hooks``:
        :class:`kit._hooks.Hooks` (or a mapping of its fields); ``record``: keep the wire, redacted
        (:mod:`kit._wire`; off by default). For ``sim`` the base URL may be left out: the embedded
        simulator's is filled in by :func:`kit.connect`. ``choices`` (a path, else
        ``PARTNER_API_CHOICES``) is a dialect file the client speaks on every profile; the embedded
        simulator serves it (or, when neither is given, ``KIT_SIM_CHOICES``'s overlay). The TLS
        files (``client_cert``…, module docstring) are checked when an ``https`` client is made.

        Raises:
            ConfigError: an unknown profile, a value not allowed, or (sandbox) missing settings, named.
    """
    chosen = lookup(profile)
    opts = dict(overrides)
    # A dialect file the client speaks on every profile; the simulator a sim profile starts serves it.
    given_choices, at_url = opts.pop("choices", None), bool(opts.get("base_url"))
    chosen, overlay = chosen.with_choices(given_choices, environ, base_url=at_url)
    if overlay is not None:
        opts["dialect"] = Dialect.of(overlay)
    opts["tls"] = TlsFiles.resolve({name: opts.pop(name, None) for name in TLS_OPTIONS}, environ)
    secret_in = opts.pop("client_secret", None)
    if isinstance(secret_in, Sensitive):
        secret_in = secret_in.reveal()
    control = opts.pop("control_token", None)
    if isinstance(control, Sensitive):
        control = control.reveal()
    seed = opts.pop("seed", None)
    if "rng" not in opts and seed is not None:
        opts["rng"] = random.Random(seed)

    opts["hooks"] = Hooks.of(opts.get("hooks"))
    given: dict[str, Any] = {k: opts.pop(k) for k in ("base_url", "client_id") if k in opts}
    if secret_in:
        given["client_secret"] = secret_in
    base_url, client_id, secret, extra = chosen.settings(given, environ)
    opts.update(extra)
    if opts.get("drift", "report") not in DRIFT_MODES:
        raise ConfigError(f"drift {opts['drift']!r} is not allowed; allowed: {', '.join(DRIFT_MODES)}")
    if opts.get("jwe_alg", JWE_ALGS[0]) not in JWE_ALGS:
        raise ConfigError(f"jwe_alg {opts['jwe_alg']!r} is not allowed; allowed: {', '.join(JWE_ALGS)}")
    return Config(
        profile=chosen,
        base_url=base_url.rstrip("/") if base_url else None,
        client_id=client_id,
        client_secret=Sensitive(secret, label="client_secret"),
        control_token=Sensitive(control, label="control_token") if control else None,
        **opts,
    )
