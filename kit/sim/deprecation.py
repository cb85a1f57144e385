"""The ``Deprecation`` headers of the legacy token endpoints (A03), under the versions that
deprecate them (change 1).

Every answer from a deprecated endpoint's path, whatever the method, gets its ``Deprecation``
header (and the POST's ``Link``, ``kit.sim.headers.deprecation_headers``), errors and 405s
included, under an API version that deprecates the legacy endpoints (``kit.sim.versions``).
``ServiceHeaders`` (``kit.sim.middleware``) asks :class:`Deprecations` once a request's version
is known and sets what it answers on the way out.
"""

from __future__ import annotations

from kit.sim import versions
from kit.sim.headers import DEPRECATED, deprecation_headers

__all__ = ["Deprecations"]

_NONE: dict[str, str] = {}


class Deprecations:
    """The deprecation headers of an answer, for the versions ``served`` (A27)."""

    def __init__(self, served: tuple[str, ...]) -> None:
        #: Whether a version deprecates the legacy token endpoints (change 1), asked once.
        self._deprecating = {v: versions.legacy_deprecated(v) for v in served}

    def headers(self, method: str, path: str, version: str) -> dict[str, str]:
        """The headers an answer to ``method path`` carries under ``version`` (A03); empty for
        any other path or a version that deprecates nothing. The caller does not change them."""
        if path in DEPRECATED and self._deprecating.get(version, False):
            return deprecation_headers(method, path)
        return _NONE
