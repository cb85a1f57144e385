"""The kit's one idiom for loading later, in three helpers: every lazy module, every
``sys.modules`` change and every regular expression compiled on first use go through them.

- :func:`resolved_from`: names a module resolves on first use (PEP 562), defined in another module
  that is imported only then: ``kit``'s public names, ``kit.models``' results
  (:mod:`kit._results`), ``kit.sim.state``'s kept records (:mod:`kit.sim.records`). Importing the
  name, pickling and ``dir()`` work as for a name the module defines itself.
- :func:`imported_past`: a block in which some modules are not what ``import`` finds: one another
  package would import and the kit never uses reads as not installed (the package goes on
  without it), or a stand-in takes a module's place while a block runs. What was there is put
  back after the block.
- :class:`LazyPattern`: a regular expression compiled when it is first searched, for checks most
  texts never reach (the PII shapes behind their quick tests, a state file's bounds): a process
  that never needs it never pays ``re.compile`` for it, at import least of all.

    >>> __getattr__, __dir__ = resolved_from("kit._results", {"Card"}, globals())  # doctest: +SKIP
    >>> with imported_past("httpx._main"):                                          # doctest: +SKIP
    ...     import httpx
"""

from __future__ import annotations

import contextlib
import importlib
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import ModuleType
from typing import Any

__all__ = ["LazyPattern", "attribute", "imported_past", "resolved_from"]


def attribute(source: str, name: str) -> Any:
    """``name`` of the module ``source``, importing it first; the module itself when ``source``
    is the module ``name`` names (``attribute("kit.errors", "errors")``)."""
    module = importlib.import_module(source)
    return module if source.rpartition(".")[2] == name else getattr(module, name)


def resolved_from(
    source: str | Mapping[str, str],
    names: Iterable[str],
    namespace: dict[str, Any],
    *,
    listed: Iterable[str] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the module whose globals are ``namespace``: each of
    ``names`` is read on first use from the module ``source`` (or ``source[name]``: a mapping of
    each name to its module; a module itself where its last part is the name), then kept in
    ``namespace``; any other name is an ``AttributeError``.

    ``dir()`` lists the module's names and the resolved ones; with ``listed``, only those and the
    module's dunders (a package whose imports are not its API).
    """
    known = frozenset(names)
    where: Callable[[str], str] = source.__getitem__ if isinstance(source, Mapping) else lambda _: source
    shown = None if listed is None else frozenset(listed)

    def __getattr__(name: str) -> Any:
        if name not in known:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = attribute(where(name), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        if shown is not None:
            return sorted({*shown, *(n for n in namespace if n.startswith("__"))})
        return sorted({*namespace, *known})

    return __getattr__, __dir__


@contextlib.contextmanager
def imported_past(*names: str, stand_in: ModuleType | None = None) -> Iterator[None]:
    """For this block, each module of ``names`` is not what ``import`` finds.

    Without ``stand_in``: each one not imported yet reads as not installed (its import raises
    ``ImportError``, which a package that imports it optionally takes as "not installed"); one
    already imported is left as it is. With ``stand_in``: that module is found under each name,
    imported or not. After the block every name is as it was (a later import works as usual).
    """
    saved: dict[str, ModuleType | None] = {}
    for name in names:
        if stand_in is None and name in sys.modules:
            continue
        saved[name] = sys.modules.get(name)
        sys.modules[name] = stand_in  # type: ignore[assignment]  # None: an ImportError
    try:
        yield
    finally:
        for name, before in saved.items():
            if name in sys.modules and sys.modules[name] is stand_in:
                if before is None:
                    del sys.modules[name]
                else:
                    sys.modules[name] = before


class LazyPattern:
    """A regular expression compiled on its first search or match, then kept: ``pattern`` is
    its source, as for a compiled one.

    >>> LazyPattern(r"[0-9]{4}").search("born 1950").group()
    '1950'
    """

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled expression (compiled now, the first time)."""
        if self._compiled is None:
            self._compiled = re.compile(self.pattern)
        return self._compiled

    def search(self, string: str, pos: int = 0) -> re.Match[str] | None:
        """``re.Pattern.search``."""
        return self.compiled.search(string, pos)

    def fullmatch(self, string: str) -> re.Match[str] | None:
        """``re.Pattern.fullmatch``."""
        return self.compiled.fullmatch(string)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r})"
