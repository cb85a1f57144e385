"""Partner API kit: a client, a simulator (``kit.sim``) and notebook regression runs.

The client's public surface is small::

    import kit
    api = kit.connect("sim")                 # or kit.connect("sandbox")
    api.sessions.create("anonymous")
    account = api.accounts.create()

Errors live in :mod:`kit.errors` (``kit.errors.by_code``), webhook verification for
partners' own servers in :mod:`kit.webhooks` (``kit.webhooks.verify``).

``__all__`` is the whole of ``kit``'s own names; other public modules are imported by name
(``import kit.models``, ``kit.register``, ``kit.sim``, ``kit.simulate``, ``kit.widgets``,
``kit.lab``, ``kit.regress``: docs/api.md, "The public API"). No other attribute resolves: a
submodule is reached by importing it, never through ``kit.<name>``.

The names below are loaded on first use (PEP 562), so ``import kit.sim`` (``kit serve``, the
crypto workers) loads none of the client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kit import _lazy

if TYPE_CHECKING:
    from kit import errors, webhooks
    from kit._client import Client, connect
    from kit._hooks import Hooks
    from kit._profiles import Profile, SandboxProfile, SimProfile
    from kit._sensitive import Sensitive
    from kit._version import __version__ as __version__
    from kit.errors import ApiError, KitError
    from kit.models import Money

__all__ = [
    "ApiError",
    "Client",
    "Hooks",
    "KitError",
    "Money",
    "Profile",
    "SandboxProfile",
    "Sensitive",
    "SimProfile",
    "connect",
    "errors",
    "webhooks",
]

#: Each public name → the module that defines it (a module itself when the name is the module).
_WHERE = {
    "ApiError": "kit.errors",
    "Client": "kit._client",
    "Hooks": "kit._hooks",
    "KitError": "kit.errors",
    "Money": "kit.models",
    "Profile": "kit._profiles",
    "SandboxProfile": "kit._profiles",
    "Sensitive": "kit._sensitive",
    "SimProfile": "kit._profiles",
    "connect": "kit._client",
    "errors": "kit.errors",
    "webhooks": "kit.webhooks",
    "__version__": "kit._version",
}


__getattr__, __dir__ = _lazy.resolved_from(_WHERE, _WHERE, globals(), listed=[*__all__, "__version__"])
