"""The partner API's operations as the simulator serves them: the table of
:mod:`kit._operations`, read without importing a route module.

Each :class:`Operation` names its key, the module that declares its endpoint, its methods and
its default path (and what it rests on: :mod:`kit._operations`). ``kit.sim.table`` builds the
route table of a simulator from it (per personality, which may give an operation another path:
``Personality.paths()``), checks it (collisions, the one precedence rule) and imports a module
on the first request for one of its operations: the first token and session of
``kit.connect("sim")`` load only ``oauth`` and ``sessions``. A module declares each of its
operations by key (``kit.sim.table.Routes``); the table refuses a key it does not know, and a
module that leaves one of its keys undeclared.

The order of :data:`OPERATIONS` is the order of the OpenAPI document's operations; matching
does not depend on it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from kit._operations import ALL_METHODS, BY_KEY, MODULES, OPERATIONS, Operation, served

__all__ = ["ALL_METHODS", "BY_KEY", "MODULES", "OPERATIONS", "Operation", "partner_module", "served"]


def partner_module(name: str) -> ModuleType:
    """The partner route module ``name`` of :data:`MODULES`, imported on first call."""
    if name not in MODULES:
        raise KeyError(name)
    return importlib.import_module(f"{__name__}.{name}")
