"""Against a partner sandbox (``-p profile=sandbox``): one partner token for the whole run.

The token is fetched once, before any kernel starts ("about once per day", the wire contract),
with the client credentials of the environment (:data:`SANDBOX_ENV`), through the kit's one
token exchange (:func:`kit._auth.fetch_token`), and handed to the kernels as
:data:`ACCESS_TOKEN_ENV` — never as a parameter, which papermill would write into every
executed notebook.

Example::

    >>> token = fetch_partner_token()  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from kit import _env as env
from kit.regress.model import RegressError

__all__ = ["ACCESS_TOKEN_ENV", "SANDBOX_ENV", "fetch_partner_token", "tls_environ"]

#: The variables a sandbox run needs: base URL, client id, client secret.
SANDBOX_ENV: tuple[str, str, str] = (env.BASE_URL, env.CLIENT_ID, env.CLIENT_SECRET)
#: Where the kernels find the token.
ACCESS_TOKEN_ENV = env.ACCESS_TOKEN


def fetch_partner_token(
    environ: Mapping[str, str] | None = None,
    *,
    transport: Any = None,
    timeout: float = 10.0,
    choices: str | None = None,
) -> str:
    """Fetch one partner access token with the client credentials of the environment.

    ``POST /oauth/accesstoken`` on the base URL of :data:`kit._env.BASE_URL`, form
    ``grant_type=client_credentials``, HTTP Basic with :data:`kit._env.CLIENT_ID` /
    :data:`kit._env.CLIENT_SECRET` (:func:`kit._auth.fetch_token`), or in the form when the
    dialect file ``choices`` says so (A01). ``transport`` is an optional ``httpx`` transport
    (tests use ``httpx.MockTransport``); without one, the TLS files of the environment
    (``PARTNER_API_CLIENT_CERT``…, :class:`kit._tls.TlsFiles`) are used.

    Example::

        >>> token = fetch_partner_token()  # doctest: +SKIP

    Raises:
        RegressError: a variable is missing (all missing ones are named), a TLS file cannot be
            used, the service cannot be reached (a TLS failure explained), or it refuses (the
            OAuth ``error`` code is named; never a secret).
    """
    variables = os.environ if environ is None else environ
    missing = [name for name in SANDBOX_ENV if not variables.get(name)]
    if missing:
        raise RegressError(
            "-p profile=sandbox needs the environment variables " + ", ".join(missing) + " (set them in "
            "the environment, never as -p parameters)"
        )
    from kit._auth import TOKEN_PATH, fetch_token
    from kit._choices import dialect
    from kit._http import http_client
    from kit._sensitive import Sensitive
    from kit._tls import TlsFiles
    from kit.errors import ApiError, ConfigError, KitError

    base_url, client_id, secret = (variables[name] for name in SANDBOX_ENV)
    url = base_url.rstrip("/") + TOKEN_PATH
    try:
        files = TlsFiles.resolve({}, variables)
        http = http_client(transport=transport, tls=files, timeout=timeout)
    except ConfigError as exc:
        raise RegressError(exc.message) from None
    try:
        with http:
            secret_value = Sensitive(secret, label="client_secret")
            spoken = dialect(choices)
            grant = fetch_token(
                base_url, client_id, secret_value, timeout=timeout, http=http, tls=files, dialect=spoken
            )
    except ApiError as exc:
        failed = f"HTTP {exc.status} ({exc.code})"
        raise RegressError(f"the partner token request to {url} failed: {failed}") from None
    except KitError as exc:  # the service cannot be reached: name the cause, never a secret
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        why = f" ({exc.hint})" if exc.hint and exc.hint != type(exc).hint else ""  # a TLS failure explained
        failed = f"{type(cause).__name__}{why}"
        raise RegressError(f"cannot fetch the partner token from {url}: {failed}") from None
    from kit import _log

    if _log.AUTH.isEnabledFor(logging.INFO):
        _log.token_fetched(client_id, grant.expires_in, again=False)
    return grant.access_token.reveal()


def tls_environ(
    client_cert: str | None, client_key: str | None, ca_bundle: str | None
) -> dict[str, str] | None:
    """The environment with ``kit regress --client-cert``, ``--client-key`` and ``--ca-bundle``
    set in it as their variables (``None``: none given, the process's own stands): the run
    checks the files and hands the kernels the variables, never parameters.

        >>> tls_environ(None, None, "ca.pem")[env.CA_BUNDLE]
        'ca.pem'
    """
    given = {env.CLIENT_CERT: client_cert, env.CLIENT_KEY: client_key, env.CA_BUNDLE: ca_bundle}
    chosen = {name: value for name, value in given.items() if value}
    return {**os.environ, **chosen} if chosen else None
