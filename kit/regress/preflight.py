"""What ``kit regress`` checks before any kernel starts: the expected choice overlay, the
profiles the jobs run on (and the servers they reach), the sandbox fixtures file, the files of
mutual TLS."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from kit import _choices as choices
from kit import _env as env
from kit import _fixtures as fixtures
from kit._profiles import Profile, SimProfile, profile_class
from kit._tls import TlsFiles
from kit.errors import ConfigError, FixturesError
from kit.regress.matrix import Job
from kit.regress.model import RegressError
from kit.regress.scanner import SecretNames

__all__ = ["expected_choices", "fixture_values", "profiles", "servers", "tls_files"]


def expected_choices(path: str | os.PathLike[str]) -> str:
    """The overlay file the kernels expect, validated now (its absolute path).

    Raises:
        RegressError: the file is not a valid overlay (entry and key named).
    """
    try:
        choices.load(path)
    except choices.ChoicesError as exc:
        raise RegressError(f"--choices: {exc}") from None
    return str(Path(path).resolve())


def secret_names(path: str) -> SecretNames:
    """The names the dialect file at ``path`` gives the secret fields, for the leak scan."""
    from kit import _dialect

    return SecretNames.of(_dialect.Dialect.of(choices.load(path)))


def profiles(jobs: Sequence[Job]) -> list[type[Profile]]:
    """The profile classes the jobs run on (a notebook's default is ``sim``).

    Raises:
        RegressError: an unknown profile name.
    """
    try:
        return [profile_class(str(job.params.get("profile", "sim"))) for job in jobs]
    except ConfigError as exc:
        raise RegressError(exc.message) from None


def servers(jobs: Sequence[Job], environment: Mapping[str, str]) -> dict[str, str]:
    """Each profile the jobs run on, by name, and the server its notebooks reach, for the
    reports: the simulator each kernel embeds for ``sim``; else the environment's base URL
    (``PARTNER_API_BASE_URL``) as scheme, host, port and path — never its user name, password,
    query or fragment.

    Raises:
        RegressError: an unknown profile name.
    """
    found = {}
    for profile in profiles(jobs):
        if issubclass(profile, SimProfile):
            found[profile.name] = "the simulator embedded in each kernel"
        else:
            address = _address(environment.get(env.BASE_URL, ""))
            found[profile.name] = address or f"{env.BASE_URL} not set to a URL"
    return found


def _address(url: str) -> str:
    """``url``'s scheme, host, port and path (``""`` when it is not a URL)."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port
    except ValueError:  # a port out of range, a bracket left open
        return ""
    if not parts.scheme or not host:
        return ""
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}{f':{port}' if port else ''}{parts.path}"


def fixture_values(environment: Mapping[str, str], kernel_env: dict[str, str]) -> list[str]:
    """The sandbox fixtures' values (leaks wherever they appear), the file checked now and
    named to the kernels; none when ``PARTNER_API_SANDBOX_FIXTURES`` is not set.

    Raises:
        RegressError: the file cannot be used (the entry named, never a value).
    """
    try:
        found = fixtures.from_env(environment)
    except FixturesError as exc:
        raise RegressError(exc.message) from None
    if found is None:
        return []
    kernel_env[env.SANDBOX_FIXTURES] = str(Path(environment[env.SANDBOX_FIXTURES]).resolve())
    return found.values()


def tls_files(environment: Mapping[str, str]) -> dict[str, str]:
    """The kernels' variables of mutual TLS (``PARTNER_API_CLIENT_CERT``…, :mod:`kit._tls`) from
    ``environment``: the files checked now (the key against the certificate) and named by their
    absolute paths, since a kernel runs in the notebooks' folder; the key's passphrase as given.

    Raises:
        RegressError: a file is missing or unusable, or the key does not match (the setting named).
    """
    try:
        files = TlsFiles.resolve({}, environment)
        if files is not None:
            files.context()
    except ConfigError as exc:
        raise RegressError(exc.message) from None
    return {} if files is None else files.environ()
