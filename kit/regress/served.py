"""Which API versions a server serves, asked before notebook 13 walks one (A27).

The spec says how a version is named (version.1) but not how a request selects one (version.2):
the kit's choice is a request header, answered in the same header (A27). A server may choose
otherwise, so a request for a version proves it served only when the answer names that version.
:func:`probe` sends one and reads the answer three ways: refused (400 ``unsupported-api-version``,
or a list of the versions served without it: the server serves only others), served (the answer
names the version asked for), or neither (the answer names another version, or none: the server
serves one version, or selects versions in a way the kit does not know).

    >>> Probe("1.1.0", answered="1.2.0-20221215").why().split(":")[0]
    'this server answered a 1.1.0 request under 1.2.0-20221215'
    >>> Probe("1.1.0").why().split(":")[0]
    'this server answered a 1.1.0 request naming no version'
    >>> Probe("1.1.0", refused=True).why()
    'this server refuses 1.1.0 (A27)'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from kit._headers import HEADERS
from kit._http import http_client
from kit._tls import TlsFiles

__all__ = ["Probe", "probe", "serves"]


@dataclass(frozen=True)
class Probe:
    """What a server answered to a request for ``version``: ``refused`` it as a version it does
    not serve, or answered under ``answered`` (the version its answer names; ``None``: none)."""

    version: str
    answered: str | None = None
    refused: bool = False

    @property
    def served(self) -> bool:
        """Whether the server served ``version``: not refused, and answered under it."""
        return not self.refused and self.answered == self.version

    def why(self) -> str:
        """Why ``version`` is not served, in one sentence without its full stop (``""``: it is)."""
        if self.served:
            return ""
        if self.refused:
            return f"this server refuses {self.version} (A27)"
        under = f"under {self.answered}" if self.answered else "naming no version"
        return (
            f"this server answered a {self.version} request {under}: it serves one version, "
            "or selects versions in a way the kit does not know; A27"
        )


def _refused(resp: httpx.Response, version: str) -> bool:
    """Whether ``resp`` refuses ``version`` the way A27 chose: 400 ``unsupported-api-version``, or
    a 400 whose ``supported`` list leaves the version out."""
    if resp.status_code != 400:
        return False
    try:
        body = resp.json()
    except ValueError:
        return False
    if not isinstance(body, Mapping):
        return False
    listed = body.get("supported")
    unlisted = isinstance(listed, list) and version not in listed
    return body.get("code") == "unsupported-api-version" or unlisted


def probe(
    base_url: str,
    version: str,
    header: str | None = None,
    *,
    transport: httpx.BaseTransport | None = None,
    tls: TlsFiles | None = None,
) -> Probe:
    """Ask the server at ``base_url`` for ``version``: ``GET /openapi.json`` naming it in
    ``header`` (the version header in the server's dialect, A27's own by default), and the
    answer read in the same header; sent as a client's calls are (:func:`kit._http.http_client`:
    through ``transport``, else with the TLS files ``tls``)."""
    header = header or HEADERS.api_version
    with http_client(base_url, transport=transport, tls=tls) as client:
        resp = client.get("/openapi.json", headers={header: version})
    if _refused(resp, version):
        return Probe(version, refused=True)
    return Probe(version, answered=resp.headers.get(header))


def serves(
    base_url: str,
    version: str,
    header: str | None = None,
    *,
    transport: httpx.BaseTransport | None = None,
    tls: TlsFiles | None = None,
) -> bool:
    """Whether the server at ``base_url`` serves ``version``: it answers a request naming it
    under it (:func:`probe`). A server that serves only 1.2.0-20221215 (A27's ``versions``
    overlaid) refuses 1.1.0 with 400 ``unsupported-api-version`` before routing; one that selects
    versions otherwise answers it under another version, or names none."""
    return probe(base_url, version, header, transport=transport, tls=tls).served
