"""Names a module resolves on first use (PEP 562), defined in another module that is imported
only then: ``kit.models``' results (:mod:`kit._results`), ``kit.sim.state``'s kept records
(:mod:`kit.sim.records`). Importing the name, pickling and ``dir()`` work as for a name the
module defines itself; the class's ``__module__`` says which module documents it.

    >>> __getattr__, __dir__ = resolved_from("kit._results", {"Card"}, globals())  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any


def resolved_from(
    source: str, names: Iterable[str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the module whose globals are ``namespace``: each of
    ``names`` is read from the module ``source`` on first use, then kept in ``namespace``."""
    known = frozenset(names)

    def __getattr__(name: str) -> Any:
        if name not in known:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *known})

    return __getattr__, __dir__
